"""Running one shell command in its own session, and keeping what it prints bounded.

When :func:`run_command` returns or raises, nothing the command started is left running —
unless a :class:`Keeper` took the :class:`RunningCommand`: then it owns the processes and
must stop them (:meth:`RunningCommand.stop`). Awaiting ``on_output`` is the back-pressure.
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import os
import shutil
import signal as signals
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

import attrs

from acp_sidecar.tools.builtin.errors import SpawnError
from acp_sidecar.tools.builtin.shell.reaper import CallProcesses
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.environment import child_environment
from acp_sidecar.tools.listeners import Listeners

logger = logging.getLogger(__name__)

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
    kept: int | None = None
    """The job number the command's processes were kept as (they still run)."""


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
        self.on_output = on_output
        """Where the output goes (replaced when the command is kept as a job)."""
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
                await self.on_output(text)
                # Time spent waiting for a slow client is not silence from the pipe: it must
                # not eat into the drain's allowance, or the end of the output would be lost.
                waited = loop.time() - now
                quiet_since += waited
                if self._drain_deadline is not None:
                    self._drain_deadline += waited
            if given_up or not chunk:
                return


class OutputTail:
    """The last :attr:`limit` characters a command printed (a kept job's last lines)."""

    def __init__(self, limit: int = 16 * 1024) -> None:
        self.limit = limit
        self._text = ""

    def feed(self, text: str) -> None:
        self._text = (self._text + text)[-self.limit :]

    def lines(self, count: int) -> list[str]:
        """The last ``count`` lines (a line cut by the limit is shown as it is)."""
        return self._text.splitlines()[-count:] if count > 0 else []


class RunningCommand:
    """A started command: its shell, its processes (the reaper's bookkeeping), its output
    pipe and the task moving that output along."""

    def __init__(self, call: CallProcesses, process: asyncio.subprocess.Process) -> None:
        self.call = call
        self.process = process
        self.exited: asyncio.Future[int] = asyncio.ensure_future(process.wait())
        self.tail = OutputTail()
        """Everything it printed, bounded: what a job shows after its call returned."""
        self._transport: asyncio.BaseTransport | None = None
        self._pump: _Pump | None = None
        self._pumping: asyncio.Future[None] | None = None
        self._released = False
        self._followers: Listeners[Callable[[str], Awaitable[None]]] = Listeners()

    @property
    def pid(self) -> int:
        """The shell's pid: the number of the command's session and process group."""
        return self.process.pid

    async def _connect(self, read_fd: int, on_output: Callable[[str], Awaitable[None]]) -> None:
        loop = asyncio.get_running_loop()
        # The pipe is ours (not the subprocess transport's), so it can be closed even while a
        # process that escaped still holds its other end.
        stream = asyncio.StreamReader(limit=_READ_CHUNK, loop=loop)
        self._transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream, loop=loop), os.fdopen(read_fd, "rb", 0)
        )
        tail = self.tail

        async def both(text: str) -> None:
            tail.feed(text)
            await on_output(text)

        self._pump = _Pump(stream, both)
        self._pumping = asyncio.ensure_future(self._pump.run())

    def detach(self) -> None:
        """Send the output only to :attr:`tail` and the followers from now on (the call that
        showed it ended)."""
        if self._pump is not None:
            self._pump.on_output = self._after_call

    def follow(self, on_output: Callable[[str], Awaitable[None]]) -> Callable[[], None]:
        """Also send the output after :meth:`detach` to ``on_output`` (awaited: the
        back-pressure); returns what stops it. A follower that raises is dropped."""
        return self._followers.add(on_output)

    async def _after_call(self, text: str) -> None:
        self.tail.feed(text)
        for follower in self._followers:
            try:
                await follower(text)
            except Exception:
                logger.exception("a follower of a kept command's output failed; dropped")
                self._followers.discard(follower)

    async def finished(self) -> int | None:
        """The shell's return code once it exited and its output was read (waiting at most
        :data:`DRAIN_S` more while something that outlived it holds the pipe); ``None`` when
        it was released without being reaped."""
        try:
            returncode = await asyncio.shield(self.exited)
        except asyncio.CancelledError:
            if self.exited.cancelled():
                return None
            raise
        if self._pumping is not None:
            await asyncio.wait({self._pumping}, timeout=DRAIN_S)
        return returncode

    async def alive(self) -> bool:
        """Whether any of its processes still runs (a scan, off the loop)."""
        return await asyncio.to_thread(self.call.any_live)

    async def stop(self, grace: float) -> int:
        """End every process (SIGTERM, SIGKILL after ``grace``), reap them, read the rest of
        the output; the shell's return code. Then :meth:`release`."""
        try:
            await self.call.end(grace)
            returncode = await self.exited
            if self._pump is not None and self._pumping is not None:
                self._pump.drain()
                await self._pumping
            return returncode
        finally:
            self.release()

    def release(self) -> None:
        """SIGKILL whatever :meth:`stop` did not end, stop reading (idempotent)."""
        if self._released:
            return
        self._released = True
        self.call.kill_now()
        for task in (self._pumping, self.exited):
            if task is not None and not task.done():
                task.cancel()
        if self._transport is not None:
            self._transport.close()


class Keeper(Protocol):
    """Who may take a running call's processes as a job (the session's job table)."""

    background: bool
    """Keep them as soon as they outlive the shell (a ``background`` call), not only when
    :meth:`wanted` answers."""

    async def wanted(self) -> None:
        """Returns when the call is to be kept now (``/keep``, or a background call's start
        window ending); never, if it is not."""
        ...

    async def take(self, running: RunningCommand) -> int:
        """Own ``running`` from now on; its job number."""
        ...


async def start_command(
    command: str, *, cwd: str, on_output: Callable[[str], Awaitable[None]]
) -> RunningCommand:
    """Start ``command`` in a session of its own, its output going to ``on_output``.

    Raises:
        SpawnError: the shell could not be started.
    """
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
    running = RunningCommand(call, process)
    try:
        await running._connect(read_fd, on_output)
    except BaseException:
        running.release()
        raise
    return running


async def run_command(
    command: str,
    *,
    cwd: str,
    timeout_s: float,
    signal: CancelSignal | None,
    on_output: Callable[[str], Awaitable[None]],
    keeper: Keeper | None = None,
) -> CommandOutcome:
    """Run ``command`` to its end, its timeout, or ``signal``, or until ``keeper`` takes it;
    see the module invariants.

    Raises:
        SpawnError: the shell could not be started.
    """
    running = await start_command(command, cwd=cwd, on_output=on_output)
    exited = running.exited
    stopped = asyncio.ensure_future(signal.wait()) if signal is not None else None
    wanted = asyncio.ensure_future(keeper.wanted()) if keeper is not None else None
    timed_out = cancelled = False
    kept = False
    try:
        waiting = {task for task in (exited, stopped, wanted) if task is not None}
        done, _ = await asyncio.wait(
            waiting, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
        if keeper is not None and (stopped is None or stopped not in done):
            if wanted in done and exited not in done:
                kept = True
            elif exited in done and keeper.background:
                kept = await running.alive()  # a daemon outlived the shell
        if kept:
            assert keeper is not None
            running.detach()
            return CommandOutcome(None, None, kept=await keeper.take(running))
        if exited not in done:
            cancelled = stopped is not None and stopped in done
            timed_out = not cancelled
        returncode = await running.stop(TERM_GRACE_S)
    finally:
        if not kept:
            running.release()
        for task in (stopped, wanted):
            if task is not None and not task.done():
                task.cancel()
    if returncode < 0:
        try:
            name = signals.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        return CommandOutcome(None, name, timed_out, cancelled)
    return CommandOutcome(returncode, None, timed_out, cancelled)
