"""Text files on disk and through the editor: sniffing, decoding that round-trips, atomic writes.

Invariants:
- A file is *binary* when its first 8 KiB contain a NUL byte and it does not start with a
  UTF-16/UTF-32 byte-order mark (the rule ``read``, ``edit``, ``write`` and ``grep`` share).
- Decoding keeps what encoding back needs: the BOM, the codec, and for UTF-8 files every
  undecodable byte (as a surrogate escape), so ``encode_document(decode_document(b))`` gives
  ``b`` back byte for byte. Text shown to the model or stored in meta goes through
  :func:`printable` first (undecodable bytes become U+FFFD).
- :func:`atomic_write` never leaves a half-written file: the data goes to a temporary file in
  the same directory, is flushed to disk, takes the old file's mode, and replaces the file with
  one ``os.replace``. On any failure the temporary file is removed and the original is intact.
- Every ``OSError`` is mapped to a built-in error with a message naming the path as shown.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Sequence
from typing import BinaryIO, TypeAlias

import attrs

from acp_sidecar.tools.builtin.errors import (
    BinaryFileError,
    EditorFileError,
    FileIOError,
    FileTooLargeError,
    IsDirectoryError,
    NotDirectoryError,
    PathNotFoundError,
    PermissionDeniedError,
)
from acp_sidecar.tools.builtin.paths import WorkspacePath
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


@attrs.frozen
class TextDocument:
    """A decoded text file."""

    text: str
    """The text; for UTF-8 files undecodable bytes are kept as surrogate escapes."""
    encoding: Encoding
    lossy: bool = False
    """The file had bytes that are not valid in its encoding (kept, but shown as U+FFFD)."""


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
    encoding = sniff_encoding(data[:SNIFF_BYTES])
    if encoding is None:
        return None
    body = data[len(encoding.bom) :]
    if encoding.codec == "utf-8":
        try:
            return TextDocument(body.decode("utf-8"), encoding)
        except UnicodeDecodeError:
            return TextDocument(body.decode("utf-8", "surrogateescape"), encoding, lossy=True)
    try:
        return TextDocument(body.decode(encoding.codec), encoding)
    except UnicodeDecodeError:
        return None  # a UTF-16/32 mark on data that is not: treat as binary


def encode_document(text: str, encoding: Encoding) -> bytes:
    """The bytes of ``text`` in ``encoding`` (undecodable UTF-8 bytes restored)."""
    errors = "surrogateescape" if encoding.codec == "utf-8" else "strict"
    return encoding.bom + text.encode(encoding.codec, errors)


def printable(text: str) -> str:
    """``text`` with surrogate escapes (undecodable bytes) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return text


# --- local files ------------------------------------------------------------------------------


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
    """
    info = _stat(target)
    if info is None:
        return None
    if stat.S_ISDIR(info.st_mode):
        raise IsDirectoryError(
            f"{target.shown} is a directory, not a file. Use glob to list its files."
        )
    if not stat.S_ISREG(info.st_mode):
        raise FileIOError(f"{target.shown} is not a regular file.")
    return info


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


def open_for_reading(target: WorkspacePath) -> BinaryIO:
    """Open an existing file for binary reading, with the errors mapped."""
    try:
        fd = os.open(target.real, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError as exc:
        raise PathNotFoundError(f"{target.shown} does not exist.") from exc
    except IsADirectoryError as exc:
        raise IsDirectoryError(f"{target.shown} is a directory, not a file.") from exc
    except PermissionError as exc:
        raise PermissionDeniedError(f"Permission denied: cannot read {target.shown}.") from exc
    except OSError as exc:
        raise FileIOError(f"Cannot read {target.shown}: {exc.strerror or exc}.") from exc
    return os.fdopen(fd, "rb")


def read_bytes(target: WorkspacePath, *, verb: str) -> tuple[bytes, Encoding]:
    """Load a whole existing text file's bytes and its encoding (blocking; use a thread).

    ``verb`` completes the messages ("… only text files can be {verb}").

    Raises:
        PathNotFoundError, IsDirectoryError, PermissionDeniedError, FileIOError,
        FileTooLargeError, BinaryFileError.
    """
    info = require_file(target)
    if info.st_size > MAX_DOCUMENT_BYTES:
        raise FileTooLargeError(
            f"{target.shown} is {info.st_size:,} bytes; files up to "
            f"{MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB can be {verb}."
        )
    with open_for_reading(target) as stream:
        try:
            data = stream.read()
        except OSError as exc:
            raise FileIOError(f"Cannot read {target.shown}: {exc.strerror or exc}.") from exc
    encoding = sniff_encoding(data[:SNIFF_BYTES])
    if encoding is None:
        raise BinaryFileError(f"{target.shown} is a binary file; only text files can be {verb}.")
    return data, encoding


def read_document(target: WorkspacePath, *, verb: str) -> TextDocument:
    """Load and decode a whole existing text file (blocking; run it in a thread).

    Raises:
        Everything :func:`read_bytes` raises.
    """
    data, _encoding = read_bytes(target, verb=verb)
    document = decode_document(data)
    if document is None:
        raise BinaryFileError(f"{target.shown} is a binary file; only text files can be {verb}.")
    return document


def sniff_file(target: WorkspacePath) -> Encoding | None:
    """The encoding of an existing file from its first bytes (``None``: binary)."""
    with open_for_reading(target) as stream:
        try:
            head = stream.read(SNIFF_BYTES)
        except OSError as exc:
            raise FileIOError(f"Cannot read {target.shown}: {exc.strerror or exc}.") from exc
    return sniff_encoding(head)


def make_parents(target: WorkspacePath) -> None:
    """Create the missing parent directories of ``target``."""
    parent = os.path.dirname(target.real)
    try:
        os.makedirs(parent, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise NotDirectoryError(
            f"Cannot create {target.shown}: part of its parent path is a file, not a directory."
        ) from exc
    except PermissionError as exc:
        raise PermissionDeniedError(
            f"Permission denied: cannot create the directories for {target.shown}."
        ) from exc
    except OSError as exc:
        raise FileIOError(
            f"Cannot create the directories for {target.shown}: {exc.strerror or exc}."
        ) from exc


Chunks: TypeAlias = "Sequence[bytes | memoryview]"
"""File content as pieces written one after the other (so a splice needs no copy)."""


def _write_all(fd: int, chunks: Chunks) -> None:
    for chunk in chunks:
        view = memoryview(chunk)
        while view:
            written = os.write(fd, view)
            view = view[written:]


def atomic_write(target: WorkspacePath, data: bytes | Chunks) -> None:
    """Replace (or create) ``target`` with ``data`` atomically, keeping an old file's mode.

    ``data`` is the content, or a sequence of pieces that make it up. Blocking; run it in a
    thread. The parent directory must exist.

    Raises:
        PermissionDeniedError: the file is read-only or its directory is not writable.
        FileIOError: anything else; the original file is untouched and no temporary is left.
    """
    path = target.real
    info = existing_file(target)
    if info is not None and not os.access(path, os.W_OK):
        raise PermissionDeniedError(f"Permission denied: {target.shown} is read-only.")
    directory, name = os.path.split(path)
    temporary = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
    try:
        # 0o666 lets the umask decide a new file's mode, as any editor's save would.
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except PermissionError as exc:
        raise PermissionDeniedError(
            f"Permission denied: cannot write in the directory of {target.shown}."
        ) from exc
    except OSError as exc:
        raise FileIOError(f"Cannot write {target.shown}: {exc.strerror or exc}.") from exc
    try:
        try:
            _write_all(fd, [data] if isinstance(data, bytes) else data)
            os.fsync(fd)
            if info is not None:
                os.fchmod(fd, stat.S_IMODE(info.st_mode))
                if (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
                    with contextlib.suppress(OSError):  # only a privileged user can
                        os.fchown(fd, info.st_uid, info.st_gid)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            reason = "no space left on device" if exc.errno == errno.ENOSPC else exc.strerror
            raise FileIOError(
                f"Cannot write {target.shown}: {reason or exc}. The file was left unchanged."
            ) from exc
        raise


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
