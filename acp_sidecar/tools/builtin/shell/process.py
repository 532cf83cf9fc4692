"""Running one shell command in its own session, and keeping what it prints bounded.

When :func:`run_command` returns or raises, nothing the command started is left running.
Awaiting ``on_output`` is the back-pressure.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import shutil
import signal as signals
from collections import deque
from collections.abc import Awaitable, Callable

import attrs

from acp_sidecar.tools.builtin.errors import SpawnError
from acp_sidecar.tools.builtin.shell.reaper import CallProcesses
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.environment import child_environment

TERM_GRACE_S = 1.0
"""Between SIGTERM and SIGKILL. Below the registry's cancel grace, so a cancelled call still
returns its own result (output so far, the signal)."""
DRAIN_S = 0.5
"""Once the command's processes are gone, the pipe is read until EOF, or until it has been
silent this long (a process that escaped may hold it open)..."""
DRAIN_MAX_S = 5.0
"""… or for at most this long (that process may keep writing)."""
_READ_CHUNK = 64 * 1024
_POLL_S = 0.02


class HeadTail:
    """The first ``head`` and last ``tail`` characters of a stream, and how many were cut."""

    def __init__(self, head: int, tail: int) -> None:
        self._head_cap = head
        self._tail_cap = tail
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.total = 0
        """Characters fed so far."""

    def feed(self, text: str) -> str:
        """Add ``text``; returns the part of it that went into the head."""
        self.total += len(text)
        taken = ""
        room = self._head_cap - self._head_len
        if room > 0:
            taken = text[:room]
            self._head.append(taken)
            self._head_len += len(taken)
            text = text[room:]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            while self._tail_len - len(self._tail[0]) >= self._tail_cap:
                self._tail_len -= len(self._tail.popleft())
        return taken

    @property
    def cut(self) -> int:
        """Characters that are neither in the head nor in the tail."""
        return max(0, self.total - self._head_len - self._tail_cap)

    def text(self, note: Callable[[int], str]) -> str:
        """Head, then ``note(cut)`` if anything was cut, then tail."""
        head = "".join(self._head)
        tail = "".join(self._tail)
        cut = self.cut
        if not cut:
            return head + tail
        return head + note(cut) + tail[len(tail) - self._tail_cap :]


@attrs.frozen
class CommandOutcome:
    """How a command ended."""

    exit_code: int | None
    """The exit status, when the process exited."""
    signal: str | None
    """The signal that ended it (``"SIGTERM"``, …), when one did."""
    timed_out: bool = False
    cancelled: bool = False


def shell() -> str:
    """The shell commands run in."""
    return shutil.which("bash") or "/bin/sh"


class _Pump:
    """Moves a pipe's output to ``on_output`` until EOF — or, once :meth:`drain` was called,
    until the pipe is silent for :data:`DRAIN_S` or :data:`DRAIN_MAX_S` have passed."""

    def __init__(
        self, reader: asyncio.StreamReader, on_output: Callable[[str], Awaitable[None]]
    ) -> None:
        self._reader = reader
        self._on_output = on_output
        self._drain_deadline: float | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def drain(self) -> None:
        self._drain_deadline = asyncio.get_running_loop().time() + DRAIN_MAX_S

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        quiet_since = loop.time()
        chunk: bytes | None
        while True:
            try:
                # A bounded wait, so a drain is noticed; a cancelled read loses no data.
                chunk = await asyncio.wait_for(self._reader.read(_READ_CHUNK), _POLL_S * 5)
            except TimeoutError:
                chunk = None
            now = loop.time()
            deadline = self._drain_deadline
            given_up = deadline is not None and (
                now > deadline or (chunk is None and now - quiet_since > DRAIN_S)
            )
            if chunk is None and not given_up:
                continue
            if chunk:
                quiet_since = now
            text = self._decoder.decode(chunk or b"", final=given_up or not chunk)
            if text:
                await self._on_output(text)
                # Time spent waiting for a slow client is not silence from the pipe: it must
                # not eat into the drain's allowance, or the end of the output would be lost.
                waited = loop.time() - now
                quiet_since += waited
                if self._drain_deadline is not None:
                    self._drain_deadline += waited
            if given_up or not chunk:
                return


async def run_command(
    command: str,
    *,
    cwd: str,
    timeout_s: float,
    signal: CancelSignal | None,
    on_output: Callable[[str], Awaitable[None]],
) -> CommandOutcome:
    """Run ``command`` to its end, its timeout, or ``signal``; see the module invariants.

    Raises:
        SpawnError: the shell could not be started.
    """
    loop = asyncio.get_running_loop()
    call = CallProcesses()
    read_fd, write_fd = os.pipe()
    try:
        process = await asyncio.create_subprocess_exec(
            shell(),
            "-c",
            command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            cwd=cwd,
            env=call.environment(child_environment()),
            start_new_session=True,
        )
    except OSError as exc:
        os.close(read_fd)
        raise SpawnError(f"Could not start the shell: {exc.strerror or exc}.") from exc
    finally:
        os.close(write_fd)
    call.started(process.pid)
    pump: asyncio.Future[None] | None = None
    exited = asyncio.ensure_future(process.wait())
    stopped = asyncio.ensure_future(signal.wait()) if signal is not None else None
    transport: asyncio.BaseTransport | None = None
    timed_out = cancelled = False
    try:
        # The pipe is ours (not the subprocess transport's), so it can be closed even while a
        # process that escaped still holds its other end.
        stream = asyncio.StreamReader(limit=_READ_CHUNK, loop=loop)
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream, loop=loop), os.fdopen(read_fd, "rb", 0)
        )
        pumping = _Pump(stream, on_output)
        pump = asyncio.ensure_future(pumping.run())
        waiting = {exited} if stopped is None else {exited, stopped}
        done, _ = await asyncio.wait(
            waiting, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
        if exited not in done:
            cancelled = stopped is not None and stopped in done
            timed_out = not cancelled
        await call.end(TERM_GRACE_S)
        returncode = await exited
        pumping.drain()
        await pump
    finally:
        call.kill_now()
        for task in (pump, exited, stopped):
            if task is not None and not task.done():
                task.cancel()
        if transport is not None:
            transport.close()
    if returncode < 0:
        try:
            name = signals.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return CommandOutcome(None, name, timed_out, cancelled)
    return CommandOutcome(returncode, None, timed_out, cancelled)
