"""Walking a workspace tree the way ``grep`` and ``glob`` see it: .gitignore applied.

Invariants:
- Deterministic order (depth first, by name); ``.git`` and symlinks skipped, never followed.
- Every directory entered is checked to be the one listed (``O_NOFOLLOW``, its ``..``), so a
  swap for a symlink between listing and entering is skipped, never followed out.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator

import attrs

from acp_sidecar.tools.builtin.errors import OutsideWorkspaceError
from acp_sidecar.tools.builtin.files.paths import is_inside
from acp_sidecar.tools.cancel import CancelSignal

_NAMED_GROUP = re.compile(r"\(\?P<[^>]+>")


class IgnoreFile:
    """The patterns of one .gitignore, matched against paths relative to its directory."""

    def __init__(self, lines: list[str]) -> None:
        import pathspec  # only when a walk meets a .gitignore: off the cold start

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


def load_ignore_file(directory: str, *, dir_fd: int | None = None) -> IgnoreFile | None:
    """The .gitignore of ``directory`` (or of the open directory ``dir_fd``), or ``None`` when
    it has none (or it is unreadable, or a symlink)."""
    path = ".gitignore" if dir_fd is not None else os.path.join(directory, ".gitignore")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        with open(fd, encoding="utf-8", errors="replace") as f:
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
    inode: int | None = None
    """The file's inode when it was listed: whoever opens it by path can check it still is
    that file (``None``: unknown)."""


_Rules = tuple[tuple[str, IgnoreFile], ...]
_Identity = tuple[int, int]
"""A directory's device and inode."""


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


def _real_path_of(fd: int, path: str) -> str:
    """Where the open directory ``fd`` (opened as ``path``) really is."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")  # exact: the directory that was opened
    except OSError:
        return os.path.realpath(path)  # no /proc: resolve the name again


def walk_files(
    root: str,
    start: str | None = None,
    *,
    boundary: str | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> Iterator[WalkEntry]:
    """The files under ``start`` (default ``root``), .gitignore rules read from ``root`` down.

    ``start`` must be ``root`` or a directory inside it. ``boundary`` is the real path of the
    workspace root when the walk must stay inside it (``None``: no boundary). ``cancelled``
    is polled once per directory; when it returns true the walk stops.

    Raises:
        OutsideWorkspaceError: the real path of ``start`` is outside ``boundary``.
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
    try:
        # The start may itself be a symlink the boundary check accepted: follow it.
        fd = os.open(start, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if boundary is not None:
            real = _real_path_of(fd, start)
            if not is_inside(real, boundary):
                raise OutsideWorkspaceError(
                    f"{rel_start or start} resolves through a symbolic link to a place outside "
                    f"the workspace ({root}). Only paths inside the workspace can be used."
                )
        listed = _list(fd, start, rel_start, rules)
    finally:
        os.close(fd)
    if listed is not None:
        yield from _walk(listed, cancelled)


@attrs.frozen
class _Listing:
    """One directory read: what the walk needs to go on from it."""

    path: str
    prefix: str
    rules: _Rules
    identity: _Identity
    entries: list[tuple[str, bool, int]]
    """``(name, is_dir, inode)`` of its files and directories (not ignored), sorted by name."""


def _list(fd: int, path: str, prefix: str, rules: _Rules) -> _Listing | None:
    """The listing of the open directory ``fd``; ``None`` if it cannot be read."""
    rule = load_ignore_file(path, dir_fd=fd)
    if rule is not None:
        rules = (*rules, (prefix, rule))
    entries: list[tuple[str, bool, int]] = []
    try:
        info = os.fstat(fd)
        with os.scandir(fd) as scan:
            for entry in scan:
                if entry.name == ".git":
                    continue
                try:
                    if entry.is_symlink():
                        continue
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_file = not is_dir and entry.is_file(follow_symlinks=False)
                except OSError:
                    continue
                if (is_dir or is_file) and not _ignored(rules, _join(prefix, entry.name), is_dir):
                    # The inode comes with the listing, without a stat (as ``d_ino``).
                    entries.append((entry.name, is_dir, entry.inode()))
    except OSError:
        return None
    entries.sort()
    return _Listing(path, prefix, rules, (info.st_dev, info.st_ino), entries)


def _enter(path: str, prefix: str, parent: _Listing) -> _Listing | None:
    """The listing of subdirectory ``path`` of ``parent``, if it still is one."""
    try:
        # O_NOFOLLOW: a directory swapped for a symlink since it was listed is not entered.
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        # Reached by name, so a parent swapped for a symlink could lead elsewhere: its ".."
        # must be the directory it was listed in (directories cannot be hard-linked).
        up = os.stat("..", dir_fd=fd)
        if (up.st_dev, up.st_ino) != parent.identity:
            return None
        return _list(fd, path, prefix, parent.rules)
    except OSError:
        return None
    finally:
        os.close(fd)


def _walk(top: _Listing, cancelled: Callable[[], bool]) -> Iterator[WalkEntry]:
    # A stack of (directory, position in its entries): depth first, in name order.
    stack: list[tuple[_Listing, int]] = [(top, 0)]
    if cancelled():
        return
    while stack:
        listing, position = stack.pop()
        if position >= len(listing.entries):
            continue
        stack.append((listing, position + 1))
        name, is_dir, inode = listing.entries[position]
        path, rel = os.path.join(listing.path, name), _join(listing.prefix, name)
        if not is_dir:
            yield WalkEntry(path, rel, inode)
            continue
        if cancelled():
            return
        below = _enter(path, rel, listing)
        if below is not None:
            stack.append((below, 0))


class ThreadCancel:
    """A cancel flag a worker thread can poll, set from a :class:`CancelSignal`."""

    def __init__(self, signal: CancelSignal | None) -> None:
        self._event = threading.Event()
        self._remove = signal.add_callback(lambda _reason: self._event.set()) if signal else None

    def __call__(self) -> bool:
        return self._event.is_set()

    def close(self) -> None:
        """Stop listening to the signal."""
        if self._remove is not None:
            self._remove()
