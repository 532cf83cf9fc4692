"""Glob patterns as ``grep`` and ``glob`` read them: ``*``, ``?``, ``[…]``, ``**`` and ``{a,b}``.

Invariants:
- Paths are relative and ``/``-separated. ``*`` and ``?`` never match ``/``; a ``**``
  segment matches any number of directories (none included); ``[!…]`` / ``[^…]`` negate a
  class; ``{a,b}`` alternatives expand (nested too, at most :data:`MAX_ALTERNATIVES`); a
  backslash escapes the next character. ``*`` also matches names starting with a dot.
- A pattern matches a whole path, never a prefix of it.
"""

from __future__ import annotations

import itertools
import re

MAX_ALTERNATIVES = 256
"""How many patterns a ``{…}`` expansion may produce."""

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
        for option in expand_braces(pattern):
            option = option.lstrip("/") if basename_without_slash else option
            if basename_without_slash and "/" not in option:
                names.append(glob_to_regex(option))
            else:
                whole.append(glob_to_regex(option))
        try:
            self._whole = re.compile("|".join(f"(?:{w})" for w in whole)) if whole else None
            self._name = re.compile("|".join(f"(?:{n})" for n in names)) if names else None
        except re.error as exc:
            raise ValueError(f"invalid glob {pattern!r}: {exc}") from exc

    def matches(self, path: str) -> bool:
        """Whether relative ``path`` (``/``-separated) matches."""
        if self._whole is not None and self._whole.fullmatch(path):
            return True
        if self._name is not None:
            return self._name.fullmatch(path.rsplit("/", 1)[-1]) is not None
        return False


def literal_prefix(pattern: str) -> str:
    """The leading directories of ``pattern`` that contain no glob syntax (``""`` for none)."""
    segments = pattern.split("/")[:-1]
    prefix: list[str] = []
    for segment in segments:
        if not segment or segment in (".", "..") or _GLOB_CHARS.intersection(segment):
            break
        prefix.append(segment)
    return "/".join(prefix)
