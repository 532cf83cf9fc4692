"""What a listing shows of one stored session, read cheaply; the cursors that page listings.

A summary never parses a whole log: the header and the lines up to the first prompt, the mtime,
and the extra roots of the last ``directories`` record, found by a byte search from the end. A
session is listed once prompted (clients create one for every new thread); before, it can only
be loaded by id. A string that is not one of our cursors is an :class:`InvalidCursorError`.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import attrs

from acp_sidecar.store.codec import NewerVersion, RecordDecodeError, decode_line
from acp_sidecar.store.errors import InvalidCursorError, StoreError
from acp_sidecar.store.paths import LOG_SUFFIX
from acp_sidecar.store.reader import SessionLog, open_regular
from acp_sidecar.store.records import (
    ConfigChangeRecord,
    DirectoriesChangeRecord,
    ModeChangeRecord,
    NoticeRecord,
    UserMessageRecord,
)
from acp_sidecar.store.scan import committed_size, last_line_with
from acp_sidecar.text import shorten as text_shorten

logger = logging.getLogger(__name__)

TITLE_MAX: Final = 80
"""The longest title, in characters (longer ones are cut at a word and end in ``…``)."""

DEFAULT_PAGE_SIZE: Final = 50
"""Sessions per listing page unless asked otherwise."""

_TITLE_SCAN_LINES: Final = 32
_DIRECTORIES_MARKER: Final = b'"type":"directories"'
_CURSOR_VERSION: Final = 2


@attrs.frozen
class SessionSummary:
    """What a listing shows of one stored session."""

    session_id: str
    """The session's id (the log's file name without ``.jsonl``)."""
    cwd: str
    """The session's absolute working directory (from the header)."""
    title: str | None
    """The header's title if it has one (a fork's), else the first user message's text,
    shortened; ``None`` before the first prompt."""
    created_at: datetime
    """When the session was created (UTC)."""
    updated_at: datetime
    """When its log last changed (the file's mtime, UTC)."""
    mode: str | None
    """The mode recorded in the header."""
    path: Path
    """The log file."""
    prompted: bool = True
    """Something happened in it after its creation: it was prompted (listings skip others)."""
    additional_directories: tuple[str, ...] = ()
    """The session's extra workspace roots now in force (the header's, or the last change's)."""


@attrs.frozen
class SessionPage:
    """One page of a listing."""

    sessions: tuple[SessionSummary, ...]
    """The page's sessions, newest first."""
    next_cursor: str | None
    """Pass it back for the next page; ``None`` on the last page."""


def shorten(text: str, limit: int = TITLE_MAX) -> str:
    """``text`` on one line, at most ``limit`` characters, cut at a word with ``…``."""
    return text_shorten(text, limit)


def title_of(content: tuple[Mapping[str, Any], ...]) -> str | None:
    """A title from a prompt's ACP content blocks: their text, else a resource's name."""
    texts = [block.get("text") for block in content if block.get("type") == "text"]
    text = " ".join(t for t in texts if isinstance(t, str))
    if not text.strip():
        for block in content:
            name = block.get("name") if block.get("type") == "resource_link" else None
            if isinstance(name, str) and name.strip():
                text = name
                break
    return shorten(text) if text.strip() else None


def _first_prompt(log: SessionLog) -> tuple[bool, str | None]:
    """Whether the session was prompted, and the title its first prompt gives."""
    try:
        for index, record in enumerate(log):
            match record:
                case UserMessageRecord():
                    return True, title_of(record.content)
                case (
                    ModeChangeRecord()
                    | DirectoriesChangeRecord()
                    | ConfigChangeRecord()
                    | NoticeRecord()
                ) if index < _TITLE_SCAN_LINES:
                    continue  # what a session holds before the user says anything
                case _:
                    return True, None  # something else first, or too many mode switches
    except StoreError as exc:  # a newer record after a readable header
        logger.warning("session log %s: no title (%s)", log.path, exc)
        return True, None
    return False, None


def directories_between(fd: int, start: int, end: int) -> tuple[str, ...] | None:
    """The roots of the last ``directories`` record among the whole lines in bytes ``[start,
    end)`` of the log open on ``fd``; ``None`` when there is none there.

    A line holding the record's marker that is not such a record (the text inside a tool's
    arguments, say: JSON strings escape their quotes, so only a key can match) or does not
    decode is passed over. Linear in the bytes searched; memory is one block (and a line
    holding the marker).
    """
    return last_line_with(fd, _DIRECTORIES_MARKER, start, end, _directories_of)


def _directories_of(line: bytes) -> tuple[str, ...] | None:
    try:
        record = decode_line(line)
    except (RecordDecodeError, NewerVersion):
        return None
    return record.additional_directories if isinstance(record, DirectoriesChangeRecord) else None


def last_directories(path: Path) -> tuple[str, ...] | None:
    """The roots of the log's last ``directories`` record (among its committed lines);
    ``None`` when it has none."""
    fd = open_regular(path, os.O_RDONLY)
    try:
        return directories_between(fd, 0, committed_size(fd, os.fstat(fd).st_size))
    finally:
        os.close(fd)


def summarise(
    log: SessionLog,
    session_id: str,
    mtime_ns: int,
    directories: tuple[str, ...] | None,
    head: tuple[bool, str | None] | None = None,
) -> SessionSummary:
    """The summary of the open ``log``: ``directories``, the roots of its last ``directories``
    record (``None``: it has none); ``head``, whether it was prompted and its title, when
    already known (else read from the log's first records)."""
    prompted, title = _first_prompt(log) if head is None else head
    header = log.header
    if header.title is not None:
        title = header.title  # given at creation (a fork's)
    return SessionSummary(
        session_id=session_id,
        cwd=header.cwd,
        title=title,
        created_at=header.created_at,
        updated_at=datetime.fromtimestamp(mtime_ns / 1e9, UTC),
        mode=header.mode,
        path=log.path,
        prompted=prompted,
        additional_directories=header.additional_directories
        if directories is None
        else directories,
    )


def read_summary(path: Path, session_id: str | None = None) -> SessionSummary:
    """The summary of the log at ``path`` (``session_id`` defaults to its file name).

    Raises:
        OSError: the file cannot be read.
        CorruptLogError, UnsupportedVersionError: its header is unreadable or newer.
    """
    name = path.name.removesuffix(LOG_SUFFIX) if session_id is None else session_id
    with SessionLog(path, name) as log:
        fd = log.fileno()
        opened = os.fstat(fd)
        directories = directories_between(fd, 0, committed_size(fd, opened.st_size))
        return summarise(log, name, opened.st_mtime_ns, directories)


def encode_cursor(mtime_ns: int, session_id: str, token: str) -> str:
    """The cursor after the session with this sort key, in the listing named by ``token``."""
    raw = json.dumps([_CURSOR_VERSION, mtime_ns, session_id, token], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str, str]:
    """The sort key and listing token named by ``cursor``; :class:`InvalidCursorError` if it
    is not one of ours."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        fields = json.loads(raw)
    except (ValueError, TypeError, binascii.Error):
        raise InvalidCursorError(cursor) from None
    if type(fields) is not list or [type(field) for field in fields] != [int, int, str, str]:
        raise InvalidCursorError(cursor)
    version, mtime_ns, session_id, token = fields
    if version != _CURSOR_VERSION:
        raise InvalidCursorError(cursor)
    return mtime_ns, session_id, token
