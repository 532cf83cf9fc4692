"""Listing a store's sessions: newest first (mtime, then id), filtered by cwd, paged by a cursor.

A listing scans the directory once and its later pages are read from that scan: a page never
repeats or skips a session that did not change meanwhile. Summaries are kept by file identity
(device, inode, size, mtime); a log only appended to is searched on from where the last search
ended. Thread-safe (``session/list`` lists in a worker thread); a damaged log is left out with a
warning, never failing the listing.
"""

from __future__ import annotations

import bisect
import logging
import os
import secrets
import stat
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Final, TypeAlias

import attrs

from acp_sidecar.store.errors import StoreError
from acp_sidecar.store.listing import (
    DEFAULT_PAGE_SIZE,
    SessionPage,
    SessionSummary,
    decode_cursor,
    directories_between,
    encode_cursor,
    summarise,
)
from acp_sidecar.store.paths import LOG_SUFFIX, is_session_id
from acp_sidecar.store.reader import SessionLog, check_regular
from acp_sidecar.store.scan import committed_size

logger = logging.getLogger(__name__)

KEPT_LISTINGS: Final = 4
"""How many listings' orders are kept for their later pages."""

KEPT_SUMMARIES: Final = 16_384
"""How many logs' summaries are kept."""

_TAIL: Final = 64
"""How many bytes before the end of what was searched are kept, to tell an append from a
rewrite."""

_Key: TypeAlias = tuple[int, str]
"""A session's place in a listing: ``(-mtime_ns, session_id)``, in ascending order."""


@attrs.frozen
class _Known:
    """What was read of one log, and the file it was read from."""

    identity: tuple[int, int, int, int]
    """Device, inode, size and mtime (ns) of the file read."""
    cwd: str
    """The header's working directory, normalised (what a cwd filter compares)."""
    summary: SessionSummary | None
    """``None`` when it was read only as far as its cwd (another cwd was being listed)."""
    searched: int = 0
    """The bytes searched for a ``directories`` record: the log's committed lines then."""
    tail: bytes = b""
    """The bytes just before :attr:`searched`."""
    directories: tuple[str, ...] | None = None
    """The roots of the last ``directories`` record among them (``None``: there was none)."""


def _identity(status: os.stat_result) -> tuple[int, int, int, int]:
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


class Catalog:
    """The listings of the store at :attr:`directory` (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory: Final = directory
        """The store directory."""
        self._guard = threading.Lock()
        """Held while the kept listings or summaries change (never while a log is read)."""
        self._known: OrderedDict[str, _Known] = OrderedDict()
        self._listings: OrderedDict[str, list[_Key]] = OrderedDict()

    def page(
        self, *, cwd: str | None = None, cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
    ) -> SessionPage:
        """One page of the sessions stored (see the module docstring).

        Raises:
            InvalidCursorError: ``cursor`` is not one of ours.
        """
        if limit < 1:
            raise ValueError("a page holds at least one session")
        wanted = None if cwd is None else os.path.normpath(cwd)
        order: list[_Key] | None = None
        scanned: dict[str, os.stat_result] = {}
        position = 0
        if cursor is not None:
            mtime_ns, session_id, token = decode_cursor(cursor)
            order = self._kept(token)
        if order is None:
            order, scanned = self._scan()
            token = self._keep(order)
        if cursor is not None:
            position = bisect.bisect_right(order, (-mtime_ns, session_id))
        page: list[SessionSummary] = []
        last: _Key | None = None
        for index in range(position, len(order)):
            key = order[index]
            summary = self._listed(key, scanned.get(key[1]), wanted)
            if summary is None:
                continue
            if len(page) == limit:
                assert last is not None
                return SessionPage(tuple(page), encode_cursor(-last[0], last[1], token))
            page.append(summary)
            last = key
        return SessionPage(tuple(page), None)

    def summary(
        self, path: Path, session_id: str, status: os.stat_result, cwd: str | None = None
    ) -> SessionSummary | None:
        """The summary of the log at ``path`` (``status``: its ``lstat``), read only as far as
        it changed since it was last read; ``None`` when its cwd is not ``cwd`` (normalised).

        Raises:
            OSError: the file cannot be read.
            SessionLogUnsafeError: a link, not a regular file, or another session's.
            CorruptLogError, UnsupportedVersionError: its header is unreadable or newer.
        """
        check_regular(path, status)
        with self._guard:
            known = self._known.get(session_id)
        if known is None or known.identity != _identity(status):
            known = self._read(path, session_id, known, cwd)
        elif known.summary is None and (cwd is None or known.cwd == cwd):
            known = self._read(path, session_id, None, cwd)  # read only as far as its cwd
        with self._guard:
            self._known[session_id] = known
            self._known.move_to_end(session_id)
            while len(self._known) > KEPT_SUMMARIES:
                self._known.popitem(last=False)
        if cwd is not None and known.cwd != cwd:
            return None
        return known.summary

    def _listed(
        self, key: _Key, scanned: os.stat_result | None, cwd: str | None
    ) -> SessionSummary | None:
        """The summary at ``key`` if the listing shows it (``scanned``: the log's status from
        this listing's scan, ``None`` when the order is a kept one)."""
        mtime_ns, session_id = -key[0], key[1]
        path = self.directory / f"{session_id}{LOG_SUFFIX}"
        status = scanned
        if status is None:
            try:
                status = os.lstat(path)
            except OSError:
                return None  # deleted meanwhile
            if status.st_mtime_ns != mtime_ns or stat.S_ISLNK(status.st_mode):
                return None  # changed meanwhile: it has another place in a fresh listing
        try:
            summary = self.summary(path, session_id, status, cwd)
        except (OSError, StoreError) as exc:
            logger.warning("session log %s left out of the listing: %s", path, exc)
            return None
        return summary if summary is not None and summary.prompted else None

    def _read(self, path: Path, session_id: str, known: _Known | None, cwd: str | None) -> _Known:
        """Read the log at ``path`` again, from where ``known`` left off when it was only
        appended to since."""
        with SessionLog(path, session_id) as log:
            fd = log.fileno()
            opened = os.fstat(fd)
            header_cwd = os.path.normpath(log.header.cwd)
            if cwd is not None and header_cwd != cwd:
                return _Known(_identity(opened), header_cwd, None)
            end = committed_size(fd, opened.st_size)
            start, directories, head = 0, None, None
            if known is not None and known.summary is not None and _appended(fd, opened, known):
                start, directories = known.searched, known.directories
                if known.summary.prompted:
                    head = (True, known.summary.title)
            found = directories_between(fd, start, end)
            directories = directories if found is None else found
            summary = summarise(log, session_id, opened.st_mtime_ns, directories, head)
            tail = os.pread(fd, min(_TAIL, end), end - min(_TAIL, end))
        return _Known(_identity(opened), header_cwd, summary, end, tail, directories)

    def _scan(self) -> tuple[list[_Key], dict[str, os.stat_result]]:
        """Every log's place in a fresh listing, and its status."""
        order: list[_Key] = []
        status: dict[str, os.stat_result] = {}
        try:
            entries = os.scandir(self.directory)
        except FileNotFoundError:
            return order, status
        with entries:
            for entry in entries:
                session_id = entry.name.removesuffix(LOG_SUFFIX)
                if session_id == entry.name or not is_session_id(session_id):
                    continue
                try:
                    if not entry.is_file(follow_symlinks=False):  # links are never listed
                        continue
                    found = entry.stat(follow_symlinks=False)
                except OSError:  # removed meanwhile
                    continue
                order.append((-found.st_mtime_ns, session_id))
                status[session_id] = found
        order.sort()
        return order, status

    def _keep(self, order: list[_Key]) -> str:
        token = secrets.token_hex(8)
        with self._guard:
            self._listings[token] = order
            while len(self._listings) > KEPT_LISTINGS:
                self._listings.popitem(last=False)
        return token

    def _kept(self, token: str) -> list[_Key] | None:
        with self._guard:
            order = self._listings.get(token)
            if order is not None:
                self._listings.move_to_end(token)
            return order


def _appended(fd: int, opened: os.stat_result, known: _Known) -> bool:
    """Whether the file open on ``fd`` is the one ``known`` was read from, only appended to
    since."""
    if known.identity[:2] != (opened.st_dev, opened.st_ino) or known.searched > opened.st_size:
        return False
    start = known.searched - len(known.tail)
    return os.pread(fd, len(known.tail), start) == known.tail
