"""A message's own Markdown, kept as Markdown but unable to reach outside itself: no raw HTML,
no image (it would be fetched when viewed: it becomes a link), every fence closed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Final

from markdown_it import MarkdownIt
from markdown_it.token import Token

from acp_sidecar.export.gfm import normalise

_PARSER: Final = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
"""The reading of Markdown used to find code, HTML and images: CommonMark with GitHub's tables
and strikethrough, raw HTML on, as GitHub (cmark-gfm) reads it."""

_BLOCKS: Final = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
"""The same reading, blocks only (the inline pass is a good half of the time, and finding
code blocks does not need it)."""
_BLOCKS.core.ruler.disable(["inline"])

_BACKTICKS: Final = re.compile(r"`+")
_UNSAFE_TOKENS: Final = frozenset({"html_block", "html_inline", "image"})


def _tokens(tokens: Iterable[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        if token.children:
            yield from _tokens(token.children)


def _holds_html(tokens: Iterable[Token]) -> bool:
    return any(t.type in ("html_block", "html_inline") for t in _tokens(tokens))


def _unsafe(tokens: Iterable[Token]) -> bool:
    return any(t.type in _UNSAFE_TOKENS for t in _tokens(tokens))


def holds_html(markdown: str) -> bool:
    """Whether ``markdown``, read as GitHub reads it, holds any raw HTML."""
    return _holds_html(_PARSER.parse(markdown))


def _escape_inline(text: str, *, spare_spans: bool) -> str:
    """``<`` as ``&lt;`` and an image's ``!`` as ``\\!`` (the rest of the image is then a
    link), except where a backslash already makes them literal and, with ``spare_spans``,
    inside code spans (CommonMark's backtick-run rule)."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char == "`" and spare_spans:
            run_end = i
            while run_end < n and text[run_end] == "`":
                run_end += 1
            run = run_end - i
            close = _closing_run(text, run_end, run)
            if close is None:
                out.append(text[i:run_end])
                i = run_end
            else:
                out.append(text[i : close + run])
                i = close + run
            continue
        if char == "\\" and i + 1 < n and text[i + 1] in "\\`<!":
            out.append(text[i : i + 2])  # an escaped backtick opens nothing; \< \! are literal
            i += 2
            continue
        if char == "<":
            out.append("&lt;")
        elif char == "!" and text.startswith("[", i + 1):
            out.append("\\!")
        else:
            out.append(char)
        i += 1
    return "".join(out)


def _closing_run(text: str, start: int, length: int) -> int | None:
    """Where the next backtick run of exactly ``length`` starts, at or after ``start``."""
    for match in _BACKTICKS.finditer(text, start):
        if len(match.group()) == length:
            return match.start()
    return None


def _is_closing_fence(line: str, markup: str) -> bool:
    body = line.lstrip(" ")
    if len(line) - len(body) > 3:  # four spaces in, it is code inside the fence
        return False
    body = body.rstrip(" \t")
    return len(body) >= len(markup) and set(body) == {markup[0]}


def safe_markdown(text: str) -> str:
    """A message's own Markdown made safe (see the module invariants).

    The approximation, in four steps:

    1. ``text`` is read with markdown-it-py as GitHub reads it (CommonMark, tables, HTML on).
       Lines inside fenced and indented code blocks (the tokens' line ``map``s) are kept
       verbatim. In every other block (a paragraph, heading or table's line range, or any
       other line) each ``<`` becomes ``&lt;`` and each ``![`` becomes ``\\![`` except inside
       a code span, found by CommonMark's rule (a backtick run up to the next run of the same
       length) — so raw HTML, HTML comments and autolinks show as text, an image is a link,
       and code keeps its ``<``.
    2. The result is read again; if it still holds HTML or an image (the span scan and the
       parser disagreed, e.g. on a table row that ``|`` splits inside backticks), step 1 is
       redone without sparing code spans; code blocks keep theirs.
    3. If even that holds any (the escaping changed which lines are code), every ``<`` and
       every ``![`` are escaped as entities, code blocks included: ugly, never HTML.
    4. A top-level fence left open at the end (which would swallow the rest of the
       document) is closed with its own fence.

    Link destinations are left to the renderer: GitHub (as markdown-it) drops
    ``javascript:``, ``vbscript:``, ``file:`` and non-image ``data:`` links.
    """
    text = normalise(text).strip("\n")
    if not text:
        return ""
    if "<" not in text and "![" not in text:  # no HTML without "<", no image without "!["
        if "`" not in text and "~" not in text:  # and no fence without one of these
            return text + "\n"
        return _close_open_fence(text, _BLOCKS.parse(text)) + "\n"
    result = _escape_outside_code(text, spare_spans=True)
    tokens = _PARSER.parse(result)
    if _unsafe(tokens):
        result = _escape_outside_code(text, spare_spans=False)
        tokens = _PARSER.parse(result)
        if _unsafe(tokens):
            result = result.replace("<", "&lt;").replace("![", "&#33;[")
            tokens = _BLOCKS.parse(result)
    return _close_open_fence(result, tokens) + "\n"


def _escape_outside_code(text: str, *, spare_spans: bool) -> str:
    """Step 1 of :func:`safe_markdown` (``spare_spans``), or step 2."""
    lines = text.split("\n")
    verbatim: set[int] = set()
    spans: dict[int, int] = {}
    for token in _BLOCKS.parse(text):
        if token.map is None:
            continue
        first, last = token.map
        if token.type in ("fence", "code_block"):
            verbatim.update(range(first, last))
        elif token.type == "inline":
            spans.setdefault(first, max(last, first + 1))
    out: list[str] = []
    i = 0
    while i < len(lines):
        if i in verbatim:
            out.append(lines[i])
            i += 1
            continue
        end = spans.get(i, i + 1)
        while any(j in verbatim for j in range(i, end)):
            end -= 1  # never escape code lines, whatever an inline map claims
        block = "\n".join(lines[i:end])
        out.extend(_escape_inline(block, spare_spans=spare_spans).split("\n"))
        i = end
    return "\n".join(out)


def _close_open_fence(text: str, tokens: Iterable[Token]) -> str:
    """``text`` (read as ``tokens``) with a top-level fence that runs to its end closed.

    A fence without its closing line always runs to the end (its ``map`` may stop short of
    trailing blank lines), so any top-level fence not ending in a closing line is that one.
    """
    lines = text.split("\n")
    for token in tokens:
        if token.type != "fence" or token.level != 0 or token.map is None:
            continue
        first, last = token.map
        if last - first < 2 or not _is_closing_fence(lines[last - 1], token.markup):
            return f"{text}\n{token.markup}"
    return text
