"""NDJSON framing on file descriptors: a bounded line reader and a whole-message writer.

Invariants:
- A line holds at most ``limit`` bytes: a longer one is reported once (``on_oversized``) and
  dropped as it arrives, never buffered. An ``on_line`` that raises costs that line only.
- Whole lines reach the wire in write order, from the event loop thread only: the lines of
  one loop turn in one ``write`` (:data:`WRITE_BATCH`), an answer
  (:meth:`WireWriter.write_now`) at once.
- Past :data:`WRITE_HIGH_WATER` bytes unread by the client the writer reports a backlog
  (:meth:`WireWriter.on_backlog`) and the server holds input, past its limit pausing the
  reader; while paused, the end of input is not seen either.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import stat
from collections.abc import Callable
from typing import BinaryIO, Protocol

logger = logging.getLogger(__name__)

DEFAULT_LINE_LIMIT = 64 * 1024 * 1024
"""The longest line the reader accepts (64 MiB, the newline not counted)."""

READ_CHUNK = 256 * 1024
WRITE_HIGH_WATER = 1024 * 1024
"""Output waiting for the client above which new requests are held (1 MiB)."""
WRITE_LOW_WATER = 256 * 1024
"""Output waiting for the client under which held requests are handled (256 KiB)."""
WRITE_BATCH = 64 * 1024
"""Bytes of gathered lines that are written at once rather than at the end of the loop's
turn (bounds what waits in the process on top of the pipe's own buffer)."""
PIPE_SIZE = 1024 * 1024
"""The buffer asked for on an output pipe (Linux, up to its unprivileged maximum): a replay or
a long stream fills it, and wakes the client and this process, once a MiB, not every 64 KiB."""
YIELD_EVERY = 256
"""A streaming sender yields to the event loop at least once in this many messages, so that
incoming messages (``session/cancel``) are read even while a driver streams without pause."""


class LineSplitter:
    """Cuts a byte stream into lines of at most ``limit`` bytes."""

    __slots__ = ("_discarding", "_limit", "_on_line", "_on_oversized", "_pending")

    def __init__(
        self,
        on_line: Callable[[bytes | bytearray], None],
        on_oversized: Callable[[], None],
        limit: int = DEFAULT_LINE_LIMIT,
    ) -> None:
        self._on_line = on_line
        self._on_oversized = on_oversized
        self._limit = limit
        self._pending = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> None:
        """Take the next chunk of the stream; calls ``on_line`` for each complete line."""
        start = 0
        while True:
            newline = data.find(b"\n", start)
            if newline < 0:
                break
            if self._discarding:
                self._discarding = False
            elif self._pending:
                if len(self._pending) + newline - start > self._limit:
                    self._refuse()
                    self._discarding = False
                else:
                    self._pending += data[start:newline]
                    line, self._pending = self._pending, bytearray()
                    self._deliver(line)
            elif newline - start > self._limit:
                self._refuse()
                self._discarding = False
            else:
                self._deliver(data[start:newline])
            start = newline + 1
        if start < len(data) and not self._discarding:
            if len(self._pending) + len(data) - start > self._limit:
                self._refuse()
            else:
                self._pending += data[start:] if start else data

    def feed_eof(self) -> None:
        """The stream ended: a last line without a newline still counts."""
        if self._pending and not self._discarding:
            line, self._pending = self._pending, bytearray()
            self._deliver(line)
        self._pending = bytearray()
        self._discarding = False

    def _deliver(self, line: bytes | bytearray) -> None:
        try:
            self._on_line(line)
        except Exception:
            logger.exception("handling a line failed")

    def _refuse(self) -> None:
        self._pending = bytearray()
        self._discarding = True
        try:
            self._on_oversized()
        except Exception:
            logger.exception("refusing an oversized line failed")


class _PipeReadProtocol(asyncio.Protocol):
    def __init__(self, splitter: LineSplitter, on_eof: Callable[[], None]) -> None:
        self._splitter = splitter
        self._on_eof = on_eof
        self.stopped = False

    def data_received(self, data: bytes) -> None:
        if not self.stopped:
            self._splitter.feed(data)

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            logger.debug("wire input lost: %r", exc)
        if not self.stopped:  # stopped by us: a partial last line is not a message
            self.stopped = True
            self._splitter.feed_eof()
            self._on_eof()


class WireReader:
    """Reads NDJSON lines from a file descriptor until end of file."""

    def __init__(
        self,
        transport: asyncio.ReadTransport | None,
        protocol: _PipeReadProtocol | None,
        task: asyncio.Task[None] | None,
        flowing: asyncio.Event,
    ) -> None:
        self._transport = transport
        self._protocol = protocol
        self._task = task
        self._flowing = flowing

    @classmethod
    async def open(
        cls,
        fd: int,
        on_line: Callable[[bytes | bytearray], None],
        on_oversized: Callable[[], None],
        on_eof: Callable[[], None],
        *,
        limit: int = DEFAULT_LINE_LIMIT,
    ) -> WireReader:
        """Start reading ``fd`` (the reader owns and closes it)."""
        loop = asyncio.get_running_loop()
        splitter = LineSplitter(on_line, on_oversized, limit)
        pipe = open(fd, "rb", buffering=0)  # noqa: SIM115 - the reader owns it until EOF
        flowing = asyncio.Event()
        flowing.set()
        if not is_pollable(fd):
            task = loop.create_task(
                _read_chunks(pipe, splitter, on_eof, flowing), name="wire-reader"
            )
            return cls(None, None, task, flowing)
        protocol = _PipeReadProtocol(splitter, on_eof)
        transport, _ = await loop.connect_read_pipe(lambda: protocol, pipe)
        return cls(transport, protocol, None, flowing)

    def pause(self) -> None:
        """Read nothing more until :meth:`resume` (the client is behind on our output)."""
        if self._flowing.is_set():
            logger.debug("the client is not reading; input paused")
        self._flowing.clear()
        if self._transport is not None:
            self._transport.pause_reading()

    def resume(self) -> None:
        """Read again after :meth:`pause`."""
        if not self._flowing.is_set():
            logger.debug("input resumed")
        self._flowing.set()
        if self._transport is not None:
            self._transport.resume_reading()

    def close(self) -> None:
        """Stop reading; nothing read from now on is dispatched."""
        if self._protocol is not None:
            self._protocol.stopped = True
        if self._transport is not None:
            self._transport.close()
        if self._task is not None:
            self._task.cancel()


def grow_pipe(fd: int) -> None:
    """Ask for a :data:`PIPE_SIZE` buffer on ``fd`` when it is a pipe; otherwise, or where
    the system refuses (another platform, over this user's limit), leave it as it is."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only
    if set_size is None or not stat.S_ISFIFO(os.fstat(fd).st_mode):
        return
    with contextlib.suppress(OSError):
        if fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) < PIPE_SIZE:
            fcntl.fcntl(fd, set_size, PIPE_SIZE)


def is_pollable(fd: int) -> bool:
    """Whether the event loop can watch ``fd`` (a pipe, a socket or a terminal)."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


async def _read_chunks(
    pipe: BinaryIO, splitter: LineSplitter, on_eof: Callable[[], None], flowing: asyncio.Event
) -> None:
    # Regular files and /dev/null cannot be polled: one background job reads large chunks.
    loop = asyncio.get_running_loop()
    fd = pipe.fileno()
    try:
        while True:
            await flowing.wait()
            chunk = await loop.run_in_executor(None, os.read, fd, READ_CHUNK)
            if not chunk:
                break
            splitter.feed(chunk)
    except OSError as exc:
        logger.debug("wire input lost: %r", exc)
    finally:
        with contextlib.suppress(OSError):
            pipe.close()
    splitter.feed_eof()
    on_eof()


class _Transport(Protocol):
    def write(self, data: bytes) -> None: ...
    def get_write_buffer_size(self) -> int: ...
    def is_closing(self) -> bool: ...
    def close(self) -> None: ...


class _PipeWriteProtocol(asyncio.BaseProtocol):
    def __init__(self, on_lost: Callable[[], None]) -> None:
        self._on_lost = on_lost
        self._resumed: asyncio.Future[None] | None = None
        self.paused = False
        self.lost = False
        self.on_high: Callable[[], None] | None = None
        self.on_low: Callable[[], None] | None = None

    def pause_writing(self) -> None:
        self.paused = True
        if self.on_high is not None:
            self.on_high()

    def resume_writing(self) -> None:
        self.paused = False
        if self._resumed is not None and not self._resumed.done():
            self._resumed.set_result(None)
        self._resumed = None
        if self.on_low is not None:
            self.on_low()

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            logger.debug("wire output lost: %r", exc)
        self.lost = True
        self.resume_writing()
        self._on_lost()

    async def wait_resumed(self) -> None:
        if self._resumed is None:
            self._resumed = asyncio.get_running_loop().create_future()
        await self._resumed


class _BlockingFileTransport:
    """For a wire that is a regular file: each write goes straight to the file."""

    def __init__(self, file: BinaryIO) -> None:
        self._file = file
        self._closed = False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._file.fileno(), view) :]

    def get_write_buffer_size(self) -> int:
        return 0

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._file.close()


class WireWriter:
    """Writes whole messages to the wire; ``drain`` applies the pipe's back-pressure."""

    def __init__(
        self, transport: _Transport | asyncio.WriteTransport, protocol: _PipeWriteProtocol | None
    ) -> None:
        self._transport = transport
        self._protocol = protocol
        self._since_yield = 0
        self._gathered: list[bytes] = []
        """Lines written in this turn of the loop, not yet handed to the transport."""
        self._gathered_bytes = 0

    @classmethod
    async def open(cls, fd: int, on_lost: Callable[[], None]) -> WireWriter:
        """Start writing to ``fd`` (the writer owns and closes it)."""
        loop = asyncio.get_running_loop()
        pipe = open(fd, "wb", buffering=0)  # noqa: SIM115 - the writer owns it
        if not is_pollable(fd):
            return cls(_BlockingFileTransport(pipe), None)
        grow_pipe(fd)
        protocol = _PipeWriteProtocol(on_lost)
        transport, _ = await loop.connect_write_pipe(lambda: protocol, pipe)
        transport.set_write_buffer_limits(high=WRITE_HIGH_WATER, low=WRITE_LOW_WATER)
        return cls(transport, protocol)

    def on_backlog(self, high: Callable[[], None], low: Callable[[], None]) -> None:
        """Call ``high`` when more than :data:`WRITE_HIGH_WATER` bytes wait for the client,
        and ``low`` when they drop under :data:`WRITE_LOW_WATER` again (or the wire is lost).
        A regular file never waits."""
        if self._protocol is not None:
            self._protocol.on_high = high
            self._protocol.on_low = low

    @property
    def closed(self) -> bool:
        """Whether the wire is gone (closed by us, or the reader went away)."""
        return self._transport.is_closing() or (self._protocol is not None and self._protocol.lost)

    def write(self, line: bytes) -> None:
        """Write one whole message (``line`` ends with its newline); on the loop's thread.

        The line is gathered with the others written in this turn of the loop and reaches
        the transport at its end (see the module invariants)."""
        gathered = self._gathered
        if not gathered:
            if self.closed:
                logger.debug("wire closed; dropped a message of %d bytes", len(line))
                return
            asyncio.get_running_loop().call_soon(self._write_gathered)
        gathered.append(line)
        self._gathered_bytes += len(line)
        if self._gathered_bytes >= WRITE_BATCH:
            self._write_gathered()

    def write_now(self, line: bytes) -> None:
        """Write one whole message now, after those gathered before it (an answer, which
        the client waits for: it would otherwise wait for the end of the loop's turn)."""
        if not self._gathered and self.closed:
            logger.debug("wire closed; dropped a message of %d bytes", len(line))
            return
        self._gathered.append(line)
        self._write_gathered()

    def _write_gathered(self) -> None:
        if not self._gathered:
            return  # written early (WRITE_BATCH, flush); the call scheduled is left over
        data = b"".join(self._gathered)
        self._gathered.clear()
        self._gathered_bytes = 0
        if self.closed:
            logger.debug("wire closed; dropped %d bytes of messages", len(data))
            return
        try:
            self._transport.write(data)
        except OSError as exc:
            logger.warning("writing to the wire failed: %s", exc)

    def must_drain(self) -> bool:
        """Whether :meth:`drain` would wait or yield now; when it would not, the message is
        counted as :meth:`drain` counts it, so a sender of many messages awaits ``drain``
        only when this says so and behaves as one that awaits it after every message."""
        protocol = self._protocol
        if protocol is not None and protocol.paused and not protocol.lost:
            return True
        if self._since_yield + 1 >= YIELD_EVERY:
            return True
        self._since_yield += 1
        return False

    async def drain(self) -> None:
        """Wait while the reader is behind; yield to the loop now and then regardless."""
        protocol = self._protocol
        if protocol is not None and protocol.paused and not protocol.lost:
            self._since_yield = 0
            await protocol.wait_resumed()
            return
        self._since_yield += 1
        if self._since_yield >= YIELD_EVERY:
            self._since_yield = 0
            await asyncio.sleep(0)

    async def flush(self, timeout: float) -> bool:
        """Wait until everything written has left the process; ``False`` on timeout."""
        self._write_gathered()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._transport.get_write_buffer_size() and not self.closed:
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.005)
        return True

    def close(self) -> None:
        """Close the wire (after :meth:`flush`; what is gathered is written first)."""
        self._write_gathered()
        if not self._transport.is_closing():
            self._transport.close()
