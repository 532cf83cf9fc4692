"""Reaching a directory along an already-resolved path without following any symlink.

Closes the gap between the boundary check and the I/O: each step is an ``openat`` with
``O_NOFOLLOW``; a component that became a symlink since fails with ``PathChangedError``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator

import attrs

from acp_sidecar.tools.builtin.errors import (
    FileIOError,
    NotDirectoryError,
    PathChangedError,
    PathNotFoundError,
    PermissionDeniedError,
)

# O_PATH (Linux) opens a directory for use as an *at() anchor without needing read
# permission on it, as a path lookup would not; elsewhere a read-only open does the job.
_DIRECTORY_FLAGS = (
    getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
)


@attrs.frozen
class Directory:
    """A directory reached by the walk."""

    fd: int
    """Its descriptor (an anchor for ``dir_fd=``); valid inside the ``with`` block only."""
    path: str
    """The resolved path it was reached by (for messages and the names of created ones)."""
    created: tuple[str, ...] = ()
    """The directories the walk created, outermost first (absolute resolved paths)."""


def changed(shown: str) -> PathChangedError:
    """The error of a path that changed under the call (a directory swapped for a link)."""
    return PathChangedError(
        f"{shown} changed while the call ran: a directory on its path was replaced by a "
        "symbolic link or moved. Nothing was read or written; try again."
    )


def _step(fd: int, name: str, shown: str, verb: str) -> int:
    """Open ``name`` (a directory) relative to ``fd`` without following a link."""
    try:
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=fd)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            raise changed(shown) from exc
        if stat.S_ISLNK(info.st_mode):
            raise changed(shown) from exc
        raise NotDirectoryError(
            f"Cannot {verb} {shown}: part of its parent path is a file, not a directory."
        ) from exc


@contextlib.contextmanager
def directory(real: str, shown: str, *, create: bool = False) -> Iterator[Directory]:
    """The directory at the resolved absolute path ``real``, reached without following links.

    ``shown`` names the path in messages. With ``create``, missing directories are made.

    Raises:
        PathChangedError: a component is now a symbolic link.
        PathNotFoundError: a component is missing (and ``create`` is off).
        NotDirectoryError: a component is a file.
        PermissionDeniedError, FileIOError: the operating system refused.
    """
    assert os.path.isabs(real), real
    names = [name for name in real.split(os.sep) if name]
    created: list[str] = []
    verb = "create" if create else "use"
    fd = os.open(os.sep, _DIRECTORY_FLAGS)
    try:
        so_far = os.sep
        for name in names:
            so_far = os.path.join(so_far, name)
            try:
                try:
                    step = _step(fd, name, shown, verb)
                except FileNotFoundError:
                    if not create:
                        raise PathNotFoundError(f"{shown} does not exist.") from None
                    with contextlib.suppress(FileExistsError):  # made meanwhile: walk on
                        os.mkdir(name, 0o777, dir_fd=fd)
                        created.append(so_far)
                    step = _step(fd, name, shown, verb)
            except PermissionError as exc:
                raise PermissionDeniedError(f"Permission denied: cannot reach {shown}.") from exc
            except FileNotFoundError as exc:
                raise changed(shown) from exc  # it was just made or seen: removed under us
            except OSError as exc:
                raise FileIOError(f"Cannot reach {shown}: {exc.strerror or exc}.") from exc
            os.close(fd)
            fd = step
        yield Directory(fd, real, tuple(created))
    except BaseException:
        if created:
            _remove(created)
        raise
    finally:
        os.close(fd)


def _remove(created: list[str] | tuple[str, ...]) -> None:
    """Remove directories this walk made, innermost first, each only if still empty."""
    for path in reversed(created):
        parent, name = os.path.split(path)
        try:
            with directory(parent, parent) as anchor:
                os.rmdir(name, dir_fd=anchor.fd)
        except Exception:  # best effort: a failure here must not hide the write's error
            return


def remove_created(created: tuple[str, ...]) -> None:
    """Undo :attr:`Directory.created` after a failed write: remove them if still empty."""
    _remove(created)
