"""Streaming a session log back: header first, then every committed record, in order.

Invariants:
- A line is committed once its ``\\n`` is on disk. The last line of a log without one — or a
  last line that does not decode — is a torn write from a crash: it is dropped with a
  warning. A damaged line with more lines after it is skipped with a warning. Either way,
  iteration goes on: damage never raises.
- A record from a newer schema version raises :class:`UnsupportedVersionError` (naming both
  versions) when it is reached; the header's version is checked when the log is opened,
  before any record is handed out.
- Memory is bounded by the longest line: the file is read line by line, never whole.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from acp_sidecar.store.codec import NewerVersion, RecordDecodeError, decode_line
from acp_sidecar.store.errors import CorruptLogError, UnsupportedVersionError
from acp_sidecar.store.records import SCHEMA_VERSION, HeaderRecord, Record

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


class SessionLog:
    """A session log opened for reading: :attr:`header`, then iterate the other records.

    Use it as a context manager (or call :meth:`close`); it holds an open file. Iterating
    streams the rest of the file once.

    Raises (on open):
        FileNotFoundError: there is no file at ``path``.
        CorruptLogError, UnsupportedVersionError: as :func:`read_header`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._file: BinaryIO = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        try:
            self.header = read_header(self._file, self.path)
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

    def __iter__(self) -> Iterator[Record]:
        """The records after the header, in order (see the module invariants)."""
        if self._iterated:
            raise RuntimeError("a SessionLog can be iterated once; open the log again")
        self._iterated = True
        return self._records()

    def _records(self) -> Iterator[Record]:
        path = self.path
        number = 1
        damaged: tuple[int, str] | None = None  # reported once we know whether it was last
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
                record = decode_line(line)
            except NewerVersion as exc:
                raise UnsupportedVersionError(path, exc.found, SCHEMA_VERSION, number) from None
            except RecordDecodeError as exc:
                damaged = (number, str(exc))
                continue
            if isinstance(record, HeaderRecord):
                logger.warning("session log %s line %d: skipped a second header", path, number)
                continue
            yield record
        if damaged is not None:
            logger.warning(
                "session log %s line %d: dropped a torn last record, written when the "
                "process stopped mid-write (%s)",
                path,
                *damaged,
            )
