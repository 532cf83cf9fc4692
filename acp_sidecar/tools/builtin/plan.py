"""``plan``: the model's todo list (or a Markdown plan), shown as the session's plan; each call
replaces the checklist or the Markdown plan whole.

Declared ``read_only`` (nothing on disk changes). Its card is still drawn: it marks where the
plan changed, and shows a refused or failed update. Pure of session state, so it replays.
"""

from __future__ import annotations

import posixpath
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

MAX_DOCUMENT: Final = 200_000
"""Characters one Markdown plan may hold."""

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
    """The parameters of ``plan``: a checklist (``entries``) or a Markdown plan (``markdown``)."""

    entries: Annotated[
        list[PlanEntryArgs] | None,
        "The whole checklist, in order; it replaces the previous one (an empty list clears it).",
    ] = None
    markdown: Annotated[
        str | None,
        "Instead of entries: the whole plan as one Markdown document; it replaces the previous "
        "Markdown plan (an empty string removes it). The checklist is kept beside it.",
    ] = None
    path: Annotated[
        str | None,
        "With markdown: the absolute path of the file that holds this plan, if it has one "
        "(this tool does not write it).",
    ] = None


def _items(args: PlanArgs) -> tuple[PlanItem, ...]:
    return tuple(PlanItem(e.content, e.priority, e.status) for e in args.entries or ())


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
    if (args.entries is None) == (args.markdown is None):
        raise ToolArgsError(["/: give either entries (a checklist) or markdown (a document)"])
    if args.markdown is not None:
        _check_document(args)
        return
    entries = args.entries or []
    problems = [
        f"/entries/{index}/content: must not be blank"
        for index, entry in enumerate(entries)
        if not entry.content.strip()
    ]
    if len(entries) > MAX_ENTRIES:
        problems.append(f"/entries: at most {MAX_ENTRIES} entries, got {len(entries)}")
    if args.path is not None:
        problems.append("/path: only with markdown")
    if problems:
        raise ToolArgsError(problems)


def _check_document(args: PlanArgs) -> None:
    problems = []
    if len(args.markdown or "") > MAX_DOCUMENT:
        problems.append(f"/markdown: at most {MAX_DOCUMENT} characters")
    if args.path is not None and not posixpath.isabs(args.path):
        problems.append(f"/path: must be absolute, got {args.path!r}")
    if problems:
        raise ToolArgsError(problems)


def _document_summary(args: PlanArgs) -> str:
    if not (args.markdown or "").strip():
        return "Markdown plan removed"
    lines = len(args.markdown.splitlines()) if args.markdown else 0
    return f"Markdown plan, {lines} line{'' if lines == 1 else 's'}"


async def execute_plan(args: PlanArgs, execution: ToolExecution) -> ToolOutput:
    """Run one ``plan`` call: check the entries and say what the plan now is."""
    del execution  # the plan lives in the call and its result: nothing else is touched
    _check(args)
    if args.markdown is not None:
        return ToolOutput(f"Plan updated: {_document_summary(args)}.")
    return ToolOutput(f"Plan updated: {summary(_items(args))}.")


def present_plan_call(args: PlanArgs) -> GenericCallView:
    """The pending card: one line, the entries as raw input."""
    return GenericCallView(title=PENDING_TITLE, kind="other")


def present_plan_result(args: PlanArgs, result: ToolResult) -> PlanResultView | None:
    """The plan itself (the bridge sends it as the session's plan); nothing for a failed call,
    whose card shows the error instead."""
    if result.is_error:
        return None
    if args.markdown is not None:
        return PlanResultView(
            title=f"Plan: {_document_summary(args)}", markdown=args.markdown, path=args.path
        )
    items = _items(args)
    return PlanResultView(title=f"Plan: {summary(items)}", entries=items)


plan_tool = define_tool(
    name="plan",
    description=(
        "Keep a todo list for the current task, shown to the user as your plan. Use it for "
        "work of several steps: write the steps first, then call it again whenever a step "
        "starts or is done. Each call replaces the whole plan, so always send every entry, "
        "each with content, priority (high, medium, low) and status (pending, in_progress, "
        "completed); keep one entry in_progress at a time. Skip it for a single quick step. "
        "For a plan that reads better as prose (a design, the steps of a change), send "
        "markdown instead of entries: the whole document each time."
    ),
    parameters=PlanArgs,
    execute=execute_plan,
    present_call=present_plan_call,
    present_result=present_plan_result,
    read_only=True,
)
