"""``plan``: the model's todo list for the task at hand, shown to the user as the session's plan.

Each call replaces the whole plan (entries with ``content``, ``priority`` and ``status``); the
model reads back a one-line summary. Nothing on disk changes, so the tool is declared
``read_only``: it runs without asking in ``ask`` mode and is allowed in ``read-only`` mode.

The plan reaches the editor through the presentation vocabulary, not through anything ACP
(this package knows no ACP): the result view is a
:class:`~acp_sidecar.tools.presentation.PlanResultView`, which the bridge sends as a ``plan``
session update after completing the call's card. Because replay runs the same translator over
the stored call and result, the plan replays on ``session/load`` and in ``acp-sidecar replay``.

Why a card is shown too: every call opens its card before the policy and the hooks run (the
pipeline's invariant: a call refused by a hook, asked about, failed or interrupted is visible
with its outcome), and the card marks *where* in the thread the plan changed. Zed draws the
plan in its own panel above the input and a card for every ``tool_call``; the card here is
one collapsed line ("Plan: 3 entries, 1 in progress") with nothing to expand but the raw
input. Toad draws the plan inline, right after that line. Claude's ACP adapter sends no card
for its todo tool at all; that saves the line but hides a failed update from the user.

Invariants:
- The arguments are the whole plan; an empty list clears it. Every entry's ``content`` is
  non-blank; ``priority`` and ``status`` are from the closed sets the schema lists.
- The result and the views depend only on the arguments (no session state is read or kept
  here): replaying the stored call redraws exactly the plan the user saw.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import attrs

from acp_sidecar.tools.content import ToolOutput
from acp_sidecar.tools.definition import define_tool
from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.presentation import (
    GenericCallView,
    PlanItem,
    PlanResultView,
    ToolResult,
)

MAX_ENTRIES: Final = 100
"""Entries one plan may hold (a plan is a short list a person reads)."""

PENDING_TITLE: Final = "Update plan"


@attrs.frozen
class PlanEntryArgs:
    """One entry of the plan."""

    content: Annotated[str, "What the task is, in a short sentence."]
    priority: Annotated[Literal["high", "medium", "low"], "How important the task is."]
    status: Annotated[
        Literal["pending", "in_progress", "completed"],
        "Where the task stands; keep at most one in_progress at a time.",
    ]


@attrs.frozen
class PlanArgs:
    """The parameters of ``plan``."""

    entries: Annotated[
        list[PlanEntryArgs],
        "The whole plan, in order; it replaces the previous one (an empty list clears it).",
    ]


def _items(args: PlanArgs) -> tuple[PlanItem, ...]:
    return tuple(PlanItem(e.content, e.priority, e.status) for e in args.entries)


def summary(items: tuple[PlanItem, ...]) -> str:
    """``3 entries, 1 in progress`` (and how many are done, when some are)."""
    if not items:
        return "cleared"
    count = len(items)
    text = f"{count} entr{'y' if count == 1 else 'ies'}"
    running = sum(1 for item in items if item.status == "in_progress")
    done = sum(1 for item in items if item.status == "completed")
    if running:
        text += f", {running} in progress"
    if done:
        text += f", {done} completed"
    return text


def _check(args: PlanArgs) -> None:
    problems = [
        f"/entries/{index}/content: must not be blank"
        for index, entry in enumerate(args.entries)
        if not entry.content.strip()
    ]
    if len(args.entries) > MAX_ENTRIES:
        problems.append(f"/entries: at most {MAX_ENTRIES} entries, got {len(args.entries)}")
    if problems:
        raise ToolArgsError(problems)


async def execute_plan(args: PlanArgs, execution: ToolExecution) -> ToolOutput:
    """Run one ``plan`` call: check the entries and say what the plan now is."""
    del execution  # the plan lives in the call and its result: nothing else is touched
    _check(args)
    return ToolOutput(f"Plan updated: {summary(_items(args))}.")


def present_plan_call(args: PlanArgs) -> GenericCallView:
    """The pending card: one line, the entries as raw input."""
    return GenericCallView(title=PENDING_TITLE, kind="other")


def present_plan_result(args: PlanArgs, result: ToolResult) -> PlanResultView | None:
    """The plan itself (the bridge sends it as the session's plan); nothing for a failed call,
    whose card shows the error instead."""
    if result.is_error:
        return None
    items = _items(args)
    return PlanResultView(title=f"Plan: {summary(items)}", entries=items)


plan_tool = define_tool(
    name="plan",
    description=(
        "Keep a todo list for the current task, shown to the user as your plan. Use it for "
        "work of several steps: write the steps first, then call it again whenever a step "
        "starts or is done. Each call replaces the whole plan, so always send every entry, "
        "each with content, priority (high, medium, low) and status (pending, in_progress, "
        "completed); keep one entry in_progress at a time. Skip it for a single quick step."
    ),
    parameters=PlanArgs,
    execute=execute_plan,
    present_call=present_plan_call,
    present_result=present_plan_result,
    read_only=True,
)
