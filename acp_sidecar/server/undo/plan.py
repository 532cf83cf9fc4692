"""What an undo (or a redo) would do, checked before anything is written: each file's
content to put back, the files that are no longer what the turns left (conflicts), and what
cannot be undone at all. Blocking (it reads files and blobs); run it in a thread.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Final

import attrs

from acp_sidecar.server.undo.seen import look
from acp_sidecar.store.blobs import MAX_KEPT, BlobStore
from acp_sidecar.store.records import FileChangeRecord
from acp_sidecar.store.rewinds import LoggedTurn
from acp_sidecar.tools.builtin.files.paths import WorkspacePath, resolve_path
from acp_sidecar.tools.context import ToolContext
from acp_sidecar.tools.definition import ToolDefinition
from acp_sidecar.tools.errors import ToolError

_MIB: Final = MAX_KEPT // (1024 * 1024)


@attrs.frozen
class FileRevert:
    """One file to put back."""

    target: WorkspacePath
    expected: str | None
    """The hash it has now (``None``: absent), as the log last recorded it."""
    restore: bytes | None = attrs.field(repr=False)
    """The content to put back (``None``: remove the file)."""
    current: bytes | None = attrs.field(default=None, repr=False)
    """Its content now, when it is a file no bigger than the limit (for the card and for a
    later redo)."""


@attrs.frozen
class Left:
    """A file (or a turn's call) left as it is, and why."""

    shown: str
    why: str


@attrs.frozen
class Plan:
    reverts: tuple[FileRevert, ...]
    conflicts: tuple[Left, ...]
    """Files no longer what the turns left: with any of them, nothing is reverted."""
    not_undoable: tuple[Left, ...]
    """What cannot be put back (too big, its before-image gone, an undeclared tool's)."""


_FORCIBLE: Final = ("changed since", "deleted since", "unreadable now")


def _net(changes: Iterable[FileChangeRecord]) -> dict[str, tuple[FileChangeRecord, str | None]]:
    """Per path, its first change (whose before-image is put back) and its last hash."""
    first: dict[str, tuple[FileChangeRecord, str | None]] = {}
    for change in changes:
        earliest = first[change.path][0] if change.path in first else change
        first[change.path] = (earliest, change.after)
    return first


def plan_revert(
    changes: Sequence[FileChangeRecord],
    last_hash: dict[str, str | None],
    context: ToolContext,
    blobs: BlobStore,
    forced: Collection[str],
) -> Plan:
    """Put every path ``changes`` touched back to its state before the first of them, if
    it still has the hash the log last recorded for it (``forced`` names paths taken as they
    are: relative to the workspace root or absolute)."""
    reverts: list[FileRevert] = []
    conflicts: list[Left] = []
    not_undoable: list[Left] = []
    root = os.path.abspath(context.cwd)
    named = {os.path.normpath(os.path.join(root, path)) for path in forced}
    for path, (first, _) in _net(changes).items():
        expected = last_hash.get(path)
        shown = os.path.relpath(path, root) if path.startswith(root + os.sep) else path
        if first.before == expected:
            continue  # the turns left it as they found it
        if not first.kept:
            not_undoable.append(Left(shown, f"it was bigger than {_MIB} MiB: not kept"))
            continue
        restore = None if first.before is None else blobs.get(first.before)
        if first.before is not None and restore is None:
            not_undoable.append(Left(shown, "its earlier content is missing from the store"))
            continue
        try:
            target = resolve_path(context, path)
        except ToolError:
            conflicts.append(Left(shown, "outside the workspace now"))
            continue
        now = look(target.real)
        why = _conflict(now.kind, now.hash, expected)
        if why is not None and not (why in _FORCIBLE and target.path in named):
            conflicts.append(Left(target.shown, why))
            continue
        reverts.append(FileRevert(target, now.hash, restore, now.data))
    return Plan(tuple(reverts), tuple(conflicts), tuple(not_undoable))


def _conflict(kind: str, sha: str | None, expected: str | None) -> str | None:
    match kind:
        case "directory":
            return "now a directory"
        case "unreadable":
            return "unreadable now"
        case "other":
            return "now something else than a file"
        case "absent":
            return None if expected is None else "deleted since"
        case _:
            return None if sha == expected else "changed since"


def undeclared_calls(
    turns: Iterable[LoggedTurn], lookup: Callable[[str], ToolDefinition | None]
) -> tuple[Left, ...]:
    """The calls of ``turns`` to tools that may change things without declaring which files:
    whatever they changed is not undoable."""
    left: list[Left] = []
    for turn in turns:
        for name in turn.tools:
            definition = lookup(name)
            if definition is None or (not definition.read_only and definition.file_effects is None):
                left.append(Left(f"turn {turn.number}: {name}", "declares no file changes"))
    return tuple(left)
