"""What ``grep`` finds, the same whichever engine finds it: the pattern and the results.

Both engines give the same result for the same candidates (tests compare them). ripgrep gets
only patterns it reads alike; POSIX classes in sets are refused (``re``, ``regex`` and ripgrep
each read them differently). Known differences: invalid UTF-8, ``(?i)`` and ``İ``, huge lines.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

import attrs

if TYPE_CHECKING:
    import regex

KEEP_CHARS = 1000
"""The characters of a matching line a result keeps (more than any output shows)."""


@attrs.frozen
class Candidate:
    """A file to search."""

    path: str
    """Absolute path."""
    shown: str
    """How the results name it."""
    below: str
    """Its path relative to the directory searched (what ripgrep is given)."""
    inode: int | None = None
    """The inode the walk listed it with: the Python engine reads the file only if it opens
    that one, without following a symlink (``None``: a path given by the user, opened as it
    is)."""


@attrs.frozen
class LineMatch:
    line: int
    """1-based line number."""
    text: str
    """The line, without its line ending, cut at :data:`KEEP_CHARS` characters."""
    chars: int
    """The length of the line (as searched) in characters."""
    cut: bool = False
    """The line is longer than :data:`~.grep_engine.MAX_LINE_BYTES`: only its start was searched."""

    @classmethod
    def of(cls, line: int, text: str, *, cut: bool = False) -> LineMatch:
        """The match of line number ``line``, whose whole text is ``text``."""
        return cls(line, text[:KEEP_CHARS], len(text), cut)


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
    cut_lines: int = 0
    """Lines searched only in their first :data:`~.grep_engine.MAX_LINE_BYTES` (Python engine)."""
    slow_lines: tuple[str, ...] = ()
    """``file:line`` of the lines not searched because the pattern timed out on them."""
    searched: int = 0
    """Files searched to their end (or to ``max_results``): what a cancelled search reached."""

    @property
    def count(self) -> int:
        return sum(len(f.lines) for f in self.files)


@attrs.frozen
class Pattern:
    """A grep pattern, compiled for each engine."""

    source: re.Pattern[str]
    """As ``re`` reads it: the syntax the tool promises; ripgrep is given its text."""
    engine: regex.Pattern[str]
    """As the Python engine runs it on one line (``regex``, ``VERSION0``: the ``re`` syntax)."""
    block: regex.Pattern[str]
    """The same with ``MULTILINE``, to search a block of whole lines at once: ``^`` and ``$``
    then match at each line's start and end, as they do on the line alone (see
    :func:`line_local`)."""
    rg_ok: bool
    """ripgrep may run it (see the module invariants)."""


class PosixClassError(ValueError):
    """The pattern has a POSIX class inside a set, which the engines and ``re`` read apart."""


# What the regex package takes for one (its parser, parse_posix_class): a property name, maybe
# qualified by ":" or "=" and a value that is not blank, then ":]".
_POSIX_CLASS = re.compile(
    r"\[:\^?[A-Za-z0-9 &_.-]*(?:[:=][A-Za-z0-9 &_./-]*[A-Za-z0-9&_./-][A-Za-z0-9 &_./-]*)?:\]"
)


Position = Literal["escape", "in_set", "plain"]
"""What a place of a regular expression is, to the scans below."""


def _positions(pattern: str) -> Iterator[tuple[Position, int]]:
    """Each place of ``pattern`` that matters to a scan, in order: ``"escape"`` for a backslash
    outside a set (the escaped character is skipped), ``"in_set"`` for each place inside a
    set's body (after ``[``, ``^`` and a leading ``]``; an escape there counts as one place),
    ``"plain"`` for any other character outside a set."""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            yield "escape", index
            index += 2
            continue
        if char == "[":
            index += 1
            if pattern[index : index + 1] == "^":
                index += 1
            if pattern[index : index + 1] == "]":
                index += 1
            while index < len(pattern) and pattern[index] != "]":
                yield "in_set", index
                index += 2 if pattern[index] == "\\" else 1
        else:
            yield "plain", index
        index += 1


def _posix_class(pattern: str) -> str | None:
    """The first POSIX class (``[:alpha:]``) inside a set of ``pattern``, as ``regex`` would
    read it; ``None`` when there is none."""
    for position, index in _positions(pattern):
        if position == "in_set" and (found := _POSIX_CLASS.match(pattern, index)):
            return found.group()
    return None


def compile_pattern(pattern: str, *, case_insensitive: bool) -> Pattern:
    """The pattern compiled for both engines.

    Raises:
        re.error: the pattern is not valid Python ``re`` syntax.
        PosixClassError: it has a POSIX class in a set (see the module invariants).
        regex.error: the ``regex`` package does not accept it (rare: it reads ``re`` syntax).
    """
    if (posix := _posix_class(pattern)) is not None:
        raise PosixClassError(
            f"POSIX classes such as {posix} are not supported: Python re syntax reads "
            "[[:alpha:]] as a set of the characters '[:alph' followed by ']', not as letters. "
            r"Write the characters instead: [A-Za-z], [0-9] or \d, \s, \w"
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        source = re.compile(pattern, re.IGNORECASE if case_insensitive else 0)
        import regex  # only when a search runs: off the cold start

        flags = regex.VERSION0 | (regex.IGNORECASE if case_insensitive else 0)
        engine = regex.compile(pattern, flags)
        block = regex.compile(pattern, flags | regex.MULTILINE)
    rg_ok = not caught and "(?x" not in pattern and not (source.flags & re.VERBOSE)
    return Pattern(source, engine, block, rg_ok)


_CONTEXTUAL = re.compile(r"\(\?<?[=!]")
_MULTILINE_OFF = re.compile(r"\(\?[a-zA-Z]*-[a-zA-Z]*m")


def line_local(pattern: str) -> bool:
    """Whether every match of ``pattern`` inside a line is also a match of it, compiled with
    ``MULTILINE``, in the whole text at the same place. True unless it has lookarounds (they
    would see the neighbouring lines), ``\\A`` or ``\\Z`` (the edges of the text, not of a
    line) or turns ``MULTILINE`` off (``(?-m:…)``). ``^`` and ``$`` are fine: with
    ``MULTILINE`` they match after and before each ``\\n`` (``$`` not before a ``\\r``, as on
    the line alone); so are ``\\b`` and ``\\B``: a newline is a non-word character, like the
    edge of a string."""
    if _CONTEXTUAL.search(pattern) or _MULTILINE_OFF.search(pattern):
        return False
    return not any(
        position == "escape" and pattern[index + 1 : index + 2] in ("A", "Z")
        for position, index in _positions(pattern)
    )
