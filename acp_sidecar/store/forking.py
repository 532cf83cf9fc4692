"""Forking a stored session: a new log holding the parent's records up to its last completed
step.

Invariants:
- The parent's log is only read (no lock, no claim, no write): its bytes stay as they were.
- Copied records are the parent's lines byte for byte (fields this module does not know
  included), except ``directories`` changes (a fork's roots are its request's), damaged lines
  and second headers (which a reader skips anyway).
- A completed step, read from the records: a turn end; a tool result that leaves no call of its
  turn open (the end of a tool batch); or any record between turns. What follows the last one
  (a model response being streamed, a tool batch still running) is left out, and a turn the cut
  leaves open gets a turn end (:data:`FORK_STOP_REASON`), so the fork's log is whole.
- The fork's log appears whole or not at all: written aside, then linked to its name, after
  the parent's before-images are shared with it (:func:`~acp_sidecar.store.blobs.share_blobs`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import BinaryIO, Final

from acp_sidecar.store.blobs import blobs_path, share_blobs
from acp_sidecar.store.codec import NewerVersion, RecordDecodeError, decode_line, encode_record
from acp_sidecar.store.errors import SessionExistsError, UnsupportedVersionError
from acp_sidecar.store.listing import shorten
from acp_sidecar.store.reader import SessionLog
from acp_sidecar.store.records import (
    SCHEMA_VERSION,
    DirectoriesChangeRecord,
    HeaderRecord,
    Record,
    ToolCallRecord,
    ToolResultRecord,
    TurnEndRecord,
    UserMessageRecord,
    timestamp_now,
    utc_now,
)
from acp_sidecar.store.scan import committed_size
from acp_sidecar.store.writer import fsync_directory

FORK_TITLE_PREFIX: Final = "Fork: "
"""What marks a fork's title: the parent's title follows."""

FORK_STOP_REASON: Final = "cancelled"
"""The stop reason of the turn end closing a turn the fork was cut in: the fork's copy of that
turn stopped there."""


def fork_title(parent_title: str | None) -> str | None:
    """A fork's title: its parent's, marked (``None``: the parent has none either)."""
    if parent_title is None:
        return None
    return shorten(f"{FORK_TITLE_PREFIX}{parent_title}")


class _Steps:
    """Follows records in log order and says where the last completed step ended."""

    def __init__(self) -> None:
        self.in_turn = False
        self.open_calls: set[str] = set()

    def completes(self, record: Record) -> bool:
        """Whether a completed step ends with ``record`` (see the module invariants)."""
        if type(record) is UserMessageRecord:
            self.in_turn = True
            self.open_calls.clear()
            return False
        if type(record) is TurnEndRecord:
            self.in_turn = False
            self.open_calls.clear()
            return True
        if type(record) is ToolCallRecord:
            self.open_calls.add(record.call_id)
            return not self.in_turn
        if type(record) is ToolResultRecord:
            self.open_calls.discard(record.call_id)
            return not self.open_calls
        return not self.in_turn


def write_fork(
    parent: Path,
    parent_id: str,
    target: Path,
    *,
    fork_id: str,
    cwd: str,
    additional_directories: tuple[str, ...],
    title: str | None,
    sync: bool,
) -> None:
    """Write the fork ``fork_id`` of the log at ``parent`` to ``target``: working in ``cwd``
    with ``additional_directories``, in the parent's mode, titled ``title``.

    Raises:
        SessionExistsError: ``target`` exists.
        SessionLogUnsafeError, CorruptLogError: as :class:`SessionLog` for the parent.
        UnsupportedVersionError: a parent record is newer (nothing is written).
        OSError: reading or writing failed (nothing is left at ``target``).
    """
    aside = target.with_name(f".{target.name}.fork")
    with SessionLog(parent, parent_id) as log:
        header = fork_header(fork_id, cwd, log.header, additional_directories, title)
        fd = log.fileno()
        end = committed_size(fd, os.fstat(fd).st_size)
        out = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(os.dup(fd), "rb") as stream, os.fdopen(out, "wb") as copy:
                cut, open_turn = _copy(stream, end, copy, header, parent)
                copy.truncate(cut)
                copy.seek(cut)
                if open_turn:
                    turn_end = TurnEndRecord(stop_reason=FORK_STOP_REASON)
                    copy.write(encode_record(turn_end, at=timestamp_now()))
                copy.flush()
                if sync:
                    os.fsync(copy.fileno())
            shared = share_blobs(parent, target)  # it removes what it made if it fails
            try:
                if sync and blobs_path(target).is_dir():
                    fsync_directory(blobs_path(target))
                os.link(aside, target)
            except BaseException as exc:
                if shared:
                    shutil.rmtree(blobs_path(target), ignore_errors=True)
                if isinstance(exc, FileExistsError):
                    raise SessionExistsError(header.session_id, target) from None
                raise
        finally:
            aside.unlink(missing_ok=True)
    if sync:
        fsync_directory(target.parent)


def _copy(
    stream: BinaryIO, end: int, copy: BinaryIO, header: HeaderRecord, parent: Path
) -> tuple[int, bool]:
    """Copy the parent's records after its header (see the module invariants); the size of
    ``copy`` at the last completed step, and whether that step leaves a turn open."""
    copy.write(encode_record(header, at=header.created_at))
    stream.seek(0)
    position = len(stream.readline())
    steps = _Steps()
    cut, open_turn = copy.tell(), False
    number = 1
    while position < end:
        line = stream.readline()
        position += len(line)
        number += 1
        try:
            record = decode_line(line)
        except NewerVersion as exc:
            raise UnsupportedVersionError(parent, exc.found, SCHEMA_VERSION, number) from None
        except RecordDecodeError:
            continue
        if type(record) is HeaderRecord:
            continue
        if type(record) is not DirectoriesChangeRecord:
            copy.write(line)
        if steps.completes(record):
            cut, open_turn = copy.tell(), steps.in_turn
    return cut, open_turn


def fork_header(
    fork_id: str,
    cwd: str,
    parent: HeaderRecord,
    additional_directories: tuple[str, ...],
    title: str | None,
) -> HeaderRecord:
    """The header of a fork of the session whose header is ``parent``: its mode (the copied
    mode changes follow it), the request's cwd and roots, now."""
    return HeaderRecord(
        session_id=fork_id,
        cwd=cwd,
        created_at=utc_now(),
        mode=parent.mode,
        additional_directories=additional_directories,
        title=title,
    )
