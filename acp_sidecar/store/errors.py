"""The store's errors: each names the session log it is about and says what to do.

Invariant: every error the store raises on purpose is a :class:`StoreError`, so a caller can
map the whole family at one seam (the ACP handlers turn them into JSON-RPC errors).
Damaged records are not errors: loading skips them with a warning.
"""

from __future__ import annotations

from pathlib import Path


class StoreError(Exception):
    """Something the session store refused or could not do."""


class InvalidSessionIdError(StoreError, ValueError):
    """A session id that cannot name a log file (it would escape the store, or is empty)."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(
            f"{session_id!r} is not a valid session id "
            "(1-128 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit)"
        )


class SessionNotFoundError(StoreError, LookupError):
    """No stored log for this session id (or the id could never name one)."""

    def __init__(self, session_id: str, path: Path | None = None) -> None:
        self.session_id = session_id
        self.path = path
        where = f" at {path}" if path is not None else ""
        super().__init__(f"no stored session {session_id!r}{where}")


class LogNotFoundError(SessionNotFoundError):
    """What ``replay`` was named is neither a stored session nor a session log file; the
    message says which it is (a directory, no such file, an id the store does not hold)."""

    def __init__(self, named: str, message: str) -> None:
        self.session_id = named
        self.path = None
        StoreError.__init__(self, message)


class SessionExistsError(StoreError, FileExistsError):
    """A new session was asked for under an id that already has a log."""

    def __init__(self, session_id: str, path: Path) -> None:
        self.session_id = session_id
        self.path = path
        super().__init__(f"session {session_id!r} already has a log at {path}")


class SessionLockedError(StoreError):
    """Another process has this session's log open for writing."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(
            f"session log {path} is open for writing in another acp-sidecar process; "
            "close that session (or that process) first"
        )


class LockFileError(StoreError):
    """The store's lock file (which holds the sessions each process is serving) cannot be
    used: a link, not a regular file, or a file this process may not open."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"the store's lock file {path} {reason}; no session can be written here")


class SessionLogUnsafeError(StoreError):
    """A log the store will not open: a symbolic link (it could point anywhere), not a
    regular file, a file this process may not read or write, or one whose header names
    another session."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"session log {path} {reason}")


class UnsupportedVersionError(StoreError):
    """A record was written by a newer schema version than this acp-sidecar reads."""

    def __init__(self, path: Path, found: float, supported: int, line: int) -> None:
        self.path = path
        self.found = found
        self.supported = supported
        self.line = line
        super().__init__(
            f"session log {path} (line {line}) was written with store schema version {found}; "
            f"this acp-sidecar reads versions up to {supported} — upgrade acp-sidecar to open it"
        )


class CorruptLogError(StoreError):
    """A log whose header (its first line) is missing or unreadable: nothing can be replayed."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"session log {path} has no readable header: {reason}")


class InvalidCursorError(StoreError, ValueError):
    """A listing cursor that this store did not hand out."""

    def __init__(self, cursor: str) -> None:
        self.cursor = cursor
        super().__init__(f"invalid session list cursor {cursor!r}")


class StoreWriteError(StoreError):
    """Appending a record failed (disk full, I/O error); the log keeps no partial line."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        super().__init__(f"could not append to session log {path}: {reason}")


class WriterClosedError(StoreError):
    """A record was appended through a writer that was already closed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"the writer of session log {path} is closed")
