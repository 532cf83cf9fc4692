"""A session's before-images, content-addressed beside its log: ``<session>.blobs/<sha256>``.

A blob is written atomically (a temporary, synced, renamed) before the log record that names
it, so a record never names a blob that is not whole; the directory goes with the session.
Only ``/undo`` and ``/redo`` read blobs: replay and ``session/load`` never do. Blobs are never
changed once written, so a fork shares its parent's by hard link.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
from pathlib import Path
from typing import Final

BLOBS_SUFFIX: Final = ".blobs"
"""The directory beside a log (``<session id>.blobs``) that holds its before-images."""

MAX_KEPT: Final = 8 * 1024 * 1024
"""The biggest file whose before-image is kept (8 MiB); a bigger one is not undoable."""


def digest(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex: a blob's name."""
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    """The blob directory of one session (made on the first :meth:`put`)."""

    def __init__(self, directory: Path) -> None:
        self.directory: Final = directory

    def put(self, data: bytes) -> str:
        """Keep ``data`` (unless a blob of that hash is there already); its hash."""
        name = digest(data)
        target = self.directory / name
        if target.is_file():
            return name
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.directory / f".{name}.{os.getpid()}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return name

    def get(self, name: str) -> bytes | None:
        """The blob ``name`` if it is there and whole (its hash checked), else ``None``."""
        try:
            data = (self.directory / name).read_bytes()
        except OSError:
            return None
        return data if digest(data) == name else None


def blobs_path(log: Path) -> Path:
    """The blob directory of the session whose log is ``log``."""
    return log.with_suffix(BLOBS_SUFFIX)


def remove_blobs(log: Path) -> None:
    """Remove the blob directory of ``log``'s session (a link at its name is left alone)."""
    directory = blobs_path(log)
    try:
        mode = os.lstat(directory).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode):
        shutil.rmtree(directory, ignore_errors=True)


def share_blobs(parent_log: Path, fork_log: Path) -> bool:
    """Give the fork whose log will be ``fork_log`` every blob of ``parent_log``'s session
    (hard-linked; where a link cannot be made, put anew), before its log names them; whether
    this made the fork's blob directory (so a failed fork removes only what it made)."""
    source = blobs_path(parent_log)
    try:
        names = [entry.name for entry in os.scandir(source) if entry.is_file(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return False
    target = blobs_path(fork_log)
    try:
        target.mkdir(mode=0o700)
        made = True
    except FileExistsError:
        made = False
    try:
        for name in names:
            if name.startswith("."):
                continue  # a temporary of a put still being written
            try:
                os.link(source / name, target / name)
            except FileExistsError:
                pass
            except FileNotFoundError:
                pass  # gone with its session meanwhile: that turn is not undoable in the fork
            except OSError:
                data = (source / name).read_bytes()
                if digest(data) == name:
                    BlobStore(target).put(data)
    except BaseException:
        if made:
            shutil.rmtree(target, ignore_errors=True)
        raise
    return made
