"""Carrying out a checked :class:`~acp_sidecar.server.undo.plan.Plan`: one diff card per file
(the reversal), asked about as any write is (refused in ``read-only``), then one atomic write
(or removal) per file, each recorded with its before-image kept for ``/redo``.

Every file is asked about before any is written: one refusal reverts nothing.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Sequence

import attrs

from acp_sidecar.bridge.cards import call_start, status_update
from acp_sidecar.bridge.policy import CallScope
from acp_sidecar.server.undo.plan import FileRevert
from acp_sidecar.store.blobs import BlobStore, digest
from acp_sidecar.store.records import FileChangeRecord
from acp_sidecar.tools.builtin.files.atomic import atomic_write
from acp_sidecar.tools.decisions import Allow, Ask, Deny
from acp_sidecar.tools.json_values import FrozenDict, FrozenJson
from acp_sidecar.tools.presentation import DiffCallView, FileDiff, GenericCallView, ToolCallView

TOOL_NAME = "undo"
"""The name undo's cards and permission requests go under."""


@attrs.frozen
class _RevertCall:
    """What the session's permissions see of one file's revert (a ``PermissionCall``)."""

    call_id: str
    name: str
    arguments: FrozenJson


@attrs.frozen
class Applied:
    """What carrying out a plan did."""

    reverted: tuple[str, ...]
    """The files put back (as shown)."""
    refused: str | None = None
    """Why nothing was written (the user or the mode refused), if so."""
    failed: str | None = None
    """Why the files after ``reverted`` were left as they are (a write failed), if so."""


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def card_of(revert: FileRevert, verb: str) -> ToolCallView:
    """The reversal of one file, as a diff (a generic card for a binary or big file)."""
    target = revert.target
    before, after = _text(revert.current), _text(revert.restore)
    binary = (revert.current is not None and before is None) or (
        revert.restore is not None and after is None
    )
    big = revert.current is None and revert.expected is not None
    if binary or big:
        size = "removed" if revert.restore is None else f"{len(revert.restore)} bytes"
        return GenericCallView(
            title=f"{verb} {target.shown} (binary or big file; {size})", kind="edit"
        )
    title = f"{verb} {target.shown}" + (" (remove it)" if revert.restore is None else "")
    return DiffCallView(title=title, diffs=[FileDiff(target.path, before, after or "")])


async def apply_plan(
    reverts: Sequence[FileRevert],
    scope: CallScope,
    blobs: BlobStore,
    record: Callable[[FileChangeRecord], None],
    verb: str,
) -> Applied:
    """Ask about every file, then write them one by one (see the module docstring)."""
    calls: list[tuple[_RevertCall, FileRevert]] = []
    for revert in reverts:
        call_id = f"undo_{uuid.uuid4().hex}"
        arguments = FrozenDict({"path": revert.target.path})
        view = card_of(revert, verb)
        start = call_start(call_id, view, scope.cards, arguments, name=TOOL_NAME)
        scope.pending[call_id] = (start, view)
        await scope.send(start)
        calls.append((_RevertCall(call_id, TOOL_NAME, arguments), revert))
    try:
        for call, _revert in calls:
            decision = scope.judge(call, True, Allow(), open_world=False)
            if isinstance(decision, Ask):
                decision = await scope.ask(call, decision)
            if isinstance(decision, Deny):
                for each, _ in calls:
                    await scope.send(status_update(each.call_id, "failed"))
                return Applied((), refused=decision.reason)
        reverted: list[str] = []
        for call, revert in calls:
            await scope.send(status_update(call.call_id, "in_progress"))
            try:
                change = await asyncio.to_thread(_write, revert, blobs, call.call_id)
            except (OSError, ValueError) as exc:  # a ToolError is a ValueError
                await scope.send(status_update(call.call_id, "failed"))
                for later, _ in calls[len(reverted) + 1 :]:
                    await scope.send(status_update(later.call_id, "failed"))
                return Applied(tuple(reverted), failed=f"{revert.target.shown}: {exc}")
            record(change)
            reverted.append(revert.target.shown)
            await scope.send(status_update(call.call_id, "completed"))
        return Applied(tuple(reverted))
    finally:
        for call, _ in calls:
            scope.pending.pop(call.call_id, None)


def _write(revert: FileRevert, blobs: BlobStore, call_id: str) -> FileChangeRecord:
    """Put one file back; the record of it (its content now kept first, for a redo)."""
    current, kept = revert.current, True
    if current is not None:
        blobs.put(current)
    elif revert.expected is not None:
        kept = False  # too big to keep: the redo of this file is not possible
    if revert.restore is None:
        os.unlink(revert.target.real)
    else:
        atomic_write(revert.target, revert.restore)
    return FileChangeRecord(
        call_id=call_id,
        path=revert.target.path,
        before=revert.expected,
        after=None if revert.restore is None else digest(revert.restore),
        kept=kept,
    )
