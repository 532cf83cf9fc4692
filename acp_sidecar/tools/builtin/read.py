"""``read``: a window of a text file, with line numbers, from the editor's buffer or the disk.

Invariants:
- The model gets at most :data:`MAX_LINES` lines and :data:`MAX_BYTES` of text per call;
  longer lines are cut at :data:`MAX_LINE_CHARS` characters with a marker; a footer says
  which lines were shown and how to continue. Reading from disk streams the file in 1 MiB
  chunks and holds at most :data:`LINE_BYTES_KEPT` bytes of any line, so a huge file — or a
  gigabyte-long line — costs one pass and the memory of a chunk and the window. The reading
  thread checks cancellation once per chunk and stops when the call ends.
- The encoding is decided as ``write`` and ``edit`` decide it
  (:func:`~.files.encoding.text_encoding`): a file without a UTF-16/32 mark that is not valid UTF-8
  as a whole is decoded as Latin-1 and says so, so what the model reads is exactly what a
  write of it stores. Up to :data:`~.files.textfile.MAX_DOCUMENT_BYTES` the whole file is checked
  first, in a streaming pass of its own (chunks, no more memory); a larger file, which no
  write loads, is judged on its first 8 KiB, and stray bytes later in it are shown as U+FFFD.
- A file with other hard links is read, with a note in the text, ``other_links`` in meta
  and the count in the result card's title (the other names may be outside the workspace).
- When the editor serves reads, the text is the editor's (unsaved changes included); the
  file must still exist on disk, and the binary check is made on disk.
- The card is generic, ``kind: "read"``, with a location at the window's first line;
  ``present_result`` depends on ``(args, result.meta)`` only.
"""

from __future__ import annotations

import asyncio
import codecs
import threading
from collections.abc import Callable, Iterator
from typing import Annotated, BinaryIO

import attrs

from acp_sidecar.tools.builtin.errors import BinaryFileError
from acp_sidecar.tools.builtin.files.encoding import LATIN1, SNIFF_BYTES, Encoding, text_encoding
from acp_sidecar.tools.builtin.files.paths import WorkspacePath, resolve_path
from acp_sidecar.tools.builtin.files.textfile import (
    MAX_DOCUMENT_BYTES,
    editor_read,
    open_file,
    require_file,
    sniff_file,
)
from acp_sidecar.tools.content import ToolOutput
from acp_sidecar.tools.context import tool_context
from acp_sidecar.tools.definition import define_tool
from acp_sidecar.tools.errors import ToolArgsError, ToolCancelledError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.presentation import (
    FileLocation,
    GenericCallView,
    GenericResultView,
    ToolResult,
)

MAX_LINES = 2000
"""Lines per call."""
MAX_BYTES = 256 * 1024
"""Bytes of model-facing text per call (UTF-8)."""
MAX_LINE_CHARS = 2000
"""Characters kept of one line."""


@attrs.frozen
class ReadArgs:
    """The parameters of ``read``."""

    path: Annotated[
        str, "The file to read: a path relative to the workspace root, or an absolute path."
    ]
    offset: Annotated[
        int | None,
        "The 1-based line number to start reading at (default 1). Use it to page through a "
        "long file: each result says which offset continues it.",
    ] = None
    limit: Annotated[
        int | None, f"The maximum number of lines to return (default and maximum {MAX_LINES})."
    ] = None


@attrs.define
class _Window:
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
class _Outcome:
    window: _Window
    total: int
    encoding: str
    links: int = 1
    """The file's hard-link count (``st_nlink``)."""


def _text_lines(text: str) -> list[str]:
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _window_of_text(text: str, start: int, limit: int, encoding: str) -> _Outcome:
    window = _Window(start, limit)
    lines = _text_lines(text)
    for index in range(start - 1, len(lines)):
        line = lines[index]
        if not window.offer(index + 1, line[:-1] if line.endswith("\r") else line):
            break
    return _Outcome(window, len(lines), encoding)


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


def _decode_line(raw: bytes, encoding: Encoding, window: _Window, *, cut: bool) -> str:
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


def _read_disk(
    target: WorkspacePath, start: int, limit: int, cancelled: Callable[[], bool]
) -> _Outcome:
    with open_file(target) as (stream, info):
        encoding = _encoding(stream, info.st_size, target, cancelled)
        stream.seek(len(encoding.bom))
        if encoding.codec in ("utf-8", "latin-1"):
            count = _utf8_chars if encoding.codec == "utf-8" else len
            lines = _Lines(_chunks(stream), cancelled, count)
        else:
            lines = _Lines(_transcoded(stream, encoding.codec), cancelled, _utf8_chars)
        window = _Window(start, limit)
        number = lines.skip(start - 1)
        for raw, dropped in lines:
            number += 1
            text = _decode_line(raw, encoding, window, cut=dropped > 0)
            if not window.offer(number, text, len(text) + dropped):
                return _Outcome(window, number + lines.count_rest(), encoding.label, info.st_nlink)
        return _Outcome(window, number, encoding.label, info.st_nlink)


def _check_window(args: ReadArgs) -> tuple[int, int]:
    problems = []
    if args.offset is not None and args.offset < 1:
        problems.append(
            f"/offset: must be 1 or more (lines are numbered from 1), got {args.offset}"
        )
    if args.limit is not None and args.limit < 1:
        problems.append(f"/limit: must be 1 or more, got {args.limit}")
    if problems:
        raise ToolArgsError(problems)
    return args.offset or 1, min(args.limit or MAX_LINES, MAX_LINES)


def links_note(links: int) -> str:
    """The note on a file with other hard links (``links``: its ``st_nlink``)."""
    others = links - 1
    names = "1 other link" if others == 1 else f"{others:,} other links"
    return (
        f"note: this file has {names} (hard links), which may be outside the workspace; "
        "a write or edit here replaces only this name and leaves the others as they are."
    )


def _render(target: WorkspacePath, outcome: _Outcome) -> str:
    window, total = outcome.window, outcome.total
    note = [f"[{links_note(outcome.links)}]"] if outcome.links > 1 else []
    if total == 0:
        return "\n".join([f"[{target.shown} is empty.]", *note])
    parts = ["\n".join(window.lines)]
    if window.end < total:
        why = " (the 256 KiB per-call limit was reached)" if window.stopped_by_bytes else ""
        parts.append(
            f"[Lines {window.start}–{window.end} of {total}{why}. "
            f"Continue with offset={window.end + 1}.]"
        )
    elif window.start > 1:
        parts.append(f"[Lines {window.start}–{window.end} of {total}; end of file.]")
    if window.cut_lines:
        parts.append(
            f"[{window.cut_lines} line(s) longer than {MAX_LINE_CHARS:,} characters were cut.]"
        )
    if window.lossy:
        parts.append("[The file is not valid UTF-8; undecodable bytes are shown as U+FFFD (�).]")
    if outcome.encoding not in ("utf-8", "utf-8 with BOM"):
        parts.append(f"[Decoded from {outcome.encoding}.]")
    return "\n".join(parts + note)


async def execute_read(args: ReadArgs, execution: ToolExecution) -> ToolOutput:
    """Run one ``read`` call."""
    ctx = tool_context(execution)
    target = resolve_path(ctx, args.path)
    start, limit = _check_window(args)
    files = ctx.files
    if files is not None and files.can_read:
        info = await asyncio.to_thread(require_file, target)
        if await asyncio.to_thread(sniff_file, target) is None:
            raise BinaryFileError(f"{target.shown} is a binary file; only text files can be read.")
        text = await editor_read(files, target)
        outcome = attrs.evolve(_window_of_text(text, start, limit, "utf-8"), links=info.st_nlink)
        source = "editor"
    else:
        stop = threading.Event()
        remove = (
            execution.signal.add_callback(lambda _reason: stop.set()) if execution.signal else None
        )
        try:
            outcome = await asyncio.to_thread(_read_disk, target, start, limit, stop.is_set)
        finally:
            stop.set()  # the call is over, however it ended: the thread stops at its next chunk
            if remove is not None:
                remove()
        source = "disk"
    if outcome.total and start > outcome.total:
        raise ToolArgsError(
            [f"/offset: {start} is past the end of {target.shown}, which has {outcome.total} lines"]
        )
    if not outcome.total and start > 1:
        raise ToolArgsError([f"/offset: {start} is past the end of {target.shown}, which is empty"])
    window = outcome.window
    return ToolOutput(
        _render(target, outcome),
        meta={
            "path": target.path,
            "start_line": window.start if outcome.total else 0,
            "end_line": window.end if outcome.total else 0,
            "total_lines": outcome.total,
            "source": source,
            **({"other_links": outcome.links - 1} if outcome.links > 1 else {}),
        },
    )


def present_read_call(args: ReadArgs) -> GenericCallView:
    """The pending card: generic, ``kind: "read"``, located at the first line read."""
    return GenericCallView(
        card="generic",
        title=f"Read {args.path}",
        kind="read",
        raw_input=attrs.asdict(args, filter=lambda _a, v: v is not None),
        locations=[FileLocation(path=args.path, line=args.offset or 1)],
    )


def present_read_result(args: ReadArgs, result: ToolResult) -> GenericResultView | None:
    """The completed card: the title says which lines were read."""
    meta = result.meta
    if result.is_error or not isinstance(meta, dict) or "total_lines" not in meta:
        return None
    total, start, end = meta.get("total_lines"), meta.get("start_line"), meta.get("end_line")
    others = meta.get("other_links")
    links = (
        f"; {others:,} other hard link{'s' if others > 1 else ''}"
        if (isinstance(others, int) and others > 0)
        else ""
    )
    if not total:
        return GenericResultView(card="generic", title=f"Read {args.path} (empty{links})")
    return GenericResultView(
        card="generic", title=f"Read {args.path} (lines {start}–{end} of {total}{links})"
    )


read_tool = define_tool(
    name="read",
    description=(
        "Read a text file in the workspace. Returns its lines prefixed with their 1-based line "
        f"numbers and a tab, at most {MAX_LINES:,} lines and 256 KiB per call; lines longer "
        f"than {MAX_LINE_CHARS:,} characters are cut. A footer tells you when there is more "
        "and which offset continues. When the editor has the file open, you read its current "
        "contents, unsaved changes included. Binary files are refused; a file that is not "
        "valid UTF-8 is decoded as Latin-1 (and edit and write keep it Latin-1). A note says "
        "when the file has other hard links. The line-number prefix is not part of the file: "
        "leave it out of edit's old_string."
    ),
    parameters=ReadArgs,
    execute=execute_read,
    present_call=present_read_call,
    present_result=present_read_result,
    read_only=True,
)
