"""Serving ACP on the process's own stdin/stdout, logging, and shutdown.

Stdout is the wire: :func:`take_stdio` keeps private duplicates of fds 0 and 1, then points fd 1
at stderr and fd 0 at ``/dev/null``, so no ``print`` and no child process reaches the protocol.
Logs never go to the wire. Shutdown (end of stdin, SIGTERM/SIGHUP/SIGINT, stdout closed) returns
0 within :data:`SHUTDOWN_GRACE` plus :data:`FLUSH_TIMEOUT`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING

from acp_sidecar.server.framing import DEFAULT_LINE_LIMIT, WireReader, WireWriter

if TYPE_CHECKING:
    from collections.abc import Callable

    from acp_sidecar.server.app import AcpServer

logger = logging.getLogger(__name__)

SHUTDOWN_GRACE = 1.2
"""Seconds running turns and requests get to answer after shutdown begins."""
FLUSH_TIMEOUT = 0.4
"""Seconds the last answers get to leave the process."""
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def take_stdio() -> tuple[int, int]:
    """Keep fds 0 and 1 for the wire; returns ``(input_fd, output_fd)``."""
    sys.stdout.flush()
    wire_in = os.dup(0)
    wire_out = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:  # no stderr: stray output goes nowhere rather than onto the wire
        _point_at_devnull(1, os.O_WRONLY)
    _point_at_devnull(0, os.O_RDONLY)
    sys.stdout = sys.stderr
    return wire_in, wire_out


def _point_at_devnull(fd: int, flags: int) -> None:
    devnull = os.open(os.devnull, flags)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def configure_logging(level: str = "WARNING", log_file: str | None = None) -> None:
    """Log at ``level`` to stderr, or to ``log_file`` when given."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    handler: logging.Handler = logging.StreamHandler(sys.stderr)
    unopened: OSError | None = None
    if log_file:
        try:
            handler = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:  # logs go to stderr instead, and the first one says why
            unopened = exc
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(numeric)
    logging.getLogger("pygls").setLevel(numeric if numeric <= logging.DEBUG else logging.ERROR)
    if unopened is not None:
        root.error(
            "log_file %s cannot be opened (%s): logging to stderr", log_file, unopened.strerror
        )


async def serve(
    server: AcpServer,
    input_fd: int,
    output_fd: int,
    *,
    line_limit: int = DEFAULT_LINE_LIMIT,
    handle_signals: bool = True,
) -> int:
    """Serve ACP on the two descriptors (both are closed at the end); returns 0."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    wire = await WireWriter.open(output_fd, on_lost=stop.set)
    server.protocol.attach(wire)
    reader = await WireReader.open(
        input_fd,
        server.protocol.receive_line,
        lambda: server.protocol.receive_oversized_line(line_limit),
        lambda: server.protocol.held.after(stop.set),
        limit=line_limit,
    )
    # While the client is behind on our output, its answers and cancels are still acted on;
    # the rest is held, and reading stops only once the protocol holds its limit.
    server.protocol.held.pace(reader.pause, reader.resume)
    wire.on_backlog(server.protocol.held.backed_up, server.protocol.held.caught_up)
    signals: list[signal.Signals] = []
    # SIGHUP (the editor's terminal went away) is a request to stop, like SIGTERM.
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT) if handle_signals else ():
        with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals here
            loop.add_signal_handler(signum, stop.set)
            signals.append(signum)
    try:
        await stop.wait()
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)
        reader.close()
    logger.info("shutting down")
    await server.close(SHUTDOWN_GRACE)
    if not await wire.flush(FLUSH_TIMEOUT):
        logger.warning("the client did not read the last answers; closing anyway")
    wire.close()
    return 0


def run_stdio(
    make_server: Callable[[], AcpServer] | None = None,
    *,
    log_level: str = "WARNING",
    log_file: str | None = None,
) -> int:
    """Take over stdio and serve ACP on it until the client goes away; the exit status.

    ``make_server`` builds the server after stdio is taken over and logging is set up, so
    anything it prints or logs cannot reach the wire.
    """
    input_fd, output_fd = take_stdio()
    configure_logging(log_level, log_file)
    if make_server is None:
        from acp_sidecar.server.app import AcpServer

        server = AcpServer()
    else:
        server = make_server()
    with contextlib.suppress(KeyboardInterrupt):
        return asyncio.run(serve(server, input_fd, output_fd))
    return 0
