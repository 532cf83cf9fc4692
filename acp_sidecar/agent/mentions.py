"""Mentions (``@file``): what a resource link names (Zed: ``file:///p#L10:20``, 1-based), and
where a prompt's text types a path with ``@``.

Pure and total: any URI gives a :class:`Mention`; a line range is kept only when well formed.
A typed ``@`` starts a mention only at a word's start and outside Markdown code.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Final, Literal, TypeAlias
from urllib.parse import unquote, urlsplit

import attrs

_LINES: Final = re.compile(r"L(\d+)(?:[:-]L?(\d+))?")
_TYPED: Final = re.compile(r'(?<![^\s(\[])@(?:"([^"\n]+)"|([^\s"`]+))')
"""``@`` at the start of a word, then a quoted path or the rest of the word."""
_TRAILING: Final = ".,;:!?)]}>'"
"""Punctuation that ends a sentence around a typed path rather than belonging to it."""
_BACKTICKS: Final = re.compile(r"`+")
_FENCE: Final = re.compile(r"[ ]{0,3}(```|~~~)")

TYPED_MAX: Final = 32
"""The most typed mentions one text block makes (the rest of its ``@``s are text)."""
TYPED_TEXT_MAX: Final = 256 * 1024
"""The longest text block searched for typed mentions, in characters: a longer one was
pasted, not typed, and searching it would only find ``@`` in someone else's text."""

MentionSource: TypeAlias = Literal["link", "embedded", "typed"]
"""Where a mention came from: a ``resource_link`` block, a ``resource`` block (the editor
sent the content), or only the prompt's text."""


@attrs.frozen
class Mention:
    """One mentioned resource."""

    uri: str
    """The URI as the editor sent it."""
    path: str | None = None
    """The absolute local path of a ``file:`` URI (``None`` for anything else)."""
    lines: tuple[int, int] | None = None
    """The 1-based, inclusive range of lines the mention selects, if it names one."""
    directory: bool = False
    """The URI names a directory (its path ends with ``/``, or it is one on disk)."""
    source: MentionSource = "link"
    """How the prompt carried it."""
    typed: str | None = None
    """What the prompt's text says for it (``@a.py``), when the text names it."""
    found: bool = True
    """Only typed: whether the path names something on disk (else the text may mean no file:
    ``@property``, ``@team``)."""

    @property
    def shown(self) -> str:
        """How the mention reads inside a command's text: its path, else its URI."""
        return self.uri if self.path is None else self.path

    @property
    def label(self) -> str:
        """A short name for messages: the file's name, else the URI."""
        return os.path.basename(self.path) if self.path else self.uri


def parse_mention(uri: str) -> Mention:
    """What ``uri`` names (see the module invariants)."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost") or not parts.path:
        return Mention(uri)
    raw = parts.path
    path = unquote(raw)  # POSIX paths, as the rest of the sidecar (urllib.request is heavy)
    directory = raw.endswith("/") and len(raw) > 1
    if directory:
        path = path.rstrip("/")
    return Mention(uri, path=path, lines=_line_range(parts.fragment), directory=directory)


def _line_range(fragment: str) -> tuple[int, int] | None:
    match = _LINES.fullmatch(fragment)
    if match is None:
        return None
    start = int(match.group(1))
    end = int(match.group(2) or start)
    return (start, end) if 1 <= start <= end else None


@attrs.frozen
class TypedPath:
    """A typed ``@path`` in a text: where it stands and the path it names."""

    start: int
    end: int
    """``text[start:end]`` is what was typed (``@a.py``, ``@"a b.txt"``)."""
    path: str
    """The path as typed (relative to the session's cwd unless absolute)."""


def typed_paths(text: str) -> list[TypedPath]:
    """The typed ``@path``s in ``text``, in order (see the module invariants): at most
    :data:`TYPED_MAX`, and none in a text longer than :data:`TYPED_TEXT_MAX`."""
    if len(text) > TYPED_TEXT_MAX:
        return []
    candidates = list(_TYPED.finditer(text))
    if not candidates:
        return []
    code = _code_ranges(text)
    starts = [start for start, _end in code]
    found: list[TypedPath] = []
    for match in candidates:
        at = bisect.bisect_right(starts, match.start()) - 1
        if at >= 0 and match.start() < code[at][1]:
            continue
        quoted, word = match.groups()
        path = quoted if quoted is not None else word.rstrip(_TRAILING)
        if not path:
            continue  # an `@` before punctuation only
        end = match.end() if quoted is not None else match.start() + 1 + len(path)
        found.append(TypedPath(match.start(), end, path))
        if len(found) == TYPED_MAX:
            break
    return found


def typed_mention(typed: TypedPath, text: str, cwd: str) -> Mention:
    """The mention a typed path makes, its path resolved against ``cwd`` (lexically: whether
    it exists is for the caller to find out)."""
    path = os.path.normpath(os.path.join(cwd, typed.path))
    return Mention(
        PurePosixPath(path).as_uri(),
        path=path,
        directory=typed.path.endswith("/"),
        source="typed",
        typed=text[typed.start : typed.end],
    )


def _code_ranges(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds Markdown code, in order: fenced blocks (to the end when
    unclosed) and inline spans of backticks between them. Linear in the text."""
    ranges: list[tuple[int, int]] = []
    fence: str | None = None
    opened = prose = offset = 0
    for line in text.splitlines(keepends=True):
        marker = _FENCE.match(line)
        if fence is None and marker is not None:
            ranges += _spans(text, prose, offset)
            fence, opened = marker.group(1), offset
        elif fence is not None and marker is not None and marker.group(1) == fence:
            ranges.append((opened, offset + len(line)))
            fence, prose = None, offset + len(line)
        offset += len(line)
    if fence is None:
        ranges += _spans(text, prose, len(text))
    else:
        ranges.append((opened, len(text)))
    return ranges


def _spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The code spans in ``text[start:end]``: a run of backticks opens one that the next run
    of the same length closes; a run that nothing closes is text (CommonMark's rule)."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text, start, end)]
    following: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        following[index] = last.get(length)
        last[length] = index
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        closer = following[index]
        if closer is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[closer][1]))
        index = closer + 1
    return spans


def join_words(parts: Iterable[str]) -> str:
    """The parts of a prompt (one per block) as one text, a space between two parts that
    would otherwise run together (``explain this`` and a link, ``/read`` and a path)."""
    joined: list[str] = []
    for part in parts:
        if not part:
            continue
        if joined and not joined[-1][-1].isspace() and not part[0].isspace():
            joined.append(" ")
        joined.append(part)
    return "".join(joined)
