"""The temporary files of atomic writes: how they are named, and cleaning up stale ones.

Only names of our own pattern, only regular files, only stale ones are removed: a pid gone
*here* proves nothing (NFS, another PID namespace). Cleaning never fails the write.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
import threading
import time

STALE_SECONDS = 3600
"""A temporary untouched for this long is stale whatever its pid says (one hour)."""

DEAD_PID_SECONDS = 600
"""A temporary untouched for this long is stale when its pid is gone here (ten minutes)."""

CLEAN_INTERVAL = 60.0
"""Seconds between two cleanings of one directory by one process."""

_NAME_KEPT = 200
"""Bytes of the file's name kept in its temporary's (names are limited to 255 bytes)."""

_OURS = re.compile(r"\..+\.(?:(?P<pid>[0-9]{1,10})-)?[0-9a-f]{12}\.tmp", re.DOTALL)

_REMEMBERED = 4096
"""Directories whose last cleaning time is kept; past that, the record starts over."""

_cleaned: dict[tuple[int, int], float] = {}
_cleaned_lock = threading.Lock()


def _cut(name: str) -> str:
    """``name`` cut to at most :data:`_NAME_KEPT` bytes on the file system, whole characters."""
    if len(os.fsencode(name)) <= _NAME_KEPT:
        return name
    kept, size = [], 0
    for character in name:
        size += len(os.fsencode(character))
        if size > _NAME_KEPT:
            break
        kept.append(character)
    return "".join(kept)


def temporary_name(name: str) -> str:
    """A fresh temporary name for a write of ``name`` by this process."""
    return f".{_cut(name)}.{os.getpid()}-{secrets.token_hex(6)}.tmp"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError, ValueError):
        return True  # it exists and is not ours to signal, or is no pid we can ask about
    return True


def is_stale(name: str, info: os.stat_result, now: float) -> bool:
    """Whether ``name`` (with its ``lstat``) is a stale temporary of ours."""
    found = _OURS.fullmatch(name)
    if found is None or not stat.S_ISREG(info.st_mode):
        return False
    age = now - info.st_mtime
    if age >= STALE_SECONDS:
        return True
    pid = found.group("pid")
    return age >= DEAD_PID_SECONDS and pid is not None and not _alive(int(pid))


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
                # One odd entry must not stop the others, nor the write that is cleaning.
                with contextlib.suppress(OSError, OverflowError, ValueError):
                    info = entry.stat(follow_symlinks=False)
                    if is_stale(entry.name, info, now):
                        os.unlink(entry.name, dir_fd=directory_fd)
                        removed += 1
    except OSError:
        pass
    finally:
        os.close(listing)
    return removed


def clean_now_and_then(directory_fd: int) -> int:
    """:func:`clean` the directory unless this process did in the last :data:`CLEAN_INTERVAL`.

    A temporary becomes stale only minutes after it was last written, so cleaning more often
    finds nothing more; it would only list a big directory again at every write.
    """
    try:
        info = os.fstat(directory_fd)
    except OSError:
        return 0
    key, now = (info.st_dev, info.st_ino), time.monotonic()
    with _cleaned_lock:
        last = _cleaned.get(key)
        if last is not None and now - last < CLEAN_INTERVAL:
            return 0
        if len(_cleaned) >= _REMEMBERED:
            _cleaned.clear()
        _cleaned[key] = now
    return clean(directory_fd)


def forget_cleanings() -> None:
    """Forget which directories were cleaned when (the next write into any cleans it)."""
    with _cleaned_lock:
        _cleaned.clear()
