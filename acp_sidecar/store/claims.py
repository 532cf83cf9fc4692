"""Which sessions this process holds, also while their logs are closed.

A writer's ``flock`` lives on its descriptor, so a log closed to save descriptors would be free
for another process; a claim is a lock on one byte of :data:`LOCK_FILE` (at an offset hashed from
the session id), every claim of a store sharing one descriptor. A session is claimed at most
once, in this process and across processes. Nothing but this module may open the lock file:
off Linux a POSIX record lock is dropped when *any* descriptor of the file closes.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat
import struct
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import Final

from acp_sidecar.store.errors import LockFileError, SessionLockedError
from acp_sidecar.store.paths import log_path

LOCK_FILE: Final = ".session-locks"
"""The lock file's name in the store directory."""

_OFD: Final = sys.platform == "linux" and hasattr(fcntl, "F_OFD_SETLK") and sys.maxsize > 2**32
_FLOCK: Final = struct.Struct("@hhqqi4x")
"""Linux's ``struct flock`` on 64-bit machines: type, whence, start, length, pid (0 for OFD)."""


# Two ids share an offset with a chance of 2**-62: they would exclude each other, never admit
# each other. The locks lie beyond the file's end, so it holds no bytes.
def _offset(session_id: str) -> int:
    digest = hashlib.blake2b(session_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 2


def _try_lock(fd: int, offset: int) -> bool:
    try:
        if _OFD:
            request = _FLOCK.pack(fcntl.F_WRLCK, os.SEEK_SET, offset, 1, 0)
            fcntl.fcntl(fd, fcntl.F_OFD_SETLK, request)
        else:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset, os.SEEK_SET)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def _unlock(fd: int, offset: int) -> None:
    if _OFD:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, _FLOCK.pack(fcntl.F_UNLCK, os.SEEK_SET, offset, 1, 0))
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, offset, os.SEEK_SET)


class _LockFile:
    """One store's lock file, open while this process holds a claim in it."""

    def __init__(self, directory: Path) -> None:
        path = directory / LOCK_FILE
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            fd = os.open(path, flags, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise LockFileError(path, "is a symbolic link") from None
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise LockFileError(path, f"cannot be opened ({exc.strerror})") from None
            raise
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode):
                raise LockFileError(path, "is not a regular file")
            owner = os.stat(directory)
            if os.geteuid() == 0 and opened.st_uid != owner.st_uid:
                # Root (a sidecar run with sudo) must not leave the store's owner a lock
                # file they cannot open: that would bar them from every session in it.
                os.fchown(fd, owner.st_uid, owner.st_gid)
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        self.held: set[int] = set()


_files: dict[str, _LockFile] = {}
_guard = threading.Lock()
"""Held while :data:`_files` or a lock file's claims change (claims are taken in worker
threads too)."""


class SessionClaim:
    """This process's hold on one session (see the module docstring), until :meth:`release`."""

    def __init__(self, key: str, session_id: str, offset: int) -> None:
        """Internal: use :func:`claim_session`."""
        self.session_id: Final = session_id
        """The session held."""
        self._key = key
        self._offset = offset
        self._released = False

    @property
    def released(self) -> bool:
        """Whether :meth:`release` has run."""
        return self._released

    def release(self) -> None:
        """Let the session go: another claim (here or in another process) may take it.
        Idempotent."""
        with _guard:
            if self._released:
                return
            self._released = True
            lock_file = _files[self._key]
            lock_file.held.discard(self._offset)
            try:
                _unlock(lock_file.fd, self._offset)
            finally:
                if not lock_file.held:
                    del _files[self._key]
                    os.close(lock_file.fd)

    def __enter__(self) -> SessionClaim:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def claim_session(directory: Path, session_id: str) -> SessionClaim:
    """Claim ``session_id`` in the store at ``directory`` (created if need be).

    Raises:
        InvalidSessionIdError: the id cannot name a log.
        SessionLockedError: a claim in this process or another holds the session.
        LockFileError: the lock file is a link, not a regular file, or cannot be opened.
    """
    log = log_path(directory, session_id)
    key = os.path.realpath(directory)
    offset = _offset(session_id)
    with _guard:
        lock_file = _files.get(key)
        if lock_file is None:
            lock_file = _files[key] = _LockFile(directory)
        try:
            if offset in lock_file.held or not _try_lock(lock_file.fd, offset):
                raise SessionLockedError(log)
        except BaseException:
            if not lock_file.held:
                del _files[key]
                os.close(lock_file.fd)
            raise
        lock_file.held.add(offset)
    return SessionClaim(key, session_id, offset)
