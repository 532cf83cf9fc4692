"""Terminal output as HTML: ANSI styles become ``<span>`` classes, never raw escape bytes.
The 16 standard colours stay classes (the theme picks them); nothing of the input is verbatim.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Final

from rich.color import Color, ColorType
from rich.style import Style
from rich.text import Text

from acp_sidecar.export import escape
from acp_sidecar.render.draw import terminal_text

_STANDARD: Final = frozenset({ColorType.STANDARD, ColorType.WINDOWS})
_FLAGS: Final = (
    ("bold", "a-b"),
    ("dim", "a-d"),
    ("italic", "a-i"),
    ("underline", "a-u"),
    ("strike", "a-s"),
)


def _colour(color: Color | None, prefix: str, prop: str) -> tuple[str | None, str | None]:
    """The class or inline declaration for one colour; ``(None, None)`` for the default."""
    if color is None or color.type == ColorType.DEFAULT:
        return None, None
    number = color.number
    if (
        number is not None
        and number < 16
        and (color.type in _STANDARD or color.type == ColorType.EIGHT_BIT)
    ):
        return f"{prefix}{number}", None
    return None, f"{prop}:{color.get_truecolor().hex}"


@functools.lru_cache(maxsize=1024)  # a page has few styles and many spans of each
def _open_tag(style: Style) -> str:
    """``<span …>`` for ``style``, or ``""`` when it changes nothing drawn."""
    fg, bg = style.color, style.bgcolor
    if style.reverse:
        fg, bg = bg, fg
    classes: list[str] = []
    inline: list[str] = []
    for color, prefix, prop, swapped in (
        (fg, "a-f", "color", "a-rf"),
        (bg, "a-g", "background", "a-rg"),
    ):
        cls, decl = _colour(color, prefix, prop)
        if cls is None and decl is None and style.reverse:
            cls = swapped
        if cls is not None:
            classes.append(cls)
        if decl is not None:
            inline.append(decl)
    classes.extend(cls for flag, cls in _FLAGS if getattr(style, flag))
    attrs = []
    if classes:
        attrs.append(f' class="{" ".join(classes)}"')
    if inline:
        attrs.append(f' style="{";".join(inline)}"')
    return f"<span{''.join(attrs)}>" if attrs else ""


def _segments(text: Text) -> Iterator[tuple[str, Style | None]]:
    """The text cut where its style changes, each piece with its combined style."""
    plain = text.plain
    spans = sorted(
        (s for s in text.spans if s.end > s.start and isinstance(s.style, Style)),
        key=lambda s: s.start,
    )
    pos = 0
    disjoint = all(a.end <= b.start for a, b in itertools.pairwise(spans))
    if disjoint:  # what ``Text.from_ansi`` builds: one style per piece
        for span in spans:
            if span.start > pos:
                yield plain[pos : span.start], None
            assert isinstance(span.style, Style)
            yield plain[span.start : span.end], span.style
            pos = span.end
        if pos < len(plain):
            yield plain[pos:], None
        return
    cuts = sorted({0, len(plain), *(s.start for s in spans), *(s.end for s in spans)})
    for start, end in itertools.pairwise(cuts):
        styles = [s.style for s in spans if s.start <= start and s.end >= end]
        combined = Style.combine(st for st in styles if isinstance(st, Style))
        yield plain[start:end], combined if styles else None


def text_html(text: Text) -> str:
    """A styled ``rich`` text as HTML (see the module invariants)."""
    parts: list[str] = []
    for piece, style in _segments(text):
        tag = "" if style is None else _open_tag(style)
        parts.append(f"{tag}{escape.text(piece)}</span>" if tag else escape.text(piece))
    return "".join(parts)


def ansi_html(output: str) -> str:
    """Terminal output as the inner HTML of a ``<pre>`` (see the module invariants)."""
    if "\x1b" not in output and "\r" not in output:  # nothing for the terminal to interpret
        return escape.text(output.rstrip("\n"))
    return text_html(terminal_text(output))
