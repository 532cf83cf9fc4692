"""Listing stored sessions cheaply: newest first, filtered by cwd, paged by an opaque cursor.

Invariants:
- Listing never parses a whole log: a summary reads the header (line 1) and the lines up to
  the first user message (which come right after it); the last update is the file's mtime.
  A session's extra workspace roots are the header's unless a later ``directories`` record
  replaced them: the log's bytes are searched from the end for that record's marker (a
  plain byte search, block by block), and only a line holding it is parsed.
- A session is listed once it was prompted: clients create a session for every new thread,
  and a log that holds nothing but its header (mode switches, and notices such as a failed
  MCP server's) is left out of listings until its first prompt, which titles it. It can still
  be loaded by id.
- Order is by last update, newest first, ties broken by session id; the cursor names the
  last session of a page by that key, so a page never repeats or skips a session that did
  not change meanwhile (one updated meanwhile moves to the top of a fresh listing).
- A log that cannot be summarised (unreadable, no header, a newer version, a header naming
  another session) is left out with a warning; a symbolic link is never listed; listing
  never fails on a damaged log.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import attrs

from acp_sidecar.store.codec import NewerVersion, RecordDecodeError, decode_line
from acp_sidecar.store.errors import InvalidCursorError, StoreError
from acp_sidecar.store.paths import LOG_SUFFIX, is_session_id
from acp_sidecar.store.reader import SessionLog, open_regular
from acp_sidecar.store.records import (
    ConfigChangeRecord,
    DirectoriesChangeRecord,
    ModeChangeRecord,
    NoticeRecord,
    UserMessageRecord,
)
from acp_sidecar.text import shorten as text_shorten

logger = logging.getLogger(__name__)

TITLE_MAX: Final = 80
"""The longest title, in characters (longer ones are cut at a word and end in ``…``)."""

DEFAULT_PAGE_SIZE: Final = 50
"""Sessions per listing page unless asked otherwise."""

_TITLE_SCAN_LINES: Final = 32
_DIRECTORIES_MARKER: Final = b'"type":"directories"'
_SEARCH_BLOCK: Final = 256 * 1024
_CURSOR_VERSION: Final = 1


@attrs.frozen
class SessionSummary:
    """What a listing shows of one stored session."""

    session_id: str
    """The session's id (the log's file name without ``.jsonl``)."""
    cwd: str
    """The session's absolute working directory (from the header)."""
    title: str | None
    """The first user message's text, shortened; ``None`` before the first prompt."""
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


def last_directories(path: Path) -> tuple[str, ...] | None:
    """The roots of the log's last ``directories`` record; ``None`` when it has none.

    Searches the file's bytes from the end, block by block, for the record's marker; a line
    holding the marker that is not such a record (the text inside a tool's arguments, say:
    JSON strings escape their quotes, so only a key can match) or does not decode is passed
    over. Memory is bounded by the block and the longest line.
    """
    fd = open_regular(path, os.O_RDONLY)
    try:
        end = os.fstat(fd).st_size
        carry = b""  # the start of a line that began in an earlier block
        while end > 0:
            start = max(0, end - _SEARCH_BLOCK)
            block = os.pread(fd, end - start, start) + carry
            end = start
            if start > 0:
                cut = block.find(b"\n")
                if cut < 0:
                    carry = block
                    continue
                carry, block = block[: cut + 1], block[cut + 1 :]
            found = _directories_in(block)
            if found is not None:
                return found
        return None
    finally:
        os.close(fd)


def _directories_in(lines: bytes) -> tuple[str, ...] | None:
    """The last ``directories`` record among whole ``lines`` (``None``: there is none)."""
    at = lines.rfind(_DIRECTORIES_MARKER)
    while at >= 0:
        line_start = lines.rfind(b"\n", 0, at) + 1
        line_end = lines.find(b"\n", at)
        try:
            record = decode_line(lines[line_start : None if line_end < 0 else line_end])
        except (RecordDecodeError, NewerVersion):
            record = None
        if isinstance(record, DirectoriesChangeRecord):
            return record.additional_directories
        at = lines.rfind(_DIRECTORIES_MARKER, 0, line_start)
    return None


def _summarise(log: SessionLog, session_id: str, mtime_ns: int) -> SessionSummary:
    prompted, title = _first_prompt(log)
    header = log.header
    changed = last_directories(log.path)
    return SessionSummary(
        session_id=session_id,
        cwd=header.cwd,
        title=title,
        created_at=header.created_at,
        updated_at=datetime.fromtimestamp(mtime_ns / 1e9, UTC),
        mode=header.mode,
        path=log.path,
        prompted=prompted,
        additional_directories=header.additional_directories if changed is None else changed,
    )


def read_summary(path: Path, session_id: str | None = None) -> SessionSummary:
    """The summary of the log at ``path`` (``session_id`` defaults to its file name).

    Raises:
        OSError: the file cannot be read.
        CorruptLogError, UnsupportedVersionError: its header is unreadable or newer.
    """
    mtime_ns = os.lstat(path).st_mtime_ns
    name = path.name.removesuffix(LOG_SUFFIX) if session_id is None else session_id
    with SessionLog(path, name) as log:
        return _summarise(log, name, mtime_ns)


def encode_cursor(mtime_ns: int, session_id: str) -> str:
    """The cursor after the session with this sort key."""
    raw = json.dumps([_CURSOR_VERSION, mtime_ns, session_id], separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    """The sort key named by ``cursor``; :class:`InvalidCursorError` if it is not ours."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        version, mtime_ns, session_id = json.loads(raw)
    except (ValueError, TypeError, binascii.Error):
        raise InvalidCursorError(cursor) from None
    if version != _CURSOR_VERSION or type(mtime_ns) is not int or type(session_id) is not str:
        raise InvalidCursorError(cursor)
    return mtime_ns, session_id


def _candidates(directory: Path) -> list[tuple[int, str, Path]]:
    found: list[tuple[int, str, Path]] = []
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return found
    for entry in entries:
        session_id = entry.name.removesuffix(LOG_SUFFIX)
        if session_id == entry.name or not is_session_id(session_id):
            continue
        try:
            if not entry.is_file(follow_symlinks=False):  # links are never listed
                continue
            mtime_ns = entry.stat().st_mtime_ns
        except OSError:  # removed meanwhile
            continue
        found.append((mtime_ns, session_id, Path(entry.path)))
    found.sort(key=lambda item: (-item[0], item[1]))
    return found


def _summaries(
    candidates: list[tuple[int, str, Path]], cwd: str | None
) -> Iterator[tuple[int, SessionSummary]]:
    wanted = None if cwd is None else os.path.normpath(cwd)
    for mtime_ns, session_id, path in candidates:
        try:
            with SessionLog(path, session_id) as log:
                if wanted is not None and os.path.normpath(log.header.cwd) != wanted:
                    continue
                summary = _summarise(log, session_id, mtime_ns)
        except (OSError, StoreError) as exc:
            logger.warning("session log %s left out of the listing: %s", path, exc)
            continue
        if summary.prompted:
            yield mtime_ns, summary


def list_sessions(
    directory: Path,
    *,
    cwd: str | None = None,
    cursor: str | None = None,
    limit: int = DEFAULT_PAGE_SIZE,
) -> SessionPage:
    """One page of the sessions stored in ``directory`` (see the module invariants)."""
    if limit < 1:
        raise ValueError("a page holds at least one session")
    candidates = _candidates(directory)
    if cursor is not None:
        after = decode_cursor(cursor)
        candidates = [c for c in candidates if (-c[0], c[1]) > (-after[0], after[1])]
    page: list[SessionSummary] = []
    last_key: tuple[int, str] | None = None
    for mtime_ns, summary in _summaries(candidates, cwd):
        if len(page) == limit:
            assert last_key is not None
            return SessionPage(tuple(page), encode_cursor(*last_key))
        page.append(summary)
        last_key = (mtime_ns, summary.session_id)
    return SessionPage(tuple(page), None)
