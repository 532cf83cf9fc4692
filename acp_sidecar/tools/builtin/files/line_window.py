"""A window of numbered lines of a text file, for ``read``: from a text, or streamed from disk.

Bounded in lines, bytes and line length; reading from disk is one pass holding a chunk and
the window. The encoding is decided as ``write`` and ``edit`` decide it.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator
from typing import BinaryIO

import attrs

from acp_sidecar.tools.builtin.errors import BinaryFileError
from acp_sidecar.tools.builtin.files.encoding import LATIN1, SNIFF_BYTES, Encoding, text_encoding
from acp_sidecar.tools.builtin.files.paths import WorkspacePath
from acp_sidecar.tools.builtin.files.textfile import MAX_DOCUMENT_BYTES, open_file
from acp_sidecar.tools.errors import ToolCancelledError

MAX_BYTES = 256 * 1024
"""Bytes of model-facing text per call (UTF-8)."""
MAX_LINE_CHARS = 2000
"""Characters kept of one line."""


@attrs.define
class Window:
    """Numbered lines collected until a limit is reached."""

    start: int
    limit: int
    lines: list[str] = attrs.Factory(list)
    size: int = 0
    cut_lines: int = 0
    lossy: bool = False
    full: bool = False
    stopped_by_bytes: bool = False

    @property
    def end(self) -> int:
        return self.start + len(self.lines) - 1

    def offer(self, number: int, text: str, length: int | None = None) -> bool:
        """Add line ``number`` (``length``: its characters, when ``text`` is only its start);
        ``False`` (and the window is full) when it does not fit."""
        if len(self.lines) >= self.limit:
            self.full = True
            return False
        length = len(text) if length is None else length
        if length > MAX_LINE_CHARS:
            text = f"{text[:MAX_LINE_CHARS]} … [line cut: {length:,} characters]"
            self.cut_lines += 1
        entry = f"{number:>6}\t{text}"
        size = len(entry.encode("utf-8", "replace")) + 1
        if self.lines and self.size + size > MAX_BYTES:
            self.full = self.stopped_by_bytes = True
            return False
        self.lines.append(entry)
        self.size += size
        return True


@attrs.frozen
class Outcome:
    """A window read, with what the footer and meta say about the whole file."""

    window: Window
    total: int
    """The file's line count."""
    encoding: str
    """The encoding's label (:attr:`Encoding.label`)."""
    links: int = 1
    """The file's hard-link count (``st_nlink``)."""


def _text_lines(text: str) -> list[str]:
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def window_of_text(text: str, start: int, limit: int, encoding: str) -> Outcome:
    """The window of up to ``limit`` lines from line ``start`` of ``text`` (the editor's)."""
    window = Window(start, limit)
    lines = _text_lines(text)
    for index in range(start - 1, len(lines)):
        line = lines[index]
        if not window.offer(index + 1, line[:-1] if line.endswith("\r") else line):
            break
    return Outcome(window, len(lines), encoding)


LINE_BYTES_KEPT = MAX_LINE_CHARS * 4
"""Bytes of one line held in memory: enough for :data:`MAX_LINE_CHARS` characters of UTF-8."""
CHUNK_BYTES = 1 << 20
"""Bytes read at a time; with :data:`LINE_BYTES_KEPT`, all a read holds of the file."""
_CONTINUATION = bytes(range(0x80, 0xC0))


def _utf8_chars(data: bytes) -> int:
    """Characters in UTF-8 ``data`` (continuation bytes do not start one)."""
    return len(data.translate(None, _CONTINUATION))


class _Lines:
    """The lines of a stream of byte chunks, each held only up to :data:`LINE_BYTES_KEPT`.

    Iterating gives ``(kept bytes, characters left out)``; a line of any length costs one
    chunk and the kept bytes. :meth:`count_rest` counts the lines after the last one taken.
    Both check ``cancelled`` once per chunk.
    """

    def __init__(
        self, chunks: Iterator[bytes], cancelled: Callable[[], bool], count: Callable[[bytes], int]
    ) -> None:
        self._chunks = chunks
        self._cancelled = cancelled
        self._count = count
        self._buffer = b""
        self._at = 0

    def _next_chunk(self) -> bytes:
        if self._cancelled():
            raise ToolCancelledError("the read was cancelled")
        return next(self._chunks, b"")

    def __iter__(self) -> Iterator[tuple[bytes, int]]:
        kept = bytearray()
        dropped = 0
        while True:
            end = self._buffer.find(b"\n", self._at)
            stop = len(self._buffer) if end < 0 else end
            room = LINE_BYTES_KEPT - len(kept)
            if room >= stop - self._at:
                kept += self._buffer[self._at : stop]
            else:
                kept += self._buffer[self._at : self._at + max(room, 0)]
                dropped += self._count(self._buffer[self._at + max(room, 0) : stop])
            if end >= 0:
                self._at = end + 1
                yield bytes(kept), dropped
                kept, dropped = bytearray(), 0
                continue
            self._buffer, self._at = self._next_chunk(), 0
            if not self._buffer:
                if kept or dropped:
                    yield bytes(kept), dropped
                return

    def skip(self, count: int) -> int:
        """Pass over up to ``count`` lines without keeping any of them; how many there were.

        Whole chunks are counted at once, so skipping is as fast as counting.
        """
        passed, pending = 0, False
        while True:
            newlines = self._buffer.count(b"\n", self._at)
            if passed + newlines >= count:
                while passed < count:
                    self._at = self._buffer.index(b"\n", self._at) + 1
                    passed += 1
                return passed
            passed += newlines
            last = self._buffer.rfind(b"\n", self._at)
            if last >= 0:
                pending = last < len(self._buffer) - 1
            elif self._at < len(self._buffer):
                pending = True
            self._buffer, self._at = self._next_chunk(), 0
            if not self._buffer:
                return passed + (1 if pending else 0)

    def count_rest(self) -> int:
        """The number of lines after the last one taken (a final line without \\n counts)."""
        rest = self._buffer[self._at :]
        lines, last = rest.count(b"\n"), rest[-1:] or b"\n"
        while chunk := self._next_chunk():
            lines += chunk.count(b"\n")
            last = chunk[-1:]
        return lines + (0 if last == b"\n" else 1)


def _decode_line(raw: bytes, encoding: Encoding, window: Window, *, cut: bool) -> str:
    raw = raw[:-1] if raw.endswith(b"\r") else raw
    if encoding == LATIN1:
        return raw.decode("latin-1")
    if cut:  # the kept part may end inside a character: that is no decoding error
        raw = raw.rstrip(_CONTINUATION)
        raw = raw[:-1] if raw[-1:] >= b"\xc0" else raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        window.lossy = True
        return raw.decode("utf-8", "replace")


def _chunks(stream: BinaryIO) -> Iterator[bytes]:
    return iter(lambda: stream.read(CHUNK_BYTES), b"")


def _transcoded(stream: BinaryIO, codec: str) -> Iterator[bytes]:
    """A UTF-16/32 stream as UTF-8 chunks (so lines split on a one-byte newline)."""
    decoder = codecs.getincrementaldecoder(codec)("replace")
    for chunk in _chunks(stream):
        yield decoder.decode(chunk).encode("utf-8", "surrogatepass")
    yield decoder.decode(b"", final=True).encode("utf-8", "surrogatepass")


def _valid_utf8(stream: BinaryIO, skip: int, cancelled: Callable[[], bool]) -> bool:
    """Whether the rest of ``stream`` after ``skip`` bytes is valid UTF-8 (one pass in chunks)."""
    stream.seek(skip)
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for chunk in _chunks(stream):
            if cancelled():
                raise ToolCancelledError("the read was cancelled")
            decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _encoding(
    stream: BinaryIO, size: int, target: WorkspacePath, cancelled: Callable[[], bool]
) -> Encoding:
    """The file's encoding, decided on the whole file as ``write`` and ``edit`` decide it."""
    head = stream.read(SNIFF_BYTES)
    sniffed = text_encoding(head, valid_utf8=True)
    if sniffed is None:
        raise BinaryFileError(f"{target.shown} is a binary file; only text files can be read.")
    if sniffed.codec != "utf-8":
        return sniffed
    if size <= MAX_DOCUMENT_BYTES:
        valid = _valid_utf8(stream, len(sniffed.bom), cancelled)
    else:  # no write loads it: the head decides; a character cut at its end is no evidence
        cut = len(head) == SNIFF_BYTES
        valid = _valid_head(head[len(sniffed.bom) :], cut=cut)
    return sniffed if valid else LATIN1


def _valid_head(head: bytes, *, cut: bool) -> bool:
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        decoder.decode(head, final=not cut)
    except UnicodeDecodeError:
        return False
    return True


def read_disk(
    target: WorkspacePath, start: int, limit: int, cancelled: Callable[[], bool]
) -> Outcome:
    """The window of up to ``limit`` lines from line ``start`` of the file on disk, streamed.

    Blocking; run it in a thread.

    Raises:
        BinaryFileError: the file is binary.
        ToolCancelledError: ``cancelled`` became true.
        Everything :func:`~.textfile.open_file` raises.
    """
    with open_file(target) as (stream, info):
        encoding = _encoding(stream, info.st_size, target, cancelled)
        stream.seek(len(encoding.bom))
        if encoding.codec in ("utf-8", "latin-1"):
            count = _utf8_chars if encoding.codec == "utf-8" else len
            lines = _Lines(_chunks(stream), cancelled, count)
        else:
            lines = _Lines(_transcoded(stream, encoding.codec), cancelled, _utf8_chars)
        window = Window(start, limit)
        number = lines.skip(start - 1)
        for raw, dropped in lines:
            number += 1
            text = _decode_line(raw, encoding, window, cut=dropped > 0)
            if not window.offer(number, text, len(text) + dropped):
                return Outcome(window, number + lines.count_rest(), encoding.label, info.st_nlink)
        return Outcome(window, number, encoding.label, info.st_nlink)
