"""Text files on disk and through the editor: sniffing, decoding that round-trips, atomic writes.

Invariants:
- A file is *binary* when its first 8 KiB contain a NUL byte and it does not start with a
  UTF-16/UTF-32 byte-order mark (the rule ``read``, ``edit``, ``write`` and ``grep`` share).
- A file without a UTF-16/32 mark that is not valid UTF-8 *as a whole* is Latin-1
  (:func:`text_encoding`), its UTF-8 mark if any included: every byte is one character, so
  the decoded text is exactly the file and nothing is lost writing it back. ``read``,
  ``write`` and ``edit`` decide on the whole file (``read`` with a streaming pre-pass, for
  files up to :data:`MAX_DOCUMENT_BYTES`; a larger file, which no write loads, is judged on
  its first 8 KiB), so they agree.
- Decoding is lossless: ``encode_document(decode_document(b))`` gives ``b`` back byte for
  byte, and no decoding with replacement characters is ever written back. Encoding is strict:
  text a Latin-1 or UTF-16 file cannot hold is refused, never written in another encoding.
- Local I/O never follows a link after the boundary check: files are opened, stat-ed, created
  and renamed relative to their directory's descriptor reached by :mod:`.confined`; a path
  that changed under the call fails it with ``PATH_CHANGED``.
- :func:`atomic_write` never leaves a half-written file: the data goes to a temporary file in
  the same directory, is flushed to disk, takes the old file's mode, and replaces the file with
  one rename. On any failure the temporary file and the directories the write created are
  removed and the original is intact; stale temporaries of killed writes are removed by a
  later write into the directory (:mod:`.leftovers`). Given the snapshot the file was read as,
  it refuses to replace a file that changed since (``FILE_CHANGED``), checked on the open
  file just before the rename. Bytes appended to the old file in the instant between that
  check and the rename are appended to the new one, through the temporary's own descriptor
  (never by opening the name again), and only when the old file's first bytes are still
  exactly the bytes that were read (a pure append); any other change in that instant stays
  in the replaced file. The temporary is created ``0600`` when it replaces a file, and gets
  that file's mode only once its content is complete.
- Every ``OSError`` is mapped to a built-in error with a message naming the path as shown.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import stat
from collections.abc import Iterator, Sequence
from typing import BinaryIO, TypeAlias

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
from acp_sidecar.tools.builtin.files import confined, leftovers
from acp_sidecar.tools.builtin.files.paths import WorkspacePath
from acp_sidecar.tools.context import EditorFiles
from acp_sidecar.tools.errors import ToolError

SNIFF_BYTES = 8192
"""How much of a file the binary sniff looks at."""

MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""The largest file ``edit`` and ``write`` load whole (64 MiB)."""

_BOMS: tuple[tuple[bytes, str], ...] = (
    # UTF-32 LE starts with the UTF-16 LE mark, so it is tried first.
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


_BOM_STARTS = frozenset(bom[:1] for bom, _codec in _BOMS)


@attrs.frozen
class Encoding:
    """How a text file is stored."""

    codec: str
    """The Python codec of the body (``utf-8``, ``utf-16-le``, …)."""
    bom: bytes = b""
    """The byte-order mark the file starts with (``b""`` for none)."""

    @property
    def label(self) -> str:
        """A short name for messages and meta (``utf-8``, ``utf-8 with BOM``, …)."""
        return f"{self.codec} with BOM" if self.bom else self.codec


UTF8 = Encoding("utf-8")
LATIN1 = Encoding("latin-1")
"""A file that is not valid UTF-8 (:func:`text_encoding`): every byte is one character."""


@attrs.frozen
class TextDocument:
    """A decoded text file."""

    text: str
    """The text: exactly the file's characters (it encodes back to the same bytes)."""
    encoding: Encoding


def sniff_encoding(head: bytes) -> Encoding | None:
    """The encoding a file's first bytes announce, or ``None`` for a binary file."""
    if head[:1] not in _BOM_STARTS:
        return None if b"\0" in head[:SNIFF_BYTES] else UTF8
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return Encoding(codec, bom)
    if b"\0" in head[:SNIFF_BYTES]:
        return None
    return UTF8


def decode_document(data: bytes) -> TextDocument | None:
    """Decode a whole file losslessly; ``None`` when it is binary."""
    encoding = text_encoding(data)
    if encoding is None:
        return None
    body = data[len(encoding.bom) :]
    try:
        return TextDocument(body.decode(encoding.codec), encoding)
    except UnicodeDecodeError:
        return None  # a UTF-16/32 mark on data that is not: treat as binary


def encode_document(text: str, encoding: Encoding) -> bytes:
    """The bytes of ``text`` in ``encoding``.

    Raises:
        UnicodeEncodeError: the encoding cannot hold ``text`` (or it has lone surrogates).
    """
    return encoding.bom + text.encode(encoding.codec)


def printable(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (safe to show and to store as JSON)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


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


def _split(target: WorkspacePath) -> tuple[str, str]:
    directory, name = os.path.split(target.real)
    return directory, name


def _lstat_in(
    anchor: confined.Directory, name: str, target: WorkspacePath
) -> os.stat_result | None:
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


def _regular(info: os.stat_result | None, target: WorkspacePath) -> os.stat_result | None:
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
    directory, name = _split(target)
    if not name:  # the file system root
        return _regular(_stat(target), target)
    try:
        with confined.directory(directory, target.shown) as anchor:
            return _regular(_lstat_in(anchor, name, target), target)
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
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY


@contextlib.contextmanager
def open_file(target: WorkspacePath) -> Iterator[tuple[BinaryIO, os.stat_result]]:
    """An existing regular file open for binary reading, and its ``fstat``.

    The file is opened relative to its directory reached by :mod:`.confined`, without
    following a link, and the opened descriptor must be the regular file that was checked.

    Raises:
        PathNotFoundError, IsDirectoryError, PermissionDeniedError, FileIOError,
        PathChangedError.
    """
    directory, name = _split(target)
    if not name:
        raise IsDirectoryError(f"{target.shown} is a directory, not a file.")
    with confined.directory(directory, target.shown) as anchor:
        checked = _regular(_lstat_in(anchor, name, target), target)
        if checked is None:
            raise PathNotFoundError(f"{target.shown} does not exist.")
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=anchor.fd)
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


def text_encoding(data: bytes, *, valid_utf8: bool | None = None) -> Encoding | None:
    """The encoding of a whole file's ``data`` (``None``: binary).

    A file without a UTF-16/32 mark that is not valid UTF-8 is :data:`LATIN1`, the bytes of a
    UTF-8 mark included: Latin-1 maps every byte to one character, so decoding never loses a
    byte and never invents one. ``valid_utf8``: whether the whole file is valid UTF-8 after
    its mark, when the caller has checked that itself (``data`` is then only its head).
    """
    encoding = sniff_encoding(data[:SNIFF_BYTES])
    if encoding is None or encoding.codec != "utf-8":
        return encoding
    if valid_utf8 is None:
        valid_utf8 = _valid_utf8(data[len(encoding.bom) :])
    return encoding if valid_utf8 else LATIN1


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


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
    with confined.directory(_split(target)[0], target.shown, create=True) as anchor:
        return anchor.created


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
    directory, name = _split(target)
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
    info = _regular(_lstat_in(anchor, name, target), target)
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
        fd = os.open(name, _READ_FLAGS, dir_fd=anchor.fd)
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
