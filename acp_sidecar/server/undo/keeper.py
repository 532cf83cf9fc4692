"""A session's :class:`~acp_sidecar.tools.effects.FileEffectKeeper`: before a call runs, the
whole before-image of each declared path goes to the blob store (or "absent"); after it ran,
one :class:`FileChangeRecord` per path it changed, always after the blob it names."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import assert_never

import attrs

from acp_sidecar.server.undo.seen import Seen, look
from acp_sidecar.store.blobs import MAX_KEPT, BlobStore
from acp_sidecar.store.records import FileChangeRecord
from acp_sidecar.tools.builtin.files.paths import WorkspacePath, resolve_path
from acp_sidecar.tools.context import ToolContext
from acp_sidecar.tools.effects import FileEffect
from acp_sidecar.tools.errors import ToolError


@attrs.frozen
class _Before:
    target: WorkspacePath
    seen: Seen
    kept: bool


@attrs.frozen
class _Pending:
    call_id: str
    paths: tuple[_Before, ...]


class SessionEffects:
    """Keeps the before-images of one session's calls (see the module docstring)."""

    def __init__(
        self,
        context: ToolContext,
        blobs: BlobStore,
        record: Callable[[FileChangeRecord], None],
    ) -> None:
        self._context = context
        self._blobs = blobs
        self._record = record

    async def before(self, call_id: str, effects: Sequence[FileEffect]) -> object:
        targets: dict[str, WorkspacePath] = {}
        for effect in effects:
            try:
                target = resolve_path(self._context, effect.path)
            except ToolError:
                continue  # the call is refused the same way: it changes nothing there
            targets.setdefault(target.path, target)
        kept = await asyncio.to_thread(lambda: [self._keep(t) for t in targets.values()])
        return _Pending(call_id, tuple(before for before in kept if before is not None))

    def _keep(self, target: WorkspacePath) -> _Before | None:
        seen = look(target.real)
        match seen.kind:
            case "absent":
                return _Before(target, seen, kept=True)
            case "file":
                if seen.data is None:
                    return _Before(target, seen, kept=False)
                self._blobs.put(seen.data)
                return _Before(target, attrs.evolve(seen, data=None), kept=True)
            case "directory" | "unreadable" | "other":
                return None  # no file the call could change in place
            case _:
                assert_never(seen.kind)

    async def after(self, token: object) -> str | None:
        assert isinstance(token, _Pending)
        changes = await asyncio.to_thread(self._changes, token)
        notes: list[str] = []
        for before, change in changes:
            self._record(change)
            if not change.kept:
                notes.append(
                    f"Not undoable: {before.target.shown} is bigger than "
                    f"{MAX_KEPT // (1024 * 1024)} MiB, so its earlier content was not kept."
                )
        return "\n".join(notes) or None

    def _changes(self, pending: _Pending) -> list[tuple[_Before, FileChangeRecord]]:
        changes = []
        for before in pending.paths:
            now = look(before.target.real)
            if now.kind not in ("file", "absent") or now.hash == before.seen.hash:
                continue
            change = FileChangeRecord(
                call_id=pending.call_id,
                path=before.target.path,
                before=before.seen.hash,
                after=now.hash,
                kept=before.kept,
            )
            changes.append((before, change))
        return changes
