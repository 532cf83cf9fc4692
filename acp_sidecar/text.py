"""Text for people in small places — a menu entry, a title, a card's error line.

Pure, standard library only (cold-start path). Results are one line; a cut keeps at most
``limit`` characters *including* its mark. A URL is never shown with its credentials.
:func:`visible` leaves no character that acts instead of showing itself.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Final

_TRAILING = " ,;:."

_BIDI: Final = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Bidi marks, embeddings, overrides and isolates: they reorder the text around them."""

_SIGNS: Final[dict[int, str]] = {
    **{code: chr(0x2400 + code) for code in range(0x20)},  # control pictures: ␛, ␍, ␊
    0x7F: "\u2421",  # ␡
    **{code: f"⟨U+{code:04X}⟩" for code in range(0x80, 0xA0)},
    **{ord(char): f"⟨U+{ord(char):04X}⟩" for char in _BIDI + "\u2028\u2029"},
}
"""What each character that acts is shown as."""

_ACTING: Final = f"[\x00-\x1f\x7f-\x9f{_BIDI}\u2028\u2029]"
_IN_BLOCK: Final = {**_SIGNS, ord("\n"): "\n", ord("\t"): "\t"}
_ONE_FOR_ONE: Final[dict[int, str]] = {
    **{code: _SIGNS[code] for code in range(0x20) if chr(code) not in "\t\n\r"},
    0x7F: _SIGNS[0x7F],
    **dict.fromkeys(range(0x80, 0xA0), "\ufffd"),
}
_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled on first use: the bidi class costs ~0.4 ms, off the cold start."""
    return re.compile(pattern)


def visible(text: str, *, lines: bool = False) -> str:
    """``text`` with every C0/C1 control, DEL, bidi control and line separator shown as a
    sign (``␛``, ``⟨U+202E⟩``); with ``lines``, ``\\n`` and ``\\t`` stay (a code block)."""
    if _compiled(_ACTING).search(text) is None:
        return text
    return text.translate(_IN_BLOCK if lines else _SIGNS)


def harmless(text: str) -> str:
    """``text`` with its C0 and C1 controls and DEL replaced one character for one (styles
    laid over it keep their offsets): a control picture for C0 and DEL, ``�`` for C1; tab and
    line endings stay, and so do bidi marks (prose in right-to-left scripts needs them)."""
    if _CONTROL.search(text) is None:
        return text
    return text.translate(_ONE_FOR_ONE)


def visible_line(text: str) -> str:
    """``text`` as one line a person can trust: :func:`visible` (a newline shows as ``␊``),
    then runs of spaces made one (a long run would push the rest out of sight)."""
    if type(text) is str and text.isascii() and text.isprintable() and "  " not in text:
        # No character acts, and the only blank is a single space: nothing but its ends.
        return text if text[:1] != " " and text[-1:] != " " else text.strip(" ")
    return one_line(visible(text))


def one_line(text: str) -> str:
    """``text`` with every run of whitespace made one space, and trimmed."""
    return " ".join(text.split())


def _cut(flat: str, limit: int, mark: str) -> str:
    room = max(limit - len(mark), 0)
    kept = flat[:room]
    space = kept.rfind(" ")
    if space >= room // 2 and flat[room : room + 1] != " ":
        kept = kept[:space]
    return kept.rstrip(_TRAILING) + mark


def shorten(text: str, limit: int, *, mark: str = "…") -> str:
    """``text`` on one line, at most ``limit`` characters (cut as the module says)."""
    flat = one_line(text)
    return flat if len(flat) <= limit else _cut(flat, limit, mark)


def first_line(text: str, limit: int, *, mark: str = "…") -> str:
    """The first non-blank line of ``text``, at most ``limit`` characters; ``mark`` ends it
    when anything was left out, the rest of that line or the lines after it."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    flat = one_line(lines[0])
    if len(lines) == 1 and len(flat) <= limit:
        return flat
    if len(flat.rstrip(_TRAILING)) + len(mark) <= limit:
        return flat.rstrip(_TRAILING) + mark
    return _cut(flat, limit, mark)


def close_match(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``word`` most likely meant, if one is close: a transposition
    (``modle`` for ``model``) first, then :func:`difflib.get_close_matches`'s best."""
    import difflib  # only on a typo: this module is on the cold-start path

    choices = [candidate for candidate in candidates if candidate != word]
    for candidate in choices:
        if sorted(candidate) == sorted(word):
            return candidate
    found = difflib.get_close_matches(word, choices, n=1)
    return found[0] if found else None


def shown_url(url: str, *, password: str | None = None) -> str:
    """``url`` without the ``user:password@`` it may carry (the rest as it was written); with
    ``password``, only the password is replaced by it (``user:<hidden>@``)."""
    scheme, slashes, rest = url.partition("//")
    if not slashes:  # no scheme: the authority starts the text
        scheme, rest = "", url
    ends = [at for at in (rest.find(c) for c in "/?#") if at >= 0]
    userinfo_end = rest.rfind("@", 0, min(ends, default=len(rest)))
    if userinfo_end < 0:
        return url
    user, colon, _secret = rest[:userinfo_end].partition(":")
    kept = "" if password is None else f"{user}{colon and ':' + password}@"
    return scheme + slashes + kept + rest[userinfo_end + 1 :]
