"""Starting a stdio MCP server's process ourselves (before the SDK is imported), and stopping it.

Invariants: a server gets a minimal environment (nothing of the sidecar's secrets), a process
group of its own, and a stderr pipe of ours (never our stdout, the wire). When
:meth:`ServerProcess.stop` returns, no member of its group is alive; it never raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from acp_sidecar.mcp.config import McpServerConfig, StdioServerConfig
from acp_sidecar.mcp.processes import KILL_WAIT_S, TERM_WAIT_S, end_group

logger = logging.getLogger(__name__)
stderr_log: Final = logging.getLogger("acp_sidecar.mcp.stderr")
"""Where the lines a stdio server writes to its stderr go (``[server] line``)."""

BASE_VARIABLES: Final = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
)
"""Variables of the sidecar's environment a stdio server inherits (plus every ``LC_*``)."""

EOF_WAIT_S: Final = 2.0
"""How long a server gets to exit after its stdin closes, before SIGTERM (the MCP SDK's own
grace), unless a stop is given a shorter ``grace``."""
STDERR_WAIT_S: Final = 0.5
"""How long the last stderr lines get to arrive after the group is gone."""
MAX_STDERR_LINE: Final = 4000
"""A longer stderr line is logged cut to this many characters."""
PIPE_LIMIT: Final = 1 << 20
"""The read buffer of the server's stdout and stderr pipes."""


def server_environment(
    config: StdioServerConfig, source: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The whole environment a stdio server starts with (see the module invariants)."""
    source = os.environ if source is None else source
    env = {
        name: value
        for name, value in source.items()
        if (name in BASE_VARIABLES or name.startswith("LC_")) and not value.startswith("()")
    }
    env.update(config.env)
    return env


class ServerProcess:
    """A running stdio server's process: its pipes, its group, its exit (see the module
    invariants). Made by :func:`launch`."""

    def __init__(self, name: str, process: asyncio.subprocess.Process) -> None:
        assert process.stdin and process.stdout and process.stderr
        self.name: Final = name
        self.pid: Final = process.pid
        """Also the id of its process group."""
        self.stdin: Final = process.stdin
        self.stdout: Final = process.stdout
        self._process = process
        self._exited = asyncio.Event()
        self._on_exit: list[Callable[[], None]] = []
        self._stderr = asyncio.create_task(_log_stderr(name, process.stderr))
        self._stopping: asyncio.Task[None] | None = None
        self._pidfd: int | None = None
        self._poll: asyncio.Task[None] | None = None
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # no pidfds: poll the return code instead
            self._poll = asyncio.create_task(self._poll_exit())
        else:
            asyncio.get_running_loop().add_reader(self._pidfd, self._exit_seen)

    @property
    def exited(self) -> bool:
        """Whether the server's own process (the group's leader) has exited."""
        return self._exited.is_set()

    def on_exit(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Calls ``callback()`` once, from the event loop, when the server's own process
        exits (even if a grandchild still holds its stdout, so no EOF comes); returns a
        function that stops watching."""
        if self.exited:
            asyncio.get_running_loop().call_soon(callback)
            return _nothing
        self._on_exit.append(callback)

        def unwatch() -> None:
            with contextlib.suppress(ValueError):
                self._on_exit.remove(callback)

        return unwatch

    def _exit_seen(self) -> None:
        self._unwatch_pidfd()
        self._exited.set()
        callbacks, self._on_exit = self._on_exit, []
        for callback in callbacks:
            try:
                callback()
            except Exception:
                logger.exception("MCP server %r: an exit callback raised", self.name)

    def _unwatch_pidfd(self) -> None:
        pidfd, self._pidfd = self._pidfd, None
        if pidfd is not None:
            asyncio.get_running_loop().remove_reader(pidfd)
            os.close(pidfd)

    async def _poll_exit(self) -> None:
        while self._process.returncode is None:
            await asyncio.sleep(0.1)
        self._exit_seen()

    async def stop(self, grace: float | None = None) -> None:
        """Ends the server and its whole group (see the module invariants). Without
        ``grace`` it gets :data:`EOF_WAIT_S` after its stdin closes, then
        :data:`TERM_WAIT_S` after SIGTERM; with ``grace`` (a shutdown in a hurry) the whole
        stop takes about ``grace`` seconds at most: half of it after stdin closes, the rest
        after SIGTERM, then SIGKILL."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop(grace))
        with contextlib.suppress(Exception):
            await asyncio.shield(self._stopping)

    async def _stop(self, grace: float | None) -> None:
        eof_wait = EOF_WAIT_S if grace is None else grace / 2
        term_wait = TERM_WAIT_S if grace is None else grace / 2
        self.stdin.close()
        # A server blocked writing its stdout cannot see its stdin close: read it empty.
        drain = asyncio.create_task(_drain(self.stdout))
        group_ended = False
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._exited.wait(), eof_wait)
            await end_group(
                self.pid,
                term_wait=term_wait,
                kill_wait=KILL_WAIT_S if grace is None else min(KILL_WAIT_S, 0.2),
            )
            group_ended = True
            # The last stderr lines, up to EOF (a straggler is cut off).
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.shield(self._stderr),
                    STDERR_WAIT_S if grace is None else min(STDERR_WAIT_S, 0.1),
                )
        finally:
            if not group_ended:
                # Cut short (cancelled, e.g. by the program's exit): the transport's close
                # below SIGKILLs only the leader, so its group goes first.
                with contextlib.suppress(OSError):
                    os.killpg(self.pid, signal.SIGKILL)
            for task in (drain, self._stderr, self._poll):
                if task is not None:
                    task.cancel()
            if self._process.returncode is not None:
                self._exit_seen()
            else:
                self._unwatch_pidfd()
            transport = getattr(self._process, "_transport", None)
            if transport is not None:  # no public close: its pipes and child watch end here
                transport.close()


async def launch(config: StdioServerConfig) -> ServerProcess:
    """Starts ``config``'s server (see the module invariants); raises OSError when it
    cannot be started (no such command, not executable)."""
    process = await asyncio.create_subprocess_exec(
        config.command,
        *config.args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=server_environment(config),
        start_new_session=True,
        limit=PIPE_LIMIT,
    )
    return ServerProcess(config.name, process)


class Launches:
    """Stdio servers started ahead of their connections: each connection takes its own;
    :meth:`aclose` stops whatever none took."""

    def __init__(self, started: Mapping[str, ServerProcess | OSError]) -> None:
        self._started = dict(started)

    def take(self, name: str) -> ServerProcess | OSError | None:
        """The process started for server ``name`` (or why it could not be), now the
        caller's to stop; None when none was started for it."""
        return self._started.pop(name, None)

    async def aclose(self, grace: float | None = None) -> None:
        """Stops every process no connection took."""
        started, self._started = self._started, {}
        await asyncio.gather(
            *(p.stop(grace) for p in started.values() if isinstance(p, ServerProcess))
        )


async def launch_all(configs: Sequence[McpServerConfig]) -> Launches:
    """Starts every stdio server of ``configs`` now (the first of each name); a failure to
    start is kept for its connection to report."""
    started: dict[str, ServerProcess | OSError] = {}
    try:
        for config in configs:
            if isinstance(config, StdioServerConfig) and config.name not in started:
                try:
                    started[config.name] = await launch(config)
                except OSError as error:
                    started[config.name] = error
    except BaseException:
        await Launches(started).aclose(grace=0.5)
        raise
    return Launches(started)


async def _log_stderr(server: str, pipe: asyncio.StreamReader) -> None:
    """Logs each line the server writes to its stderr, until EOF."""
    pending = b""
    while chunk := await pipe.read(65536):
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            _log_line(server, line)
        if len(pending) > MAX_STDERR_LINE:
            _log_line(server, pending)
            pending = b""
    if pending:
        _log_line(server, pending)


def _log_line(server: str, line: bytes) -> None:
    text = line.decode("utf-8", "replace").rstrip("\r")
    stderr_log.info("[%s] %s", server, text[:MAX_STDERR_LINE])


async def _drain(pipe: asyncio.StreamReader) -> None:
    with contextlib.suppress(OSError):
        while await pipe.read(65536):
            pass


def _nothing() -> None:
    return None


__all__ = [
    "BASE_VARIABLES",
    "Launches",
    "ServerProcess",
    "launch",
    "launch_all",
    "server_environment",
    "stderr_log",
]
