"""Bounding long text for an export: what both formats leave out of a long body.

Minimal version written for the Markdown fragments; the HTML helper writes the full one with
the same API (the merger keeps one).

Invariants:
- A text's lines are what ``"\\n"`` separates, after one trailing newline is dropped.
- ``omitted`` is exactly the number of lines left out between ``head`` and ``tail``; a line
  longer than :data:`LINE_CHARS` keeps its start and says how many characters it lost.
"""

from __future__ import annotations

from typing import Final

import attrs

COLLAPSE_LINES: Final = 20
"""Bodies with more lines than this are collapsed behind a closed "show all"."""

HEAD_LINES: Final = 200
"""Lines kept from the start of a body too long to keep whole."""

TAIL_LINES: Final = 100
"""Lines kept from the end of a body too long to keep whole."""

LINE_CHARS: Final = 2000
"""Characters kept of one line; the rest is replaced by a count."""


@attrs.frozen
class Clipped:
    """A text with possibly some lines left out between ``head`` and ``tail``."""

    head: str
    """The first lines (the whole text when nothing was left out)."""
    tail: str
    """The last lines (empty when nothing was left out)."""
    omitted: int
    """How many lines were left out between them; 0 when none."""


def _bounded(lines: list[str]) -> str:
    return "\n".join(
        f"{line[:LINE_CHARS]} … ({len(line) - LINE_CHARS} characters left out)"
        if len(line) > LINE_CHARS
        else line
        for line in lines
    )


def clip_lines(text: str, *, head: int, tail: int) -> Clipped:
    """``text`` whole when it has at most ``head + tail`` lines, else its first ``head`` and
    last ``tail`` lines; every line bounded by :data:`LINE_CHARS`."""
    if text.endswith("\n"):
        text = text[:-1]
    lines = text.split("\n") if text else []
    if len(lines) <= head + tail:
        return Clipped(_bounded(lines), "", 0)
    return Clipped(
        _bounded(lines[:head]),
        _bounded(lines[len(lines) - tail :]) if tail else "",
        len(lines) - head - tail,
    )
