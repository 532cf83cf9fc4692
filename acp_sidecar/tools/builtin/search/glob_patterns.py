"""Glob patterns as ``grep`` and ``glob`` read them: ``*``, ``?``, ``[…]``, ``**`` and ``{a,b}``.

A pattern matches a whole path. Matching cannot freeze the sidecar: a glob that can backtrack
(two ``*`` in a segment, two ``**``) runs on ``regex`` without the GIL, with a timeout.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    import regex

from acp_sidecar.tools.builtin.errors import PatternTooSlowError

MAX_ALTERNATIVES = 256
"""How many patterns a ``{…}`` expansion may produce."""

MATCH_TIMEOUT_S = 0.5
"""The longest one path may take to match (a sane glob takes microseconds)."""

_GLOB_CHARS = frozenset("*?[{\\")


def expand_braces(pattern: str) -> list[str]:
    """The alternatives of ``{a,b}`` groups (a group without a top-level comma is literal)."""
    depth = 0
    start = -1
    commas: list[int] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            if depth == 0:
                start, commas = index, []
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0 and commas:
                head, tail = pattern[:start], pattern[index + 1 :]
                bounds = [start, *commas, index]
                results: list[str] = []
                for left, right in itertools.pairwise(bounds):
                    for option in expand_braces(head + pattern[left + 1 : right] + tail):
                        results.append(option)
                        if len(results) > MAX_ALTERNATIVES:
                            raise ValueError(
                                f"the {{…}} alternatives expand to more than {MAX_ALTERNATIVES} "
                                "patterns"
                            )
                return results
        elif char == "," and depth == 1:
            commas.append(index)
        index += 1
    return [pattern]


def _segment(segment: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(segment):
        char = segment[index]
        if char == "\\" and index + 1 < len(segment):
            out.append(re.escape(segment[index + 1]))
            index += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = index + 1
            if end < len(segment) and segment[end] in "!^":
                end += 1
            if end < len(segment) and segment[end] == "]":
                end += 1
            while end < len(segment) and segment[end] != "]":
                end += 1
            if end >= len(segment):
                out.append(re.escape(char))  # no closing bracket: a literal "["
            else:
                body = segment[index + 1 : end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\").replace("[", "\\[")
                out.append(f"[^/{body}]" if negate else f"[{body}]")
                index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def glob_to_regex(pattern: str) -> str:
    """The regex source that matches exactly the paths ``pattern`` matches (no braces)."""
    segments = pattern.split("/")
    out: list[str] = []
    for position, segment in enumerate(segments):
        last = position == len(segments) - 1
        if segment == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
        else:
            out.append(_segment(segment) + ("" if last else "/"))
    return "".join(out)


class GlobMatcher:
    """Matches relative paths against a glob (with ``{a,b}`` alternatives)."""

    def __init__(self, pattern: str, *, basename_without_slash: bool = False) -> None:
        """``basename_without_slash``: an alternative without ``/`` matches the file's name
        at any depth (the rule of ripgrep's and .gitignore's globs), not the whole path.

        Raises:
            ValueError: too many alternatives, or a pattern that does not compile.
        """
        self.pattern = pattern
        whole: list[str] = []
        names: list[str] = []
        options = expand_braces(pattern)
        guarded = any(_may_backtrack(option) for option in options)
        for option in options:
            option = option.lstrip("/") if basename_without_slash else option
            if basename_without_slash and "/" not in option:
                names.append(glob_to_regex(option))
            else:
                whole.append(glob_to_regex(option))
        try:
            self._whole = _compile(whole, guarded)
            self._name = _compile(names, guarded)
        except re.error as exc:
            raise ValueError(f"invalid glob {pattern!r}: {exc}") from exc

    def matches(self, path: str) -> bool:
        """Whether relative ``path`` (``/``-separated) matches.

        Raises:
            PatternTooSlowError: matching ``path`` took longer than :data:`MATCH_TIMEOUT_S`.
        """
        try:
            if self._whole is not None and _fullmatch(self._whole, path):
                return True
            if self._name is not None:
                return _fullmatch(self._name, path.rsplit("/", 1)[-1])
        except TimeoutError:
            raise PatternTooSlowError(
                f"The glob {self.pattern!r} took more than {MATCH_TIMEOUT_S:g} s to match "
                f"{path!r}: runs of '*' separated by the same letters backtrack on long names. "
                "Simplify the glob."
            ) from None
        return False


def _may_backtrack(pattern: str) -> bool:
    """Whether matching the glob ``pattern`` (braces expanded) may take more than linear time:
    it has two ``*`` in one segment, or two ``**`` segments (they share the directories in
    many ways)."""
    globstars = 0
    for segment in pattern.split("/"):
        if segment == "**":
            globstars += 1
            continue
        stars = 0
        index = 0
        while index < len(segment):
            if segment[index] == "\\":
                index += 1
            elif segment[index] == "*":
                stars += 1
            index += 1
        if stars > 1:
            return True
    return globstars > 1


_Matcher: TypeAlias = "re.Pattern[str] | regex.Pattern[str]"


def _compile(sources: list[str], guarded: bool) -> _Matcher | None:
    if not sources:
        return None
    joined = "|".join(f"(?:{source})" for source in sources)
    fast = re.compile(joined)  # the syntax promised is re's (the sources are re.escape'd anyway)
    if not guarded:
        return fast
    import regex  # only for a glob that may backtrack: off the cold start

    try:
        return regex.compile(joined, regex.VERSION0)
    except regex.error as exc:
        raise re.error(str(exc)) from exc


def _fullmatch(pattern: _Matcher, path: str) -> bool:
    if isinstance(pattern, re.Pattern):
        return pattern.fullmatch(path) is not None
    return pattern.fullmatch(path, concurrent=True, timeout=MATCH_TIMEOUT_S) is not None


def literal_prefix(pattern: str) -> str:
    """The leading directories of ``pattern`` that contain no glob syntax (``""`` for none)."""
    segments = pattern.split("/")[:-1]
    prefix: list[str] = []
    for segment in segments:
        if not segment or segment in (".", "..") or _GLOB_CHARS.intersection(segment):
            break
        prefix.append(segment)
    return "/".join(prefix)
