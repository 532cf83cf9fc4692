"""What ``grep`` finds, and its pure-Python engine (ripgrep's is in :mod:`.ripgrep`).

Invariants — both engines give the same result for the same candidate files:
- The candidate files come from one place (:func:`~.walk.walk_files` and the ``glob`` filter),
  not from the engines, so ignore rules cannot differ; the engines only read contents.
- A line is the text between ``\\n`` characters, ``\\r`` included (so ``$`` does not match
  before the ``\\r`` of a CRLF line, as in grep and ripgrep); a UTF-8 BOM is skipped, a UTF-16
  file with a BOM is decoded. The ``\\r`` is dropped from the text shown.
- A file is skipped when it is binary by the shared rule (a NUL in the first 8 KiB and no
  UTF-16/32 BOM); UTF-32 files are skipped too (ripgrep does not decode them).
- Results are files in walk order, lines ascending; at most ``max_results`` lines, and
  ``truncated`` says whether there were more. Both engines stop reading early once they
  know there are more (see :mod:`.ripgrep` for how ripgrep does it).
- The pattern is Python ``re`` syntax. ripgrep is used only for patterns it accepts and
  reads alike; any pattern it rejects runs in Python instead (lookarounds, backreferences,
  ``\\Z``…), and patterns whose meaning differs (``(?x)``, POSIX-like ``[[:…:]]`` that Python
  warns about) go straight to Python. Remaining difference: on bytes that are not valid UTF-8,
  ripgrep matches raw bytes while Python matches U+FFFD.
"""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Callable, Iterable

import attrs

from acp_sidecar.tools.builtin.textfile import sniff_encoding
from acp_sidecar.tools.cancel import CancelSignal

BLOCK_BYTES = 1024 * 1024
"""The Python engine reads files in blocks of about this size, cut at line ends."""


@attrs.frozen
class Candidate:
    """A file to search."""

    path: str
    """Absolute path."""
    shown: str
    """How the results name it."""
    below: str
    """Its path relative to the directory searched (what ripgrep is given)."""


@attrs.frozen
class LineMatch:
    line: int
    """1-based line number."""
    text: str
    """The line, without its line ending."""


@attrs.frozen
class FileMatches:
    shown: str
    lines: tuple[LineMatch, ...]


@attrs.frozen
class SearchResult:
    files: tuple[FileMatches, ...]
    truncated: bool
    """There are more matching lines than were returned."""
    engine: str
    """``"rg"`` or ``"python"``."""

    @property
    def count(self) -> int:
        return sum(len(f.lines) for f in self.files)


def compile_pattern(pattern: str, *, case_insensitive: bool) -> tuple[re.Pattern[str], bool]:
    """The compiled pattern, and whether ripgrep may run it (see the module invariants).

    Raises:
        re.error: the pattern is not valid Python ``re`` syntax.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        regex = re.compile(pattern, re.IGNORECASE if case_insensitive else 0)
    rg_ok = not caught and "(?x" not in pattern and not (regex.flags & re.VERBOSE)
    return regex, rg_ok


_CONTEXTUAL = re.compile(r"\(\?<?[=!]")


def _line_local(pattern: str) -> bool:
    """Whether every match of ``pattern`` inside a line is also a match of it in the whole
    text at the same place — true unless it has anchors or lookarounds (``\\b``, ``\\B`` are
    fine: a newline is a non-word character, like the edge of a string)."""
    if _CONTEXTUAL.search(pattern):
        return False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            if pattern[index + 1 : index + 2] in ("A", "Z"):
                return False
            index += 2
            continue
        if char == "[":
            index += 1
            if pattern[index : index + 1] == "^":
                index += 1
            if pattern[index : index + 1] == "]":
                index += 1
            while index < len(pattern) and pattern[index] != "]":
                index += 2 if pattern[index] == "\\" else 1
        elif char in "^$":
            return False
        index += 1
    return True


# --- the Python engine ------------------------------------------------------------------------


def _lines_of(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _search_text(
    text: str,
    first_line: int,
    regex: re.Pattern[str],
    line_local: bool,
    limit: int,
    out: list[LineMatch],
) -> None:
    if not line_local:
        for offset, content in enumerate(_lines_of(text)):
            if len(out) >= limit:
                return
            if regex.search(content):
                out.append(LineMatch(first_line + offset, content.removesuffix("\r")))
        return
    # The whole text is searched in C; only the lines it lands on are checked one by one.
    size = len(text)
    position = counted = 0
    line = first_line
    while len(out) < limit:
        found = regex.search(text, position)
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
        if regex.search(content):
            out.append(LineMatch(line, content.removesuffix("\r")))
        position = end + 1
        if position > size:
            return


def search_file(
    path: str, regex: re.Pattern[str], line_local: bool, limit: int
) -> list[LineMatch] | None:
    """Up to ``limit`` matching lines of one file; ``None`` when it is binary or unreadable."""
    out: list[LineMatch] = []
    try:
        with open(path, "rb", buffering=0) as stream:
            # Most files are small: one read gets them whole.
            head = stream.read(BLOCK_BYTES)
            encoding = sniff_encoding(head)
            if encoding is None or encoding.codec.startswith("utf-32"):
                return None
            if encoding.codec != "utf-8":
                data = (head + stream.readall())[len(encoding.bom) :]
                _search_text(
                    data.decode(encoding.codec, "replace"), 1, regex, line_local, limit, out
                )
                return out
            pending = head[len(encoding.bom) :]
            line = 1
            done = False
            while not done and len(out) < limit:
                more = stream.read(BLOCK_BYTES)
                if more:
                    pending += more
                    cut = pending.rfind(b"\n")
                    if cut < 0:
                        continue  # one long line: read on
                    block, pending = pending[: cut + 1], pending[cut + 1 :]
                else:
                    block, pending, done = pending, b"", True
                _search_text(block.decode("utf-8", "replace"), line, regex, line_local, limit, out)
                if not done:
                    line += block.count(b"\n")
    except OSError:
        return None
    return out


def python_search(
    candidates: Iterable[Candidate],
    regex: re.Pattern[str],
    max_results: int,
    *,
    cancelled: Callable[[], bool] = lambda: False,
) -> SearchResult:
    """Search ``candidates`` in order (blocking; run it in a thread)."""
    line_local = _line_local(regex.pattern)
    files: list[FileMatches] = []
    count = 0
    for candidate in candidates:
        if cancelled():
            break
        found = search_file(candidate.path, regex, line_local, max_results - count + 1)
        if not found:
            continue
        if count + len(found) > max_results:
            files.append(FileMatches(candidate.shown, tuple(found[: max_results - count])))
            return SearchResult(tuple(f for f in files if f.lines), True, "python")
        files.append(FileMatches(candidate.shown, tuple(found)))
        count += len(found)
    return SearchResult(tuple(files), False, "python")


class ThreadCancel:
    """A cancel flag a worker thread can poll, set from a :class:`CancelSignal`."""

    def __init__(self, signal: CancelSignal | None) -> None:
        self._event = threading.Event()
        self._remove = signal.add_callback(lambda _reason: self._event.set()) if signal else None

    def __call__(self) -> bool:
        return self._event.is_set()

    def close(self) -> None:
        """Stop listening to the signal."""
        if self._remove is not None:
            self._remove()
