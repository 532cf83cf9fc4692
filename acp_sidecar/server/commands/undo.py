"""``/undo [N]``, ``/redo`` and ``/rewind [N]``: the session's turns taken back (or given
back) file by file, from the before-images its log names.

Invariants: nothing is written unless every file still is what the log last recorded for
it (``--force FILE…`` takes named ones as they are); every write is asked about as a write
(refused in ``read-only``); what was done is one :class:`UndoRecord` after its file changes.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from acp_sidecar.server.commands.base import CommandAnswer, CommandContext

if TYPE_CHECKING:
    from acp_sidecar.server.undo.plan import Left, Plan
    from acp_sidecar.store.blobs import BlobStore
    from acp_sidecar.store.records import FileChangeRecord
    from acp_sidecar.store.rewinds import LoggedTurn, Rewinds


@attrs.frozen
class _Typed:
    count: int | None
    forced: tuple[str, ...]


def _parse(argument: str, usage: str) -> _Typed | str:
    """The number and the ``--force`` files typed, or what is wrong with them."""
    try:
        words = shlex.split(argument)
    except ValueError as exc:
        return f"{usage} ({exc})"
    count: int | None = None
    if words and words[0] != "--force":
        if not words[0].isdigit() or int(words[0]) < 1:
            return f"{usage}: `{words[0]}` is not a number of at least 1."
        count, words = int(words[0]), words[1:]
    if words and words[0] != "--force":
        return f"{usage}: `{words[0]}` is not understood."
    forced = tuple(words[1:])
    if words and not forced:
        return f"{usage}: `--force` names the files to take back anyway."
    return _Typed(count, forced)


async def _rewinds(context: CommandContext) -> tuple[Rewinds, BlobStore] | str:
    from acp_sidecar.store.blobs import BlobStore, blobs_path
    from acp_sidecar.store.rewinds import read_rewinds

    session, store = context.session, context.connection.store
    recorder = session.recorder
    if recorder is None or store is None:
        return "This session is not stored, so it keeps no earlier content of files to undo."
    recorder.flush()

    def read() -> Rewinds:
        with store.open_log(session.session_id) as log:
            return read_rewinds(log)

    rewinds = await asyncio.to_thread(read)
    return rewinds, BlobStore(blobs_path(store.path_of(session.session_id)))


def _listed(lefts: Sequence[Left]) -> str:
    return "\n".join(f"- `{left.shown}`: {left.why}" for left in lefts)


def _files(shown: Sequence[str], none: str) -> str:
    return ", ".join(f"`{path}`" for path in shown) or none


def _numbers(numbers: Sequence[int]) -> str:
    shown = ", ".join(str(n) for n in sorted(numbers))
    return f"turn{'s' if len(numbers) > 1 else ''} {shown}"


async def _take_back(
    context: CommandContext,
    changes: Sequence[FileChangeRecord],
    rewinds: Rewinds,
    blobs: BlobStore,
    forced: Sequence[str],
    verb: str,
) -> tuple[Plan, str | None, tuple[str, ...]]:
    """Check and carry out the revert of ``changes``: the plan, why nothing was written (if
    so), and the files written."""
    from acp_sidecar.server.undo.apply import apply_plan
    from acp_sidecar.server.undo.plan import plan_revert

    turn, recorder = context.turn, context.session.recorder
    assert turn is not None and recorder is not None  # not immediate; a stored session
    scope = turn.scope
    plan = await asyncio.to_thread(
        plan_revert, changes, rewinds.last_hash, scope, blobs, frozenset(forced)
    )
    if plan.conflicts:
        return plan, "conflict", ()
    applied = await apply_plan(plan.reverts, scope, blobs, recorder.undo_record, verb)
    if applied.refused is not None:
        return plan, f"Nothing was reverted: {applied.refused}.", ()
    if applied.failed is not None:
        return (
            plan,
            f"A write failed ({applied.failed}); the files before it were reverted.",
            applied.reverted,
        )
    return plan, None, applied.reverted


def _conflict_answer(plan: Plan, what: str, retry: str) -> str:
    named = " ".join(left.shown for left in plan.conflicts)
    return (
        f"Nothing was reverted: these files are no longer what {what} left:\n"
        f"{_listed(plan.conflicts)}\n\nTo take them back anyway: `{retry} --force {named}`."
    )


async def _undo_turns(
    context: CommandContext, turns: Sequence[LoggedTurn], typed: _Typed, retry: str
) -> CommandAnswer:
    from acp_sidecar.server.undo.plan import undeclared_calls
    from acp_sidecar.store.records import UndoRecord

    loaded = await _rewinds(context)
    if isinstance(loaded, str):
        return CommandAnswer(loaded)
    rewinds, blobs = loaded
    changes = [change for turn in turns for change in turn.changes]
    what = _numbers([turn.number for turn in turns])
    plan, stopped, reverted = await _take_back(
        context, changes, rewinds, blobs, typed.forced, "Undo"
    )
    if stopped == "conflict":
        return CommandAnswer(_conflict_answer(plan, what, retry))
    if stopped is not None and not reverted:
        return CommandAnswer(stopped)
    recorder = context.session.recorder
    assert recorder is not None
    recorder.undo_record(UndoRecord(turns=tuple(turn.number for turn in turns)))
    lines = [
        f"Undid {what}: " + (", ".join(f"`{p}`" for p in reverted) or "no file to revert") + "."
    ]
    if stopped is not None:
        lines.append(stopped)
    lookup = (
        context.connection.tools.registry.get
        if context.session.tools is None
        else context.session.tools.get
    )
    left = (*plan.not_undoable, *undeclared_calls(turns, lookup))
    if left:
        lines.append(f"Not undoable (left as they are):\n{_listed(left)}")
    lines.append("`/redo` gives them back.")
    return CommandAnswer("\n\n".join(lines))


async def undo(context: CommandContext) -> CommandAnswer:
    """Take back the last turn (``N``: the last N) not already undone."""
    typed = _parse(context.argument, "`/undo` takes a number of turns, then `--force FILE…`")
    if isinstance(typed, str):
        return CommandAnswer(typed)
    loaded = await _rewinds(context)
    if isinstance(loaded, str):
        return CommandAnswer(loaded)
    active = loaded[0].active()
    count = typed.count or 1
    if not active:
        return CommandAnswer("There is no turn to undo.")
    taken = active[-count:]
    retry = "/undo" if count == 1 else f"/undo {count}"
    return await _undo_turns(context, taken, typed, retry)


async def rewind(context: CommandContext) -> CommandAnswer:
    """List the turns; ``N``: take back every turn after turn N."""
    typed = _parse(context.argument, "`/rewind` takes a turn's number, then `--force FILE…`")
    if isinstance(typed, str):
        return CommandAnswer(typed)
    loaded = await _rewinds(context)
    if isinstance(loaded, str):
        return CommandAnswer(loaded)
    rewinds = loaded[0]
    if typed.count is None:
        return CommandAnswer(_listing(rewinds))
    known = {turn.number for turn in rewinds.turns}
    if typed.count not in known:
        return CommandAnswer(f"There is no turn {typed.count}; `/rewind` lists them.")
    taken = [turn for turn in rewinds.active() if turn.number > typed.count]
    if not taken:
        return CommandAnswer(f"Turn {typed.count} is already the last turn; nothing to rewind.")
    return await _undo_turns(context, taken, typed, f"/rewind {typed.count}")


def _listing(rewinds: Rewinds) -> str:
    if not rewinds.turns:
        return "This session has no turns yet."
    undone = rewinds.undone
    lines = []
    for turn in rewinds.turns:
        at = "" if turn.at is None else turn.at.strftime("%Y-%m-%d %H:%M:%S UTC") + " — "
        prompt = " ".join(turn.prompt.split())
        prompt = prompt if len(prompt) <= 60 else prompt[:59] + "…"
        paths = sorted({change.path for change in turn.changes})
        files = ", ".join(f"`{p}`" for p in paths) or "no files"
        mark = " (undone)" if turn.number in undone else ""
        lines.append(f"{turn.number}. {at}{prompt}{mark}: {files}")
    return "Turns of this session (`/rewind N` goes back to just after turn N):\n\n" + "\n".join(
        lines
    )


async def redo(context: CommandContext) -> CommandAnswer:
    """Give back what the last undo not yet redone took."""
    from acp_sidecar.store.records import UndoRecord

    typed = _parse(context.argument, "`/redo` takes `--force FILE…` only")
    if isinstance(typed, str) or typed.count is not None:
        return CommandAnswer(typed if isinstance(typed, str) else "`/redo` takes no number.")
    loaded = await _rewinds(context)
    if isinstance(loaded, str):
        return CommandAnswer(loaded)
    rewinds, blobs = loaded
    if not rewinds.standing:
        return CommandAnswer("There is no undo to redo.")
    action = rewinds.standing[-1]
    what = _numbers(action.turns)
    plan, stopped, reverted = await _take_back(
        context, action.changes, rewinds, blobs, typed.forced, "Redo"
    )
    if stopped == "conflict":
        return CommandAnswer(_conflict_answer(plan, f"the undo of {what}", "/redo"))
    if stopped is not None and not reverted:
        return CommandAnswer(stopped)
    recorder = context.session.recorder
    assert recorder is not None
    recorder.undo_record(UndoRecord(turns=action.turns, redo=True))
    lines = [
        f"Redid {what}: " + (", ".join(f"`{p}`" for p in reverted) or "no file to put back") + "."
    ]
    if stopped is not None:
        lines.append(stopped)
    if plan.not_undoable:
        lines.append(f"Not redone (left as they are):\n{_listed(plan.not_undoable)}")
    return CommandAnswer("\n\n".join(lines))
