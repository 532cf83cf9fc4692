"""Appending to one session log: whole-line writes, an exclusive lock, an fsync policy.

Invariants:
- Each record is one ``os.write`` of its whole line (``O_APPEND``); only agent text being
  coalesced is buffered, and is written before any other record, so records keep their order.
- A failed write truncates back to the last whole line (:class:`StoreWriteError`); reopening a
  log cuts off a torn last line first. Nothing is ever glued onto a partial line.
- ``flock(LOCK_EX | LOCK_NB)`` is held from open to close; a second writer gets
  :class:`SessionLockedError`. Opening checks the file as the reader does.
- ``fsync``: ``"turn"`` (default), ``"record"`` or ``"never"``. Not thread-safe.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, TypeAlias, get_args

from acp_sidecar.store.claims import SessionClaim
from acp_sidecar.store.codec import encode_record
from acp_sidecar.store.errors import (
    SessionExistsError,
    SessionLockedError,
    StoreWriteError,
    WriterClosedError,
)
from acp_sidecar.store.reader import check_session_id, open_regular, read_header
from acp_sidecar.store.records import (
    AgentMessageRecord,
    AgentThoughtRecord,
    ConfigChangeRecord,
    DirectoriesChangeRecord,
    GapRecord,
    HeaderRecord,
    ModeChangeRecord,
    NoticeRecord,
    Record,
    ToolCallRecord,
    ToolResultRecord,
    TurnEndRecord,
    UserMessageRecord,
    timestamp_now,
)
from acp_sidecar.store.scan import committed_size
from acp_sidecar.tools.json_values import FrozenDict, freeze_json
from acp_sidecar.tools.result import ToolExecutionResult

logger = logging.getLogger(__name__)

FsyncPolicy: TypeAlias = Literal["turn", "record", "never"]
"""When the writer forces the log to stable storage: ``"turn"`` after the header, at the end
of every turn that did something and on close; ``"record"`` after every record as well;
``"never"`` leaves it to the OS. A reopened log's first sync covers what an earlier writer left."""

FSYNC_POLICIES: Final[tuple[FsyncPolicy, ...]] = get_args(FsyncPolicy)

_OPEN_FLAGS: Final = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | os.O_NOFOLLOW


def lock_log(fd: int, path: Path) -> None:
    """Take the log's writer lock on ``fd``, or raise :class:`SessionLockedError`."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise SessionLockedError(path) from None
        raise


def fsync_directory(directory: Path) -> None:
    """Make the entries of ``directory`` durable (a file created or removed in it)."""
    fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_NOT_WORK: Final = (UserMessageRecord, TurnEndRecord)
"""The records that alone do not make a turn worth a sync: an empty turn holds no work of the
agent's, only the prompt the editor itself shows. Its records are in the kernel; the next sync
takes them to disk, so only a crash of the machine before it can lose them."""


@functools.lru_cache(maxsize=16)
def _turn_end_head(stop_reason: str) -> bytes:
    """The line of a turn end without its time and closing brace: it depends on the stop
    reason alone, one of a handful, and every turn writes one (encoding it afresh was a tenth
    of an empty turn's cost)."""
    line = encode_record(TurnEndRecord(stop_reason=stop_reason))
    return line[: -len(b"}\n")]


def _turn_end_line(stop_reason: str) -> bytes:
    """The line of a turn end now: :func:`encode_record`'s, time included."""
    return b'%s,"t":"%s"}\n' % (
        _turn_end_head(stop_reason),
        timestamp_now().encode("ascii"),
    )


class SessionWriter:
    """The one appender of a session log (see the module invariants).

    Get one from :meth:`create` (a new log) or :meth:`reopen` (continue a stored session);
    close it (or use it as a context manager) to flush pending text, sync and unlock.
    """

    def __init__(
        self, path: Path, fd: int, header: HeaderRecord, size: int, fsync: FsyncPolicy
    ) -> None:
        """Internal: use :meth:`create` or :meth:`reopen`."""
        if fsync not in FSYNC_POLICIES:
            raise ValueError(f"fsync policy must be one of {FSYNC_POLICIES}, not {fsync!r}")
        self.path: Final = path
        """The log file."""
        self.header: Final = header
        """The log's header."""
        self.fsync: Final[FsyncPolicy] = fsync
        """The fsync policy."""
        self._fd: int | None = fd
        self._size = size
        self._synced_size = size
        """What :attr:`_size` was at the last sync."""
        self._work_unsynced = False
        """Whether a record other than a prompt or a turn end was appended since the last
        sync (an empty turn is not synced at its end: :data:`_NOT_WORK`)."""
        self._pending_kind: type[AgentMessageRecord] | type[AgentThoughtRecord] | None = None
        self._pending: list[str] = []
        self._pending_id: str | None = None
        """The message id of the pending text (a new id ends the message before it)."""
        self._claim: SessionClaim | None = None

    @classmethod
    def create(
        cls, path: Path, header: HeaderRecord, *, fsync: FsyncPolicy = "turn"
    ) -> SessionWriter:
        """Create the log at ``path`` (and its directory) and write ``header``.

        Raises:
            SessionExistsError: a file already exists at ``path``.
            StoreWriteError: the header could not be written (no file is left behind).
        """
        if fsync not in FSYNC_POLICIES:
            raise ValueError(f"fsync policy must be one of {FSYNC_POLICIES}, not {fsync!r}")
        line = encode_record(header, at=header.created_at)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(path, _OPEN_FLAGS | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise SessionExistsError(header.session_id, path) from None
        try:
            lock_log(fd, path)
            writer = cls(path, fd, header, 0, fsync)
            writer._write(line)
            if fsync != "never":
                os.fsync(fd)
                fsync_directory(path.parent)
                writer._synced_size = writer._size
        except BaseException:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        return writer

    @classmethod
    def reopen(
        cls, path: Path, *, fsync: FsyncPolicy = "turn", session_id: str | None = None
    ) -> SessionWriter:
        """Open the existing log at ``path`` to append to it (after ``session/load``).

        A torn last line (a crash mid-write) is cut off, with a warning, before anything is
        appended.

        Raises:
            FileNotFoundError: no log at ``path``.
            SessionLockedError: another process is writing to it.
            SessionLogUnsafeError: a link or not a regular file, not readable and writable by
                this process, or its header names another session than ``session_id``.
            CorruptLogError, UnsupportedVersionError: its header is unreadable or newer.
        """
        if fsync not in FSYNC_POLICIES:
            raise ValueError(f"fsync policy must be one of {FSYNC_POLICIES}, not {fsync!r}")
        # Read and write through one descriptor, so the file checked is the file appended to.
        fd = open_regular(path, os.O_RDWR | os.O_APPEND)
        try:
            lock_log(fd, path)
            if os.fstat(fd).st_nlink == 0:
                # Deleted (``session/delete``) between our open and our lock: appending to it
                # would write to a file no one can find again.
                raise FileNotFoundError(errno.ENOENT, "the session log was deleted", str(path))
            with os.fdopen(os.dup(fd), "rb") as stream:
                stream.seek(0)
                header = read_header(stream, path)
            check_session_id(header, session_id, path)
            size = os.fstat(fd).st_size
            committed = committed_size(fd, size)
            if committed != size:
                logger.warning(
                    "session log %s: cut off a torn last record (%d bytes) before appending",
                    path,
                    size - committed,
                )
                os.ftruncate(fd, committed)
                if fsync != "never":
                    os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        writer = cls(path, fd, header, committed, fsync)
        # What an earlier writer left may never have been synced (its policy, its crash): the
        # first sync of this one covers it too. Nor does this writer know what the turn it
        # continues did (a log is released mid-turn when every held log is busy): its first
        # turn end syncs.
        writer._synced_size = 0
        writer._work_unsynced = True
        return writer

    # -- records -------------------------------------------------------------------------

    def user_message(
        self,
        content: Sequence[Mapping[str, Any]],
        message_id: str | None = None,
        command: str | None = None,
    ) -> None:
        """Append a prompt: its ACP content blocks as JSON objects, and its message id;
        ``command``: the session command it ran (see :attr:`UserMessageRecord.command`).

        Raises:
            JsonValueError: a block is not lossless JSON (nothing is written).
        """
        blocks = _frozen_blocks(content)
        self.append(UserMessageRecord(content=blocks, message_id=message_id, command=command))

    def agent_text(self, chunk: str, message_id: str | None = None) -> None:
        """Add a chunk of the agent's message ``message_id`` (coalesced until it ends)."""
        self._buffer(AgentMessageRecord, chunk, message_id)

    def agent_thought(self, chunk: str, message_id: str | None = None) -> None:
        """Add a chunk of the agent's thought ``message_id`` (coalesced until it ends)."""
        self._buffer(AgentThoughtRecord, chunk, message_id)

    def end_message(self) -> None:
        """Write the pending agent message or thought now, as one record (if any text)."""
        self._check_open()
        if self._pending_kind is None:
            return  # nothing pending (text is only ever pending under a kind)
        kind, self._pending_kind = self._pending_kind, None
        text = "".join(self._pending)
        self._pending.clear()
        if kind is not None and text:
            self._append(kind(text=text, message_id=self._pending_id))

    def notice(
        self,
        text: str,
        severity: str | None = None,
        message_id: str | None = None,
        content: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """Append a notice: the sidecar's own word to the user, kept out of the model's
        history (the agent message being streamed is written first); ``severity``: see
        :attr:`NoticeRecord.severity`; ``message_id``: the message it was told in;
        ``content``: the blocks shown after its text (:attr:`NoticeRecord.content`)."""
        blocks = _frozen_blocks(content) if content else ()
        self.append(
            NoticeRecord(text=text, severity=severity, message_id=message_id, content=blocks)
        )

    def gap(self, reason: str) -> None:
        """Append a gap marker: records were lost before this point (``reason``: why)."""
        self.append(GapRecord(reason=reason))

    def tool_call(self, call_id: str, name: str, arguments: object) -> None:
        """Append a tool call (``arguments`` as parsed JSON; ``None`` if they were not JSON).

        Raises:
            JsonValueError: ``arguments`` is not lossless JSON (nothing is written).
        """
        self.append(ToolCallRecord(call_id=call_id, name=name, arguments=freeze_json(arguments)))

    def tool_result(self, result: ToolExecutionResult) -> None:
        """Append a call's result."""
        self.append(ToolResultRecord(result=result))

    async def record_call_event(
        self, call: ToolCallRecord, result: ToolExecutionResult | None
    ) -> None:
        """The bridge's ``EventSink``: the call when ``result`` is ``None``, else its result."""
        if result is None:
            self.append(call)
        else:
            self.tool_result(result)

    def mode_change(self, mode: str) -> None:
        """Append a switch to mode ``mode``."""
        self.append(ModeChangeRecord(mode=mode))

    def directories_change(self, additional_directories: Sequence[str]) -> None:
        """Append the session's new list of extra workspace roots (the whole list)."""
        self.append(DirectoriesChangeRecord(tuple(additional_directories)))

    def config_change(self, config_id: str, value: str) -> None:
        """Append a change of the config option ``config_id`` to ``value``."""
        self.append(ConfigChangeRecord(config_id=config_id, value=value))

    def end_turn(self, stop_reason: str) -> None:
        """Write pending text, then the turn end; sync under ``"turn"`` unless the turn was
        empty (:data:`_NOT_WORK`)."""
        self.end_message()
        self._write(_turn_end_line(stop_reason))
        if self.fsync == "record" or (self.fsync == "turn" and self._work_unsynced):
            self.sync()

    def append(self, record: Record) -> None:
        """Append any record but a header (pending agent text is written first).

        Raises:
            ValueError: ``record`` is a header, or a payload is not JSON (nothing is written).
            StoreWriteError: the write failed (the log is left at its last whole line).
            WriterClosedError: the writer was closed.
        """
        if isinstance(record, HeaderRecord):
            raise ValueError("a log has exactly one header, written when it is created")
        self.end_message()
        self._append(record)

    def sync(self) -> None:
        """Force everything appended so far to stable storage; nothing to do, and no disk
        flush, when nothing was appended since the last sync."""
        fd = self._check_open()
        if self._size == self._synced_size:
            return
        try:
            os.fsync(fd)
        except OSError as exc:
            raise StoreWriteError(self.path, f"fsync failed: {exc}") from exc
        self._synced_size = self._size
        self._work_unsynced = False

    # -- life cycle ----------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run."""
        return self._fd is None

    def release_on_close(self, claim: SessionClaim) -> None:
        """Release ``claim`` (the session's) when the writer closes."""
        self._claim = claim

    def close(self) -> None:
        """Write pending text, sync (unless ``"never"``), release the lock (and the claim,
        see :meth:`release_on_close`) and close.

        Idempotent. The descriptor is closed even if the final write or sync fails.
        """
        if self._fd is None:
            return
        try:
            self.end_message()
            if self.fsync != "never":
                self.sync()
        finally:
            fd, self._fd = self._fd, None
            os.close(fd)  # releases the flock
            if self._claim is not None:
                self._claim.release()

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- internals -----------------------------------------------------------------------

    def _check_open(self) -> int:
        if self._fd is None:
            raise WriterClosedError(self.path)
        return self._fd

    def _buffer(
        self,
        kind: type[AgentMessageRecord] | type[AgentThoughtRecord],
        chunk: str,
        message_id: str | None,
    ) -> None:
        self._check_open()
        if self._pending_kind is not kind or self._pending_id != message_id:
            self.end_message()
            self._pending_kind = kind
            self._pending_id = message_id
        if chunk:
            self._pending.append(chunk)

    def _append(self, record: Record) -> None:
        line = encode_record(record, at=timestamp_now())  # raises before anything is written
        self._write(line)
        if not isinstance(record, _NOT_WORK):
            self._work_unsynced = True
        if self.fsync == "record":
            self.sync()

    def _write(self, line: bytes) -> None:
        fd = self._check_open()
        try:
            written = os.write(fd, line)
            while written < len(line):  # a short write is completed before anything else
                written += os.write(fd, memoryview(line)[written:])
        except OSError as exc:
            try:
                os.ftruncate(fd, self._size)
            except OSError:
                logger.exception("session log %s: could not cut off a partial line", self.path)
            raise StoreWriteError(self.path, str(exc)) from exc
        self._size += len(line)


def _frozen_blocks(content: Sequence[Mapping[str, Any]]) -> tuple[FrozenDict, ...]:
    """ACP content blocks as a record holds them (raises ``JsonValueError`` for what is not
    lossless JSON, ``ValueError`` for a block that is not an object)."""
    frozen = freeze_json(list(content))
    assert isinstance(frozen, tuple)
    blocks = tuple(block for block in frozen if isinstance(block, FrozenDict))
    if len(blocks) != len(frozen):
        raise ValueError("every content block must be a JSON object")
    return blocks
