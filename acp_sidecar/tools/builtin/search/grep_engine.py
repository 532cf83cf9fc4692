"""``grep``'s pure-Python engine (ripgrep's is :mod:`.ripgrep`; what both find, :mod:`.grep_match`).

It never blocks the server: ``regex`` with ``concurrent=True`` and a timeout per call; too many
slow lines give ``PATTERN_TOO_SLOW``. A file swapped since the walk listed it is skipped.
"""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, BinaryIO

from acp_sidecar.tools.builtin.errors import PatternTooSlowError
from acp_sidecar.tools.builtin.files.encoding import Encoding, sniff_encoding
from acp_sidecar.tools.builtin.search.grep_match import (
    Candidate,
    FileMatches,
    LineMatch,
    Pattern,
    SearchResult,
    line_local,
)

if TYPE_CHECKING:
    import regex

BLOCK_BYTES = 1024 * 1024
"""The Python engine reads files in blocks of this size, cut at line ends."""
MAX_LINE_BYTES = 8 * BLOCK_BYTES
"""The bytes of one line the Python engine searches: far above real source lines (minified
bundles included), and a bound on its memory. At least the block size (so a line that ends
inside one block is never longer)."""
MATCH_TIMEOUT_S = 0.5
"""The longest one match call may run: the bound on how late cancellation is noticed (a
sane pattern takes milliseconds on a whole block; one that takes this long on one line
backtracks catastrophically)."""
SLOW_LINES_LIMIT = 5
"""Lines on which the pattern may time out before the search gives up."""


def _lines_of(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _chunks(stream: BinaryIO, head: bytes, encoding: Encoding) -> Iterator[bytes]:
    """The file's content after its BOM, as UTF-8, in blocks of at most :data:`BLOCK_BYTES`."""
    if encoding.codec == "utf-8":
        yield head[len(encoding.bom) :]
        while chunk := stream.read(BLOCK_BYTES):
            yield chunk
        return
    # UTF-16: decoded a half block at a time, so each UTF-8 block stays under a block.
    decoder = codecs.getincrementaldecoder(encoding.codec)("replace")
    data = head[len(encoding.bom) :]
    while data:
        yield decoder.decode(data).encode("utf-8", "surrogatepass")
        data = stream.read(BLOCK_BYTES // 2)
    yield decoder.decode(b"", final=True).encode("utf-8", "surrogatepass")


def _line_blocks(chunks: Iterable[bytes]) -> Iterator[tuple[bytes, bool]]:
    """Blocks of whole lines, in order, with whether the block is one line cut short.

    A line longer than :data:`MAX_LINE_BYTES` comes as its first :data:`MAX_LINE_BYTES` alone
    (``True``); the rest of it is read past, never held. Memory: two blocks at most.
    """
    pending = bytearray()  # the start of an unfinished line: it holds no newline
    skipping = False  # reading past the rest of a line that was cut
    for chunk in chunks:
        if skipping:
            newline = chunk.find(b"\n")
            if newline < 0:
                continue
            chunk, skipping = chunk[newline + 1 :], False
        last = chunk.rfind(b"\n")
        if last < 0:
            pending += chunk
            if len(pending) > MAX_LINE_BYTES:
                yield bytes(pending[:MAX_LINE_BYTES]), True
                pending.clear()
                skipping = True
            continue
        first = chunk.find(b"\n")
        if len(pending) + first > MAX_LINE_BYTES:
            # pending holds at most MAX_LINE_BYTES (it would have been cut above).
            yield bytes(pending) + chunk[: MAX_LINE_BYTES - len(pending)], True
            pending.clear()
            chunk, last = chunk[first + 1 :], last - first - 1
            if last < 0:
                pending += chunk
                continue
            yield chunk[: last + 1], False
        else:
            yield bytes(pending) + chunk[: last + 1], False
        pending = bytearray(chunk[last + 1 :])
    if pending and not skipping:
        yield bytes(pending), False


class _Scan:
    """One Python-engine search: its pattern, its limits and what it found so far."""

    def __init__(self, pattern: Pattern, limit: int, cancelled: Callable[[], bool]) -> None:
        self.regex = pattern.engine
        self.block = pattern.block
        self.line_local = line_local(pattern.source.pattern)
        self.limit = limit
        self.cancelled = cancelled
        self.cut_lines = 0
        self.slow_lines: list[str] = []
        self.shown = ""
        self.out: list[LineMatch] = []

    def _search(self, text: str, position: int = 0) -> regex.Match[str] | None:
        """``regex.search`` of one line with the GIL released and the timeout (which it
        raises)."""
        return self.regex.search(text, position, concurrent=True, timeout=MATCH_TIMEOUT_S)

    def _search_block(self, text: str, position: int) -> regex.Match[str] | None:
        """The same over a block of lines, with ``MULTILINE``."""
        return self.block.search(text, position, concurrent=True, timeout=MATCH_TIMEOUT_S)

    def _each_line(self, text: str, first_line: int, cut: bool) -> None:
        for offset, content in enumerate(_lines_of(text)):
            if len(self.out) >= self.limit or self.cancelled():
                return
            try:
                found = self._search(content)
            except TimeoutError:
                self._slow(first_line + offset)
                continue
            if found:
                self.out.append(
                    LineMatch.of(first_line + offset, content.removesuffix("\r"), cut=cut)
                )

    def _slow(self, line: int) -> None:
        self.slow_lines.append(f"{self.shown}:{line}")
        if len(self.slow_lines) >= SLOW_LINES_LIMIT:
            raise PatternTooSlowError(
                f"The pattern took more than {MATCH_TIMEOUT_S:g} s on each of "
                f"{len(self.slow_lines)} lines ({', '.join(self.slow_lines)}), so grep gave up. "
                "It backtracks catastrophically: nested quantifiers such as (a+)+ or "
                "alternatives that overlap such as (a|a)+ try exponentially many ways. "
                "Simplify the pattern."
            )

    def search_text(self, text: str, first_line: int, cut: bool) -> None:
        """Search whole lines ``text`` (numbered from ``first_line``) into :attr:`out`."""
        if cut or not self.line_local:
            self._each_line(text, first_line, cut)
            return
        # The whole text is searched in C; only the lines it lands on are checked one by one.
        size = len(text)
        position = counted = 0
        line = first_line
        while len(self.out) < self.limit and not self.cancelled():
            try:
                found = self._search_block(text, position)
            except TimeoutError:
                # Too slow over the block: go on line by line, to find which line it is.
                line += text.count("\n", counted, position)
                self._each_line(text[position:], line, False)
                return
            if found is None:
                return
            start = text.rfind("\n", 0, found.start()) + 1
            if start >= size:
                return  # the empty "line" after a final newline is not a line
            end = text.find("\n", start)
            end = size if end < 0 else end
            line += text.count("\n", counted, start)
            counted = start
            content = text[start:end]
            try:
                if self._search(content):
                    self.out.append(LineMatch.of(line, content.removesuffix("\r")))
            except TimeoutError:
                self._slow(line)
            position = end + 1
            if position > size:
                return

    def search_file(self, candidate: Candidate, limit: int) -> list[LineMatch] | None:
        """Up to ``limit`` matching lines of one file; ``None`` when binary or unreadable."""
        self.shown, self.limit, self.out = candidate.shown, limit, []
        try:
            fd = _open(candidate)
            if fd is None:
                return None
            with open(fd, "rb", buffering=0) as stream:
                head = stream.read(BLOCK_BYTES)
                encoding = sniff_encoding(head)
                if encoding is None or encoding.codec.startswith("utf-32"):
                    return None
                if encoding.codec == "utf-8" and len(head) < BLOCK_BYTES:
                    # Most files are small: one read got it whole, and no line of it can be
                    # over the cap (a block is at most the cap).
                    more = stream.read(BLOCK_BYTES)
                    if not more:
                        text = head[len(encoding.bom) :].decode("utf-8", "replace")
                        self.search_text(text, 1, False)
                        return self.out
                    head += more
                line = 1
                for block, cut in _line_blocks(_chunks(stream, head, encoding)):
                    if len(self.out) >= limit or self.cancelled():
                        break
                    self.search_text(block.decode("utf-8", "replace"), line, cut)
                    self.cut_lines += cut
                    line += 1 if cut else block.count(b"\n")
        except OSError:
            return None
        return self.out


def _open(candidate: Candidate) -> int | None:
    """A descriptor of the candidate's file; ``None`` when it is no longer the file the walk
    listed (swapped for a symlink, a FIFO, another file) and must not be read."""
    if candidate.inode is None:
        return os.open(candidate.path, os.O_RDONLY | os.O_CLOEXEC)
    # O_NOFOLLOW: not through a symlink swapped in; O_NONBLOCK: a FIFO swapped in opens
    # without waiting for a writer (and is then refused as not the listed file).
    fd = os.open(candidate.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    # The inode alone: the listing gives no device without a stat per file, and overlay file
    # systems give a file a device of its layer. Inodes are unique on one file system, so
    # only a swap onto another one could meet the same number.
    if not stat.S_ISREG(info.st_mode) or info.st_ino != candidate.inode:
        os.close(fd)
        return None
    return fd


def python_search(
    candidates: Iterable[Candidate],
    pattern: Pattern,
    max_results: int,
    *,
    cancelled: Callable[[], bool] = lambda: False,
) -> SearchResult:
    """Search ``candidates`` in order (blocking; run it in a thread).

    Raises:
        PatternTooSlowError: the pattern timed out on :data:`SLOW_LINES_LIMIT` lines.
    """
    scan = _Scan(pattern, max_results + 1, cancelled)
    files: list[FileMatches] = []
    count = searched = 0

    def result(truncated: bool) -> SearchResult:
        kept = tuple(f for f in files if f.lines)
        slow = tuple(scan.slow_lines)
        return SearchResult(kept, truncated, "python", scan.cut_lines, slow, searched)

    for candidate in candidates:
        if cancelled():
            break
        found = scan.search_file(candidate, max_results - count + 1)
        if cancelled():
            break  # the file may have been left halfway
        searched += 1
        if not found:
            continue
        if count + len(found) > max_results:
            files.append(FileMatches(candidate.shown, tuple(found[: max_results - count])))
            return result(True)
        files.append(FileMatches(candidate.shown, tuple(found)))
        count += len(found)
    return result(False)
