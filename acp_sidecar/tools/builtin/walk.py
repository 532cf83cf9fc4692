"""Walking a workspace tree the way ``grep`` and ``glob`` see it: .gitignore applied.

Invariants:
- Order is deterministic: depth first, each directory's entries sorted by name (so a path
  sorts by its tuple of components — the order of ``rg --sort path``).
- Skipped: every ``.git`` entry; symbolic links (never followed, so a walk cannot leave the
  workspace); entries ignored by a ``.gitignore`` in the root or any directory down to the
  entry. Patterns follow git: a deeper file overrides a shallower one, the last matching line
  wins, ``!`` re-includes, and nothing below an ignored directory is visited. Hidden files are
  walked. Global excludes and ``.git/info/exclude`` are not read.
- Each entry is judged on its own path: a walk started inside an ignored directory (an
  explicit search path) still visits it, as ripgrep does for paths given to it.
- Unreadable directories and .gitignore files are skipped silently.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator

import attrs
import pathspec

_NAMED_GROUP = re.compile(r"\(\?P<[^>]+>")


class IgnoreFile:
    """The patterns of one .gitignore, matched against paths relative to its directory."""

    def __init__(self, lines: list[str]) -> None:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        self._patterns: list[tuple[bool, re.Pattern[str]]] = [
            (pattern.include, pattern.regex)
            for pattern in spec.patterns
            if isinstance(pattern, pathspec.RegexPattern)
            and pattern.include is not None
            and pattern.regex is not None
        ]
        # One alternation answers "does any line match?" (usually no) in a single C call.
        try:
            self._any: re.Pattern[str] | None = re.compile(
                "|".join(f"(?:{_NAMED_GROUP.sub('(?:', r.pattern)})" for _i, r in self._patterns)
            )
        except re.error:
            self._any = None

    def __bool__(self) -> bool:
        return bool(self._patterns)

    def decide(self, path: str, is_dir: bool) -> bool | None:
        """``True`` ignored, ``False`` re-included, ``None`` no line matches this entry."""
        test = path + "/" if is_dir else path
        if self._any is not None and self._any.match(test) is None:
            return None
        for include, regex in reversed(self._patterns):
            match = regex.match(test)
            if match is None:
                continue
            # A match that stops at a directory boundary before the end names a parent, not
            # this entry (and parents were judged on the way down).
            if match.end() != len(test) and match.groupdict().get("ps_d") is not None:
                continue
            return include
        return None


def load_ignore_file(directory: str) -> IgnoreFile | None:
    """The .gitignore of ``directory``, or ``None`` when it has none (or it is unreadable)."""
    try:
        with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as f:
            rules = IgnoreFile(f.read().splitlines())
    except (OSError, ValueError):
        return None
    return rules if rules else None


@attrs.frozen
class WalkEntry:
    """A file found by a walk."""

    path: str
    """Absolute path."""
    rel: str
    """Path relative to the walk's root, ``/``-separated."""
    entry: os.DirEntry[str] | None = attrs.field(default=None, eq=False)
    """The directory entry (for a cheap ``stat``); ``None`` for a file given directly."""


_Rules = tuple[tuple[str, IgnoreFile], ...]


def _ignored(rules: _Rules, rel: str, is_dir: bool) -> bool:
    for prefix, rule in reversed(rules):
        decision = rule.decide(rel[len(prefix) + 1 :] if prefix else rel, is_dir)
        if decision is not None:
            return decision
    return False


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


def relative_to(path: str, root: str) -> str:
    """``path`` (``root`` or below it) relative to ``root``, ``/``-separated; ``""`` for root."""
    return "" if path == root else os.path.relpath(path, root).replace(os.sep, "/")


def walk_files(
    root: str, start: str | None = None, *, cancelled: Callable[[], bool] = lambda: False
) -> Iterator[WalkEntry]:
    """The files under ``start`` (default ``root``), .gitignore rules read from ``root`` down.

    ``start`` must be ``root`` or a directory inside it. ``cancelled`` is polled once per
    directory; when it returns true the walk stops.
    """
    start = root if start is None else start
    rules: _Rules = ()
    rel_start = relative_to(start, root)
    # The rules of the directories above the start apply to it, too.
    directory, prefix = root, ""
    for part in rel_start.split("/") if rel_start else []:
        rule = load_ignore_file(directory)
        if rule is not None:
            rules = (*rules, (prefix, rule))
        directory, prefix = os.path.join(directory, part), _join(prefix, part)
    yield from _walk(start, rel_start, rules, cancelled)


def _walk(
    directory: str, prefix: str, rules: _Rules, cancelled: Callable[[], bool]
) -> Iterator[WalkEntry]:
    if cancelled():
        return
    rule = load_ignore_file(directory)
    if rule is not None:
        rules = (*rules, (prefix, rule))
    try:
        with os.scandir(directory) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name == ".git":
            continue
        try:
            if entry.is_symlink():
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            is_file = not is_dir and entry.is_file(follow_symlinks=False)
        except OSError:
            continue
        rel = _join(prefix, entry.name)
        if not (is_dir or is_file) or _ignored(rules, rel, is_dir):
            continue
        if is_dir:
            yield from _walk(entry.path, rel, rules, cancelled)
        else:
            yield WalkEntry(entry.path, rel, entry)
