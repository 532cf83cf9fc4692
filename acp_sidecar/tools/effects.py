"""What a tool declares it does to files, so the session can undo it: :class:`FileEffect`.

A declaration is a pure function of the call's arguments, read before the call runs; the
session keeps the whole before-image of each declared path and records what the call left.
A tool that declares nothing (``bash``, an MCP tool) has no undoable file changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal, Protocol, TypeAlias

import attrs

from acp_sidecar.tools.json_values import FrozenDict

FileEffectKind: TypeAlias = Literal["create", "change", "delete"]
"""What a call may do to a path: make it, change it (or make it), remove it."""


@attrs.frozen
class FileEffect:
    """One path a call may create, change or delete."""

    path: str
    """The path as the call's arguments give it: relative to the workspace root, or absolute
    (resolved against the session's workspace exactly as the built-in tools resolve theirs)."""
    kind: FileEffectKind = "change"
    """What the call may do to it (every kind is kept alike: the before-image, or "absent")."""


class FileEffectKeeper(Protocol):
    """Keeps the before-images of a call's declared paths and records what it left (the
    session implements it; the tools layer only calls it)."""

    async def before(self, call_id: str, effects: Sequence[FileEffect]) -> object:
        """Keep the before-image of each path, before the call runs; a token for :meth:`after`."""
        ...

    async def after(self, token: object) -> str | None:
        """Record what the call left at each path; a line for the card (``None``: nothing to
        say), e.g. that a file was too big to undo."""
        ...


UNDO_NOTE: Final = "undoNote"
"""The result meta member that carries what a call's card says about undoing it."""


def undo_note(meta: object) -> str | None:
    """What a result's meta says about undoing its call (``None``: nothing)."""
    if isinstance(meta, FrozenDict):
        note = meta.get(UNDO_NOTE)
        if isinstance(note, str):
            return note
    return None
