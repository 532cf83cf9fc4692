"""The session store: one directory of logs, addressed by session id.

This is the object the server and the CLI hold. It resolves ids to files (never outside its
directory), creates and reopens writers with its fsync policy, opens logs for streaming,
lists sessions and deletes them. A stored session's log is a regular file named after the
session whose header names the same session: a symbolic link, a hard link or a mismatched
header is refused (:class:`SessionLogUnsafeError`), never read or appended to. See
:mod:`acp_sidecar.store` for the invariants of each part.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from acp_sidecar.store.blobs import remove_blobs
from acp_sidecar.store.catalog import Catalog
from acp_sidecar.store.claims import SessionClaim, claim_session
from acp_sidecar.store.errors import (
    InvalidSessionIdError,
    LogNotFoundError,
    SessionLogUnsafeError,
    SessionNotFoundError,
)
from acp_sidecar.store.forking import write_fork
from acp_sidecar.store.listing import DEFAULT_PAGE_SIZE, SessionPage, SessionSummary
from acp_sidecar.store.paths import (
    EXPORT_SUFFIXES,
    LOG_SUFFIX,
    is_session_id,
    log_path,
    resolve_store_dir,
)
from acp_sidecar.store.reader import SessionLog, open_regular
from acp_sidecar.store.records import HeaderRecord, utc_now
from acp_sidecar.store.writer import (
    FSYNC_POLICIES,
    FsyncPolicy,
    SessionWriter,
    fsync_directory,
    lock_log,
)


class SessionStore:
    """Session logs in one directory (see :func:`~acp_sidecar.store.paths.resolve_store_dir`).

    Nothing touches the disk until a session is created (which creates the directory).
    """

    def __init__(
        self, directory: str | os.PathLike[str] | None = None, *, fsync: FsyncPolicy = "turn"
    ) -> None:
        if fsync not in FSYNC_POLICIES:
            raise ValueError(f"fsync policy must be one of {FSYNC_POLICIES}, not {fsync!r}")
        self.directory: Path = resolve_store_dir(directory)
        """Where the logs are (absolute)."""
        self.fsync: FsyncPolicy = fsync
        """The fsync policy of the writers this store opens."""
        self._catalog = Catalog(self.directory)

    def __repr__(self) -> str:
        return f"SessionStore({str(self.directory)!r}, fsync={self.fsync!r})"

    def path_of(self, session_id: str) -> Path:
        """The log file of ``session_id`` (which may not exist).

        Raises:
            InvalidSessionIdError: the id cannot name a log.
        """
        return log_path(self.directory, session_id)

    def exists(self, session_id: str) -> bool:
        """Whether ``session_id`` has a stored log (``False`` for an invalid id)."""
        return is_session_id(session_id) and _is_regular(self.path_of(session_id))

    def locate(self, session_id_or_path: str) -> Path:
        """The log named by a stored session's id, or else by a file path (for ``replay``).

        Raises:
            LogNotFoundError: neither a stored session nor a regular file (it says which:
                a directory, another kind of file, no such file, an id not stored here).
        """
        named = session_id_or_path
        if is_session_id(named):
            path = self.path_of(named)
            if _is_regular(path):
                return path
        candidate = Path(named).expanduser()
        if candidate.is_file():  # a path the user named: following its links is their choice
            return candidate.resolve()
        if candidate.is_dir():
            raise LogNotFoundError(
                named,
                f"{named} is a directory, not a session log: name a log file "
                "(SESSION_ID.jsonl) or a stored session's id (acp-sidecar sessions lists them)",
            )
        if candidate.exists():
            raise LogNotFoundError(named, f"{named} is not a regular file, not a session log")
        if is_session_id(named) and not named.endswith(LOG_SUFFIX):
            raise LogNotFoundError(
                named,
                f"no stored session {named!r} in {self.directory} (acp-sidecar sessions "
                "lists them), nor a file of that name",
            )
        raise LogNotFoundError(named, f"no such file: {named}")

    def claim(self, session_id: str) -> SessionClaim:
        """Hold ``session_id`` for this process until the claim is released: meanwhile no
        other process (nor another claim here) can continue or delete it, whether its log is
        open or not (see :mod:`acp_sidecar.store.claims`).

        Raises:
            InvalidSessionIdError: the id cannot name a log.
            SessionLockedError: another process (or claim) holds the session.
            LockFileError: the store's lock file cannot be used.
        """
        return claim_session(self.directory, session_id)

    def create(
        self,
        session_id: str,
        cwd: str,
        *,
        mode: str | None = None,
        created_at: datetime | None = None,
        additional_directories: tuple[str, ...] = (),
        claim: SessionClaim | None = None,
    ) -> SessionWriter:
        """Start the log of a new session and return its writer (holding the lock).

        ``claim``: the session's, which the caller keeps after the writer closes; without
        one the writer takes its own, released when it closes.

        Raises:
            InvalidSessionIdError: the id cannot name a log.
            ValueError: ``cwd`` is not absolute, or ``claim`` is another session's.
            SessionExistsError: the session already has a log.
            SessionLockedError, LockFileError: as :meth:`claim`.
        """
        if not os.path.isabs(cwd):
            raise ValueError(f"a session's cwd must be absolute, not {cwd!r}")
        header = HeaderRecord(
            session_id=session_id,
            cwd=cwd,
            created_at=utc_now() if created_at is None else created_at,
            mode=mode,
            additional_directories=additional_directories,
        )
        path = self.path_of(session_id)
        return self._claimed(
            session_id, claim, lambda: SessionWriter.create(path, header, fsync=self.fsync)
        )

    def reopen(self, session_id: str, *, claim: SessionClaim | None = None) -> SessionWriter:
        """The writer of a stored session, to continue it after ``session/load``; ``claim``
        as for :meth:`create`.

        Raises:
            SessionNotFoundError: no such session (or an invalid id).
            SessionLockedError: another process is writing to it, or holds it.
            SessionLogUnsafeError: a link, not writable by this process, or another session's.
            CorruptLogError, UnsupportedVersionError: its header is unreadable or newer.
            LockFileError: as :meth:`claim`.
        """
        path = self._existing(session_id)

        def reopen() -> SessionWriter:
            return SessionWriter.reopen(path, fsync=self.fsync, session_id=session_id)

        try:
            return self._claimed(session_id, claim, reopen)
        except FileNotFoundError:
            raise SessionNotFoundError(session_id, path) from None

    def _claimed(
        self, session_id: str, claim: SessionClaim | None, open_writer: Callable[[], SessionWriter]
    ) -> SessionWriter:
        """``open_writer()`` under ``claim``, or under a claim of the writer's own."""
        if claim is not None:
            if claim.session_id != session_id or claim.released:
                raise ValueError(f"not a claim held on session {session_id!r}")
            return open_writer()
        own = self.claim(session_id)
        try:
            writer = open_writer()
        except BaseException:
            own.release()
            raise
        writer.release_on_close(own)
        return writer

    def fork(
        self,
        parent_id: str,
        fork_id: str,
        cwd: str,
        *,
        additional_directories: tuple[str, ...] = (),
        title: str | None = None,
    ) -> None:
        """Store ``fork_id``, a new session holding ``parent_id``'s records up to its last
        completed step (:mod:`acp_sidecar.store.forking`); the parent is only read, whoever
        holds it. Continue the fork with :meth:`reopen`.

        Raises:
            SessionNotFoundError: no session ``parent_id`` (or an invalid id).
            InvalidSessionIdError: ``fork_id`` cannot name a log.
            ValueError: ``cwd`` is not absolute.
            SessionExistsError: ``fork_id`` already has a log.
            SessionLockedError, LockFileError: as :meth:`claim`, for ``fork_id``.
            SessionLogUnsafeError, CorruptLogError, UnsupportedVersionError: as
                :meth:`open_log`, for the parent.
        """
        if not os.path.isabs(cwd):
            raise ValueError(f"a session's cwd must be absolute, not {cwd!r}")
        parent = self._existing(parent_id)
        target = self.path_of(fork_id)
        with self.claim(fork_id):
            try:
                write_fork(
                    parent,
                    parent_id,
                    target,
                    fork_id=fork_id,
                    cwd=cwd,
                    additional_directories=additional_directories,
                    title=title,
                    sync=self.fsync != "never",
                )
            except FileNotFoundError:
                raise SessionNotFoundError(parent_id, parent) from None

    def open_log(self, session_id: str) -> SessionLog:
        """A stored session's log, opened for streaming (close it, or use ``with``).

        Raises:
            SessionNotFoundError: no such session (or an invalid id).
            SessionLogUnsafeError: a link, not readable by this process, or another session's.
            CorruptLogError, UnsupportedVersionError: its header is unreadable or newer.
        """
        path = self._existing(session_id)
        try:
            return SessionLog(path, session_id)
        except FileNotFoundError:
            raise SessionNotFoundError(session_id, path) from None

    def summary(self, session_id: str) -> SessionSummary:
        """A stored session's listing entry (header, title, last update).

        Raises:
            SessionNotFoundError: no such session (or an invalid id).
            CorruptLogError, UnsupportedVersionError: its header is unreadable or newer.
        """
        path = self._existing(session_id)
        try:
            summary = self._catalog.summary(path, session_id, os.lstat(path))
        except FileNotFoundError:
            raise SessionNotFoundError(session_id, path) from None
        assert summary is not None  # any cwd is wanted
        return summary

    def delete(self, session_id: str) -> None:
        """Remove a stored session's log: it leaves listings and can no longer be loaded.

        Nothing of the session is left behind (the store's lock file holds no session's
        data; the transcripts ``/export`` wrote and the before-images ``/undo`` keeps beside
        the log go with it). A session
        another process holds, its log open or not, is refused; so is a link at the log's
        name (left alone).

        Raises:
            SessionNotFoundError: no such session (or an invalid id).
            SessionLockedError: another process (or claim, or writer) holds the session.
            SessionLogUnsafeError: a link, not a regular file, or not writable by this process.
            LockFileError: as :meth:`claim`.
        """
        path = self._existing(session_id)
        try:
            with self.claim(session_id):
                _remove_log(path, sync=self.fsync != "never")
                _remove_exports(path)
                remove_blobs(path)
        except FileNotFoundError:
            raise SessionNotFoundError(session_id, path) from None

    def list(
        self, *, cwd: str | None = None, cursor: str | None = None, limit: int = DEFAULT_PAGE_SIZE
    ) -> SessionPage:
        """A page of stored sessions, newest first, optionally only those for ``cwd``; what
        earlier listings read is kept (see :mod:`acp_sidecar.store.catalog`), and a listing
        may run in any thread.

        Raises:
            InvalidCursorError: ``cursor`` did not come from this store.
        """
        return self._catalog.page(cwd=cwd, cursor=cursor, limit=limit)

    def _existing(self, session_id: str) -> Path:
        try:
            path = self.path_of(session_id)
        except InvalidSessionIdError:
            raise SessionNotFoundError(session_id, None) from None
        try:
            os.lstat(path)
        except FileNotFoundError:
            raise SessionNotFoundError(session_id, path) from None
        return path  # a link or a non-file is refused, clearly, when it is opened


def _remove_log(path: Path, *, sync: bool) -> None:
    """Delete the log at ``path`` under its writer lock, so a log another writer holds is
    never removed under it; a link or a non-regular file is refused and left alone.
    ``sync``: make the removal durable (the directory is synced)."""
    fd = open_regular(path, os.O_RDWR)
    try:
        lock_log(fd, path)
        opened = os.fstat(fd)
        now = os.lstat(path)  # the name still names the file locked (not swapped meanwhile)
        if (opened.st_dev, opened.st_ino) != (now.st_dev, now.st_ino):
            raise SessionLogUnsafeError(path, "was replaced while it was being deleted")
        os.unlink(path)  # while locked: a writer waiting for the lock then sees it is gone
    finally:
        os.close(fd)
    if sync:
        fsync_directory(path.parent)


def _remove_exports(log: Path) -> None:
    """Remove the transcripts exported beside ``log`` (regular files only: a link or a
    directory at such a name is not the session's and is left alone)."""
    for suffix in EXPORT_SUFFIXES:
        export = log.with_suffix(suffix)
        if _is_regular(export):
            export.unlink(missing_ok=True)


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
