"""GitHub-flavoured Markdown primitives: literal text, unbreakable fences, code spans,
``<details>``, long parts clipped.

Each fragment is whole blocks ending in one ``"\\n"``, and nothing in it can leak into the next:
every fence and ``<details>`` it opens it closes, and text from the log can open neither.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Final

from acp_sidecar.export.clip import COLLAPSE_LINES, HEAD_LINES, TAIL_LINES, clip_lines
from acp_sidecar.text import harmless

_LINE_BREAK: Final = re.compile(r"\r\n?|\n")
_BACKTICKS: Final = re.compile(r"`+")
_INFO_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_+.#-]")


def normalise(text: str) -> str:
    """Line endings as every Markdown parser reads them (``\\r\\n`` and ``\\r`` are ``\\n``),
    control characters made visible."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return harmless(text)


def _longest_backticks(text: str) -> int:
    if "`" not in text:
        return 0
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)


def fence(text: str, info: str = "") -> str:
    """``text`` in a fenced code block that nothing in it can end.

    The fence is a backtick run longer than any in ``text`` (at least three), so no line of
    ``text`` can close it; ``info`` keeps only characters that are safe in an info string.
    """
    text = normalise(text)
    ticks = "`" * max(3, _longest_backticks(text) + 1)
    body = text if not text or text.endswith("\n") else text + "\n"
    return f"{ticks}{_INFO_UNSAFE.sub('', info)}\n{body}{ticks}\n"


def inline_code(text: str) -> str:
    """``text`` as one code span (line breaks become spaces, as they do inside a span)."""
    text = harmless(_LINE_BREAK.sub(" ", text))
    if not text:
        return "` `"
    ticks = "`" * (_longest_backticks(text) + 1)
    # A span's content loses one space at each end when it has both (and is not all spaces);
    # a backtick at an end would join the fence. Padding both ends keeps the text intact.
    pad = text[0] in "` " or text[-1] in "` "
    if text.strip(" ") == "":
        pad = False
    space = " " if pad else ""
    return f"{ticks}{space}{text}{space}{ticks}"


_ESCAPED: Final = frozenset("\\`*_[]|~$")
_STARTS_BLOCK: Final = re.compile(r"[#>+=-]|\d+[.)]")


def escape_text(text: str) -> str:
    """``text`` as inline Markdown that renders literally and cannot open HTML.

    Line breaks become spaces and the ends are trimmed (a title, path or plan entry is one
    line, and Markdown trims the ends anyway). Emphasis, code, link, table, strikethrough
    and math punctuation is backslash-escaped; ``<`` is always ``&lt;`` and ``&`` before
    what could be an entity ``&amp;``; a start that could open a block (heading, quote,
    list item, setext underline) is escaped too, so the text may begin a line.
    """
    text = harmless(_LINE_BREAK.sub(" ", text)).strip()
    out: list[str] = []
    for i, char in enumerate(text):
        if char in _ESCAPED:
            out.append("\\" + char)
        elif char == "<":
            out.append("&lt;")
        elif char == "&" and re.match(r"&#?[A-Za-z0-9]", text[i : i + 3]):
            out.append("&amp;")
        else:
            out.append(char)
    escaped = "".join(out)
    if start := _STARTS_BLOCK.match(escaped):
        end = start.end()
        escaped = escaped[: end - 1] + "\\" + escaped[end - 1 :]
    return escaped


def typed_text(text: str) -> str:
    """``text`` as Markdown that shows it as it was typed: every line literal
    (:func:`escape_text`), its indentation kept, its line breaks hard breaks, a blank line a new
    paragraph; ``""`` when there is nothing to show."""
    paragraphs: list[list[str]] = [[]]
    for line in normalise(text).split("\n"):
        if not line.strip():
            if paragraphs[-1]:
                paragraphs.append([])
            continue
        body = line.lstrip(" \t")
        indent = line[: len(line) - len(body)].replace("\t", "    ")
        paragraphs[-1].append("&#160;" * len(indent) + escape_text(body))
    shown = ["\\\n".join(lines) + "\n" for lines in paragraphs if lines]
    return "\n".join(shown)


def details(summary: str, body: str, open: bool = False) -> str:
    """``body`` (Markdown) in a GitHub ``<details>``; ``summary`` is text, escaped as HTML.

    The blank lines around the body end our HTML blocks, so GitHub renders the body as
    Markdown; ``body`` must be whole blocks (as every fragment here is).
    """
    shown = html.escape(harmless(_LINE_BREAK.sub(" ", summary)), quote=True)
    head = "<details open>" if open else "<details>"
    return f"{head}<summary>{shown}</summary>\n\n{body.strip(chr(10))}\n\n</details>\n"


def note(text: str) -> str:
    """A short italic note, escaped (a stand-in for what is not drawn)."""
    escaped = escape_text(text)
    return f"*{escaped}*\n" if escaped else ""


# -- long parts --------------------------------------------------------------------------


def lines_of(text: str) -> list[str]:
    """``text``'s lines, as ``export/clip.py`` counts them (one trailing newline dropped)."""
    text = normalise(text)
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n") if text else []


def left_out(omitted: int) -> str:
    """The line standing for what a clipped part left out."""
    return f"*… {omitted} {'line' if omitted == 1 else 'lines'} left out …*\n"


def long_part(text: str, draw: Callable[[str], str], lead: str = "") -> str:
    """``text`` drawn by ``draw``, collapsed and clipped as ``export/clip.py`` says.

    ``lead`` is put before the head (a console's command line); it is not counted.
    """
    count = len(lines_of(text))
    clipped = clip_lines(text, head=HEAD_LINES, tail=TAIL_LINES)
    body = draw(lead + clipped.head)
    if clipped.omitted:
        body += "\n" + left_out(clipped.omitted) + "\n" + draw(clipped.tail)
    if count > COLLAPSE_LINES:
        return details(f"show all ({count} lines)", body)
    return body
