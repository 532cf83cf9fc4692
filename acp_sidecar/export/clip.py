"""Bounding long text for an export: the one place both formats decide what is left out.
:func:`clip_lines` never loses count; messages are clipped only at absurd sizes.
"""

from __future__ import annotations

from typing import Final

import attrs

COLLAPSE_LINES: Final = 20
"""Bodies with more lines than this are collapsed (a closed ``<details>``)."""

HEAD_LINES: Final = 200
"""Lines kept from the start of a body too long to keep whole."""

TAIL_LINES: Final = 100
"""Lines kept from the end of a body too long to keep whole."""

LINE_CHARS: Final = 2000
"""Characters kept of one line; the rest is replaced by a count."""


MESSAGE_HEAD_LINES: Final = 3000
MESSAGE_TAIL_LINES: Final = 1000
MESSAGE_LINE_CHARS: Final = 50_000
"""A message keeps at most this many lines from its start and end, and characters a line."""


@attrs.frozen
class Clipped:
    """A text with possibly some lines left out between ``head`` and ``tail``."""

    head: str
    """The first lines (the whole text when nothing was left out)."""
    tail: str
    """The last lines (empty when nothing was left out)."""
    omitted: int
    """How many lines were left out between them; 0 when none."""


def text_lines(text: str) -> list[str]:
    """``text``'s lines as a file holds them: split at ``\\n`` only (``\\r\\n`` counts as one
    break; a form feed or U+2028 inside a line does not start another), one trailing newline
    dropped."""
    text = text.replace("\r\n", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n") if text else []


def line_count(text: str) -> int:
    """The number of lines in ``text`` (see the module invariants); 0 for ``""``."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def clip_line(line: str, limit: int = LINE_CHARS) -> str:
    """``line``, or its first ``limit`` characters and a count of the rest."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]} … ({len(line) - limit} characters left out)"


def _bounded(lines: list[str]) -> str:
    return "\n".join(clip_line(line) if len(line) > LINE_CHARS else line for line in lines)


def clip_lines(text: str, *, head: int, tail: int) -> Clipped:
    """``text`` kept whole when it has at most ``head + tail`` lines, else its first ``head``
    and last ``tail`` lines; each line bounded by :data:`LINE_CHARS`."""
    if text.endswith("\n"):
        text = text[:-1]
    count = line_count(text)
    if count <= head + tail:
        if len(text) <= LINE_CHARS:  # the common case: nothing to split
            return Clipped(text, "", 0)
        lines = text.split("\n")
        if max(map(len, lines)) <= LINE_CHARS:
            return Clipped(text, "", 0)
        return Clipped(_bounded(lines), "", 0)
    lines = text.split("\n")
    return Clipped(
        _bounded(lines[:head]),
        _bounded(lines[len(lines) - tail :]) if tail else "",
        count - head - tail,
    )


def clip_message(text: str) -> str:
    """A message's Markdown bounded (see the module invariants): beyond
    :data:`MESSAGE_HEAD_LINES` + :data:`MESSAGE_TAIL_LINES` lines, its head and tail with a
    paragraph saying how many lines were left out; each line at most
    :data:`MESSAGE_LINE_CHARS` characters. Text within the bounds is returned unchanged."""
    if len(text) <= MESSAGE_LINE_CHARS and text.count("\n") < MESSAGE_HEAD_LINES:
        return text  # the common case, without splitting
    lines = text.split("\n")
    omitted = len(lines) - MESSAGE_HEAD_LINES - MESSAGE_TAIL_LINES
    if omitted > 0:
        note = f"*… {omitted:,} lines left out …*"
        lines = [*lines[:MESSAGE_HEAD_LINES], "", note, "", *lines[-MESSAGE_TAIL_LINES:]]
    return "\n".join(clip_line(line, MESSAGE_LINE_CHARS) for line in lines)
