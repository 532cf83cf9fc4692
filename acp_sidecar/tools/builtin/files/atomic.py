"""Replacing a file atomically on the local disk: :func:`atomic_write`.

Never a half-written file: a temporary beside it, flushed, renamed over it; on failure the
temporary and the directories made are removed. A file changed since it was read is refused
(``FILE_CHANGED``), except a pure append in the last instant, which is carried over.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Sequence
from typing import TypeAlias

import attrs

from acp_sidecar.tools.builtin.errors import FileChangedError, FileIOError, PermissionDeniedError
from acp_sidecar.tools.builtin.files import confined, leftovers
from acp_sidecar.tools.builtin.files.paths import WorkspacePath
from acp_sidecar.tools.builtin.files.textfile import (
    READ_FLAGS,
    FileStamp,
    lstat_in,
    regular_or_none,
    split_target,
)

Chunks: TypeAlias = "Sequence[bytes | memoryview]"
"""File content as pieces written one after the other (so a splice needs no copy)."""


def _write_all(fd: int, chunks: Chunks) -> None:
    for chunk in chunks:
        view = memoryview(chunk)
        while view:
            written = os.write(fd, view)
            view = view[written:]


@attrs.frozen
class Snapshot:
    """A file as an edit read it: its stamp and its bytes (what the edit may replace)."""

    stamp: FileStamp
    data: bytes


def atomic_write(
    target: WorkspacePath, data: bytes | Chunks, *, expected: Snapshot | None = None
) -> None:
    """Replace (or create) ``target`` with ``data`` atomically, keeping an old file's mode.

    ``data`` is the content, or a sequence of pieces that make it up. Missing parent
    directories are created, and removed again when the write fails. Stale temporary files of
    earlier writes into the same directory are cleaned up first, at most once a minute per
    directory (:mod:`.leftovers`). With ``expected``, the file must still have that stamp
    just before it is replaced, and what was appended to it in the instant of the rename is
    carried over (:func:`_carry_over_appends`). Blocking; run it in a thread.

    Raises:
        PermissionDeniedError: the file is read-only or its directory is not writable.
        FileChangedError: the file no longer has the ``expected`` stamp.
        PathChangedError: a directory on the path became a symbolic link since the check.
        FileIOError: anything else; the original file is untouched and no temporary is left.
    """
    directory, name = split_target(target)
    with confined.directory(directory, target.shown, create=True) as anchor:
        leftovers.clean_now_and_then(anchor.fd)
        _replace_in(anchor, name, target, data, expected)


def _replace_in(
    anchor: confined.Directory,
    name: str,
    target: WorkspacePath,
    data: bytes | Chunks,
    expected: Snapshot | None,
) -> None:
    info = regular_or_none(lstat_in(anchor, name, target), target)
    if expected is not None and (info is None or FileStamp.of(info) != expected.stamp):
        raise _file_changed(target)
    if info is not None and not os.access(name, os.W_OK, dir_fd=anchor.fd):
        raise PermissionDeniedError(f"Permission denied: {target.shown} is read-only.")
    temporary = leftovers.temporary_name(name)
    try:
        # A new file: 0o666 lets the umask decide its mode, as any editor's save would (the
        # temporary is no more open than the file will be). Replacing a file: 0o600 until the
        # content is complete, so a 0600 file's new content never sits in a wider temporary.
        fd = os.open(
            temporary,
            os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o666 if info is None else 0o600,
            dir_fd=anchor.fd,
        )
    except PermissionError as exc:
        raise PermissionDeniedError(
            f"Permission denied: cannot write in the directory of {target.shown}."
        ) from exc
    except OSError as exc:
        raise FileIOError(f"Cannot write {target.shown}: {exc.strerror or exc}.") from exc
    # The temporary stays open through the rename: a carried-over append goes through this
    # descriptor, so it can only ever land in the file this call wrote.
    try:
        try:
            _write_all(fd, [data] if isinstance(data, bytes) else data)
            os.fsync(fd)
            if info is not None:
                if (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
                    with contextlib.suppress(OSError):  # only a privileged user can
                        os.fchown(fd, info.st_uid, info.st_gid)
                os.fchmod(fd, stat.S_IMODE(info.st_mode))  # after fchown, which clears set-id
            replaced = None if expected is None else _unchanged(anchor, name, target, expected)
            try:
                os.replace(temporary, name, src_dir_fd=anchor.fd, dst_dir_fd=anchor.fd)
            except BaseException:
                if replaced is not None:
                    os.close(replaced)
                raise
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=anchor.fd)
            if isinstance(exc, OSError):
                reason = "no space left on device" if exc.errno == errno.ENOSPC else exc.strerror
                raise FileIOError(
                    f"Cannot write {target.shown}: {reason or exc}. The file was left unchanged."
                ) from exc
            raise
        if replaced is not None and expected is not None:
            try:
                _carry_over_appends(replaced, expected.data, fd)
            except OSError:
                pass  # the new content is in place; a racing append is all that can be lost
            finally:
                os.close(replaced)
    finally:
        os.close(fd)


def _unchanged(
    anchor: confined.Directory, name: str, target: WorkspacePath, expected: Snapshot
) -> int:
    """The file about to be replaced, open, after checking it still has the ``expected`` stamp.

    As late as possible: the window left is this check and the rename, not the whole call.
    """
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=anchor.fd)
    except FileNotFoundError as exc:
        raise _file_changed(target) from exc
    if FileStamp.of(os.fstat(fd)) != expected.stamp:
        os.close(fd)
        raise _file_changed(target)
    return fd


_COMPARE_BYTES = 1 << 20


def _starts_with(fd: int, data: bytes) -> bool:
    """Whether the file open as ``fd`` starts with ``data`` (compared a chunk at a time)."""
    view = memoryview(data)
    for at in range(0, len(view), _COMPARE_BYTES):
        piece = view[at : at + _COMPARE_BYTES]
        if os.pread(fd, len(piece), at) != piece:
            return False
    return True


def _carry_over_appends(replaced: int, before: bytes, written: int) -> None:
    """Append to the new file what was appended to the replaced one after the check.

    A writer appending (``echo >>``) in the instant between the check and the rename writes
    to the file that was just replaced; its bytes past the ``before`` content are still
    readable through the open descriptor and belong after the new content, as if the append
    had come after the edit. They are carried over only when the replaced file still starts
    with exactly ``before`` — a program that truncated and rewrote it in that instant did not
    append, and its content is not glued to ours — and only through ``written``, the new
    file's own descriptor (the name may already be another program's file, or a FIFO).
    Repeated while the replaced file still grows.
    """
    done = len(before)
    for _ in range(3):
        end = os.fstat(replaced).st_size
        if end <= done:
            return
        if not _starts_with(replaced, before):
            return
        tail = os.pread(replaced, end - done, done)
        if not tail:
            return
        os.lseek(written, 0, os.SEEK_END)
        _write_all(written, [tail])
        done += len(tail)


def _file_changed(target: WorkspacePath) -> FileChangedError:
    return FileChangedError(
        f"{target.shown} changed on disk since it was read (another program wrote to it) and "
        "was left as it is: the file changed; read it again, then redo the change."
    )
