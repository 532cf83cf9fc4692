"""Streaming a session log back: header first, then every committed record, in order.

A line is committed once its newline is on disk; a torn or damaged line is skipped with a
warning, never raised, but a newer schema version raises :class:`UnsupportedVersionError`.
Memory is bounded by the longest line. A log is opened without following links and must be a
regular file with one name, whose header names the session asked for (else
:class:`SessionLogUnsafeError`).
Repeated tool records are skipped, so a copied line never draws a card twice.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Final

from acp_sidecar import jsonfast
from acp_sidecar.store.codec import (
    NewerVersion,
    RecordDecodeError,
    decode_line,
    decode_record,
    lines_in_doubt,
)
from acp_sidecar.store.errors import (
    CorruptLogError,
    SessionLogUnsafeError,
    UnsupportedVersionError,
)
from acp_sidecar.store.records import (
    SCHEMA_VERSION,
    HeaderRecord,
    Record,
    ToolCallRecord,
    ToolResultRecord,
)

logger = logging.getLogger(__name__)


def read_header(stream: BinaryIO, path: Path) -> HeaderRecord:
    """The header from the first line of ``stream`` (positioned at the start).

    Raises:
        CorruptLogError: the first line is missing, torn, or not a header.
        UnsupportedVersionError: the header is from a newer schema version.
    """
    line = stream.readline()
    if not line:
        raise CorruptLogError(path, "the log is empty")
    if not line.endswith(b"\n"):
        raise CorruptLogError(path, "the header line is torn (a crash while creating it)")
    try:
        record = decode_line(line)
    except NewerVersion as exc:
        raise UnsupportedVersionError(path, exc.found, SCHEMA_VERSION, 1) from None
    except RecordDecodeError as exc:
        raise CorruptLogError(path, str(exc)) from None
    if not isinstance(record, HeaderRecord):
        raise CorruptLogError(path, "the first record is not a header")
    return record


CHECK_BLOCK = 1 << 16
"""How many bytes :meth:`SessionLog.check_versions` reads at once (memory stays bounded by a
block plus the longest line)."""
READ_BUFFER: Final = 1 << 16
"""The buffer a log is read through: at the default 8 KiB, lines a few KiB long make it refill
(and copy a line's pieces) for most lines of a replay."""
_CALL: Final = 1
_RESULT: Final = 2
"""The tool records of a call that :meth:`SessionLog.__iter__` has read, as bits."""


def open_regular(path: Path, flags: int) -> int:
    """A descriptor on the regular file at ``path``, never through a symbolic link, nor on a
    file with another name (a hard link: what is written under either name is the other's).

    Raises:
        FileNotFoundError: there is no file at ``path``.
        SessionLogUnsafeError: ``path`` is a symbolic link, not a regular file, or a file
            with more than one name, or this process may not open it so.
    """
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SessionLogUnsafeError(
                path, "is a symbolic link; the store does not follow links"
            ) from None
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            action = "write" if flags & (os.O_WRONLY | os.O_RDWR) else "read"
            raise SessionLogUnsafeError(
                path, f"cannot be opened to {action} it by this process ({exc.strerror})"
            ) from None
        raise
    try:
        check_regular(path, os.fstat(fd))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_regular(path: Path, status: os.stat_result) -> None:
    """Refuse a log (``status``: its ``fstat`` or ``lstat``) that is not a regular file with
    one name: :class:`SessionLogUnsafeError`."""
    if stat.S_ISLNK(status.st_mode):
        raise SessionLogUnsafeError(path, "is a symbolic link; the store does not follow links")
    if not stat.S_ISREG(status.st_mode):
        raise SessionLogUnsafeError(path, "is not a regular file")
    if status.st_nlink > 1:
        raise SessionLogUnsafeError(
            path,
            f"has {status.st_nlink} names (a hard link); the store does not use a log that "
            "another name can change",
        )


def check_session_id(header: HeaderRecord, session_id: str | None, path: Path) -> None:
    """Refuse a log whose header names another session than its file name does."""
    if session_id is not None and header.session_id != session_id:
        raise SessionLogUnsafeError(
            path, f"holds session {header.session_id!r}, not {session_id!r} as its name says"
        )


class SessionLog:
    """A session log opened for reading: :attr:`header`, then iterate the other records.

    Use it as a context manager (or call :meth:`close`); it holds an open file. Iterating
    streams the rest of the file once.

    Raises (on open):
        FileNotFoundError: there is no file at ``path``.
        SessionLogUnsafeError: as :func:`open_regular`, or the header names another session
            than ``session_id`` (when given).
        CorruptLogError, UnsupportedVersionError: as :func:`read_header`.
    """

    def __init__(self, path: str | os.PathLike[str], session_id: str | None = None) -> None:
        self.path = Path(path)
        fd = open_regular(self.path, os.O_RDONLY)
        self._file: BinaryIO = open(fd, "rb", buffering=READ_BUFFER)  # noqa: SIM115 - closed by close()
        try:
            self.header = read_header(self._file, self.path)
            check_session_id(self.header, session_id, self.path)
        except BaseException:
            self._file.close()
            raise
        self._iterated = False

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the file (iteration stops)."""
        self._file.close()

    def fileno(self) -> int:
        """The log's descriptor, for reads by position (``os.pread``), which leave the
        iteration where it is."""
        return self._file.fileno()

    def check_versions(self) -> None:
        """Read the rest of the log once; raise for a record of a newer version anywhere.

        The log is read in blocks of :data:`CHECK_BLOCK` bytes (a longer line whole); each
        line's ``"v"`` alone is read (:func:`~acp_sidecar.store.codec.lines_in_doubt`), and
        only a line that leaves it in doubt is decoded. The log can be iterated afterwards.

        Raises:
            UnsupportedVersionError: a record is from a newer schema version.
        """
        if self._iterated:
            raise RuntimeError("check the versions before iterating the log")
        start = self._file.tell()
        read, seek = self._file.read, self._file.seek
        number = 1  # the lines before this block (the header's included)
        size = CHECK_BLOCK
        while block := read(size):
            end = block.rfind(b"\n") + 1  # the block's whole lines end here
            if end == 0:
                if len(block) < size:
                    break  # no newline before the end: a torn tail, dropped when iterating
                seek(-len(block), os.SEEK_CUR)
                size *= 2  # a line longer than a block: read it whole
                continue
            size = CHECK_BLOCK
            if end < len(block):
                seek(end - len(block), os.SEEK_CUR)  # the line begun here starts the next block
            number = self._check_lines(block, end, number)
        seek(start)

    def _check_lines(self, block: bytes, end: int, number: int) -> int:
        """:meth:`check_versions` for the whole lines of ``block[:end]``, the first of them
        line ``number + 1``; returns the number of the last."""
        lines, doubtful = lines_in_doubt(block, end)
        for index, line in doubtful:
            try:
                decode_line(line)
            except NewerVersion as exc:
                raise UnsupportedVersionError(
                    self.path, exc.found, SCHEMA_VERSION, number + index + 1
                ) from None
            except RecordDecodeError:
                pass  # damage: skipped when iterating
        return number + lines

    def __iter__(self) -> Iterator[Record]:
        """The records after the header, in order (see the module docstring)."""
        if self._iterated:
            raise RuntimeError("a SessionLog can be iterated once; open the log again")
        self._iterated = True
        return self._records()

    def _records(self) -> Iterator[Record]:
        path = self.path
        number = 1
        damaged: tuple[int, str] | None = None  # reported once we know whether it was last
        # Which tool records of each call were read (_CALL, _RESULT): one table rather than a
        # set of each, as it is the one thing here that grows with the log (a third the size).
        read: dict[str, int] = {}
        fast_loads = jsonfast.fast_loads()  # decode_line's first reader, bound for the loop
        for line in self._file:
            number += 1
            if damaged is not None:
                logger.warning(
                    "session log %s line %d: skipped a damaged record (%s)", path, *damaged
                )
                damaged = None
            if not line.endswith(b"\n"):
                damaged = (number, "no newline")
                break
            try:
                try:
                    data = fast_loads(line)
                except (ValueError, RecursionError):  # decode_line words it the stdlib's way
                    record = decode_line(line)
                else:
                    record = decode_record(data)
            except NewerVersion as exc:
                raise UnsupportedVersionError(path, exc.found, SCHEMA_VERSION, number) from None
            except RecordDecodeError as exc:
                damaged = (number, str(exc))
                continue
            # Records are exact classes (no subclass to miss): ``type() is`` tests are cheaper.
            # Only tool records are deduplicated: repeated text cannot be told from a prompt
            # retried after a crash, or from one message written in identical pieces (a log
            # released mid-turn).
            # Most records are neither: one test each, and a result's call id read past the
            # property that reads it.
            if type(record) is ToolCallRecord:
                kind, call_id = _CALL, record.call_id
            elif type(record) is ToolResultRecord:
                kind, call_id = _RESULT, record.result.call_id
            elif type(record) is HeaderRecord:
                logger.warning("session log %s line %d: skipped a second header", path, number)
                continue
            else:
                yield record
                continue
            marks = read.get(call_id, 0)
            if marks & kind:
                logger.warning(
                    "session log %s line %d: skipped a repeated %s of call %r",
                    path,
                    number,
                    "call" if kind == _CALL else "result",
                    call_id,
                )
                continue
            read[call_id] = marks | kind
            yield record
        if damaged is not None:
            logger.warning(
                "session log %s line %d: dropped a torn last record, written when the "
                "process stopped mid-write (%s)",
                path,
                *damaged,
            )
