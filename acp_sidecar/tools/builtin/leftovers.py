"""The temporary files of atomic writes: how they are named, and cleaning up stale ones.

An atomic write puts the new content in ``.<name>.<pid>-<12 hex>.tmp`` beside the file and
renames it over the file. A process killed in between (SIGKILL, a power cut) leaves that
temporary behind; the next write into the same directory removes it.

Invariants:
- Only names of our own pattern are ever removed: ``.<name>.<pid>-<12 hex>.tmp``, or the
  pid-less ``.<name>.<12 hex>.tmp`` that earlier versions made — and only regular files.
- Only stale ones: the process whose pid the name carries is gone (on this machine), or the
  file has not been modified for :data:`STALE_SECONDS` (which also covers names without a
  pid, a pid reused since, and writers on other machines sharing the directory). A temporary
  another live writer is filling is left alone.
- Cleaning is best effort and never fails the write that triggered it.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import time

STALE_SECONDS = 3600
"""A temporary untouched for this long is stale whatever its pid says (one hour)."""

_NAME_KEPT = 200
"""Characters of the file's name kept in its temporary's (names are limited to 255 bytes)."""

_OURS = re.compile(r"\..+\.(?:(?P<pid>[0-9]+)-)?[0-9a-f]{12}\.tmp", re.DOTALL)


def temporary_name(name: str) -> str:
    """A fresh temporary name for a write of ``name`` by this process."""
    return f".{name[:_NAME_KEPT]}.{os.getpid()}-{secrets.token_hex(6)}.tmp"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, it is just not ours to signal
    return True


def is_stale(name: str, info: os.stat_result, now: float) -> bool:
    """Whether ``name`` (with its ``lstat``) is a stale temporary of ours."""
    found = _OURS.fullmatch(name)
    if found is None or not stat.S_ISREG(info.st_mode):
        return False
    if now - info.st_mtime >= STALE_SECONDS:
        return True
    pid = found.group("pid")
    return pid is not None and not _alive(int(pid))


def clean(directory_fd: int) -> int:
    """Remove the stale temporaries in the directory open as ``directory_fd``; how many."""
    removed = 0
    now = time.time()
    try:
        listing = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=directory_fd)
    except OSError:
        return 0
    try:
        with os.scandir(listing) as entries:
            for entry in entries:
                if not entry.name.startswith(".") or not entry.name.endswith(".tmp"):
                    continue
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    if is_stale(entry.name, info, now):
                        os.unlink(entry.name, dir_fd=directory_fd)
                        removed += 1
    except OSError:
        pass
    finally:
        os.close(listing)
    return removed
