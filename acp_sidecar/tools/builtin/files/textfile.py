"""Text files on disk and through the editor: finding, opening and loading them.

Local I/O never follows a link after the boundary check (:mod:`.confined`). A file is loaded
whole up to :data:`MAX_DOCUMENT_BYTES`, only in one state (else ``FILE_CHANGED``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from typing import BinaryIO

import attrs

from acp_sidecar.tools.builtin.errors import (
    BinaryFileError,
    EditorFileError,
    FileChangedError,
    FileIOError,
    FileTooLargeError,
    IsDirectoryError,
    NotDirectoryError,
    PathNotFoundError,
    PermissionDeniedError,
)
from acp_sidecar.tools.builtin.files import confined
from acp_sidecar.tools.builtin.files.encoding import (
    SNIFF_BYTES,
    Encoding,
    TextDocument,
    decode_document,
    sniff_encoding,
    text_encoding,
)
from acp_sidecar.tools.builtin.files.paths import WorkspacePath
from acp_sidecar.tools.context import EditorFiles
from acp_sidecar.tools.errors import ToolError

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""The largest file ``edit`` and ``write`` load whole (64 MiB)."""

# --- local files ------------------------------------------------------------------------------
#
# Every local access below goes through :mod:`.confined`: the parent directory is reached along
# the resolved path without following a link, and the file is opened, stat-ed, created and
# renamed relative to that directory's descriptor, so a directory swapped for a symlink after
# the boundary check fails the call instead of leading outside.


@attrs.frozen
class FileStamp:
    """What identifies one state of a file: a change to it changes one of these."""

    size: int
    mtime_ns: int
    inode: int
    device: int

    @classmethod
    def of(cls, info: os.stat_result) -> FileStamp:
        """The stamp of a stat result."""
        return cls(info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev)


def split_target(target: WorkspacePath) -> tuple[str, str]:
    """The resolved directory of ``target`` and its name in it (``""`` for the root)."""
    directory, name = os.path.split(target.real)
    return directory, name


def lstat_in(anchor: confined.Directory, name: str, target: WorkspacePath) -> os.stat_result | None:
    """The stat of ``name`` in ``anchor`` (not following a link), ``None`` when missing."""
    try:
        info = os.stat(name, dir_fd=anchor.fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except PermissionError as exc:
        raise PermissionDeniedError(f"Permission denied: cannot access {target.shown}.") from exc
    except OSError as exc:
        raise FileIOError(f"Cannot access {target.shown}: {exc.strerror or exc}.") from exc
    if stat.S_ISLNK(info.st_mode):
        # ``real`` has every link resolved: a link here was put in after the check.
        raise confined.changed(target.shown)
    return info


def regular_or_none(info: os.stat_result | None, target: WorkspacePath) -> os.stat_result | None:
    """``info`` when it is a regular file's, ``None`` when nothing is there.

    Raises:
        IsDirectoryError: it is a directory.
        FileIOError: it is something else (a FIFO, a device).
    """
    if info is None:
        return None
    if stat.S_ISDIR(info.st_mode):
        raise IsDirectoryError(
            f"{target.shown} is a directory, not a file. Use glob to list its files."
        )
    if not stat.S_ISREG(info.st_mode):
        raise FileIOError(f"{target.shown} is not a regular file.")
    return info


def _stat(target: WorkspacePath) -> os.stat_result | None:
    try:
        return os.stat(target.real)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except PermissionError as exc:
        raise PermissionDeniedError(f"Permission denied: cannot access {target.shown}.") from exc
    except OSError as exc:
        raise FileIOError(f"Cannot access {target.shown}: {exc.strerror or exc}.") from exc


def existing_file(target: WorkspacePath) -> os.stat_result | None:
    """The stat of an existing regular file, ``None`` when nothing is there.

    Raises:
        IsDirectoryError: it is a directory.
        FileIOError: it is something else that is not a regular file (a FIFO, a device).
        PathChangedError: a directory on its path became a symbolic link since the check.
    """
    directory, name = split_target(target)
    if not name:  # the file system root
        return regular_or_none(_stat(target), target)
    try:
        with confined.directory(directory, target.shown) as anchor:
            return regular_or_none(lstat_in(anchor, name, target), target)
    except (PathNotFoundError, NotDirectoryError):
        return None  # nothing there: a parent is missing, or is a file


def require_file(target: WorkspacePath) -> os.stat_result:
    """Like :func:`existing_file`, but a missing file is a :class:`PathNotFoundError`."""
    info = existing_file(target)
    if info is None:
        raise PathNotFoundError(f"{target.shown} does not exist.")
    return info


def stat_path(target: WorkspacePath) -> os.stat_result:
    """The stat of an existing file or directory (``PathNotFoundError`` when missing)."""
    info = _stat(target)
    if info is None:
        raise PathNotFoundError(f"{target.shown} does not exist.")
    return info


def require_directory(target: WorkspacePath) -> None:
    """Raise unless ``target`` is an existing directory."""
    info = _stat(target)
    if info is None:
        raise PathNotFoundError(f"{target.shown} does not exist.")
    if not stat.S_ISDIR(info.st_mode):
        raise NotDirectoryError(f"{target.shown} is not a directory.")


# O_NONBLOCK: a FIFO swapped in after the stat must not block the open (regular files ignore it).
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY


@contextlib.contextmanager
def open_file(target: WorkspacePath) -> Iterator[tuple[BinaryIO, os.stat_result]]:
    """An existing regular file open for binary reading, and its ``fstat``.

    The file is opened relative to its directory reached by :mod:`.confined`, without
    following a link, and the opened descriptor must be the regular file that was checked.

    Raises:
        PathNotFoundError, IsDirectoryError, PermissionDeniedError, FileIOError,
        PathChangedError.
    """
    directory, name = split_target(target)
    if not name:
        raise IsDirectoryError(f"{target.shown} is a directory, not a file.")
    with confined.directory(directory, target.shown) as anchor:
        checked = regular_or_none(lstat_in(anchor, name, target), target)
        if checked is None:
            raise PathNotFoundError(f"{target.shown} does not exist.")
        try:
            fd = os.open(name, READ_FLAGS, dir_fd=anchor.fd)
        except FileNotFoundError as exc:
            raise confined.changed(target.shown) from exc
        except PermissionError as exc:
            raise PermissionDeniedError(f"Permission denied: cannot read {target.shown}.") from exc
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise confined.changed(target.shown) from exc
            raise FileIOError(f"Cannot read {target.shown}: {exc.strerror or exc}.") from exc
    stream = os.fdopen(fd, "rb")
    with stream:
        info = os.fstat(fd)
        if (info.st_dev, info.st_ino) != (checked.st_dev, checked.st_ino):
            raise confined.changed(target.shown)  # replaced between the stat and the open
        yield stream, info


def read_bytes(target: WorkspacePath, *, verb: str) -> tuple[bytes, Encoding, FileStamp]:
    """Load a whole existing text file: its bytes, its encoding, and the stamp it had.

    ``verb`` completes the messages ("… only text files can be {verb}"). Blocking; use a
    thread.

    Raises:
        PathNotFoundError, IsDirectoryError, PermissionDeniedError, FileIOError,
        FileTooLargeError, BinaryFileError, PathChangedError.
    """
    with open_file(target) as (stream, info):
        if info.st_size > MAX_DOCUMENT_BYTES:
            raise FileTooLargeError(
                f"{target.shown} is {info.st_size:,} bytes; files up to "
                f"{MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB can be {verb}."
            )
        try:
            data = stream.read(info.st_size + 1)  # one more byte shows a file that grew
        except OSError as exc:
            raise FileIOError(f"Cannot read {target.shown}: {exc.strerror or exc}.") from exc
    stamp = FileStamp.of(info)
    if len(data) != stamp.size:
        # It grew or shrank while being read: what was read is no state the file was in.
        raise FileChangedError(
            f"{target.shown} changed while it was being read (another program is writing to "
            "it): the file changed; read it again."
        )
    encoding = text_encoding(data)
    if encoding is None:
        raise BinaryFileError(f"{target.shown} is a binary file; only text files can be {verb}.")
    return data, encoding, stamp


def read_document(target: WorkspacePath, *, verb: str) -> TextDocument:
    """Load and decode a whole existing text file (blocking; run it in a thread).

    Raises:
        Everything :func:`read_bytes` raises.
    """
    data, _encoding, _stamp = read_bytes(target, verb=verb)
    document = decode_document(data)
    if document is None:
        raise BinaryFileError(f"{target.shown} is a binary file; only text files can be {verb}.")
    return document


def sniff_file(target: WorkspacePath) -> Encoding | None:
    """The encoding of an existing file from its first bytes (``None``: binary)."""
    with open_file(target) as (stream, _info):
        try:
            head = stream.read(SNIFF_BYTES)
        except OSError as exc:
            raise FileIOError(f"Cannot read {target.shown}: {exc.strerror or exc}.") from exc
    return sniff_encoding(head)


def make_parents(target: WorkspacePath) -> tuple[str, ...]:
    """Create the missing parent directories of ``target``; the ones created, outermost first.

    For a write that goes through the editor; when it fails, hand the result to
    :func:`~.confined.remove_created`.
    """
    with confined.directory(split_target(target)[0], target.shown, create=True) as anchor:
        return anchor.created


# --- the editor's files -----------------------------------------------------------------------


async def editor_read(files: EditorFiles, target: WorkspacePath) -> str:
    """The editor's text of ``target`` (its unsaved buffer, if any)."""
    try:
        return await files.read_text_file(target.path)
    except ToolError:
        raise
    except Exception as exc:
        raise EditorFileError(f"The editor could not read {target.shown}: {exc}") from exc


async def editor_write(files: EditorFiles, target: WorkspacePath, text: str) -> None:
    """Write ``text`` to ``target`` through the editor."""
    try:
        await files.write_text_file(target.path, text)
    except ToolError:
        raise
    except Exception as exc:
        raise EditorFileError(f"The editor could not write {target.shown}: {exc}") from exc
