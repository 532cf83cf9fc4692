"""One translator for live calls and replay: stored calls → ``tool_call`` / ``tool_call_update``.

Live and replay call :func:`translate_call` and :func:`translate_result` with the same values, so
they draw the same updates (live progress and call-time previews aside): presenters are pure. A
presenter that raises or returns no view falls back to the generic card; a turn never breaks on
presentation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final, get_args

import attrs

from acp_sidecar.bridge.cards import call_start, plan_updates, result_update
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.protocol import (
    Plan,
    PlanRemoved,
    PlanUpdate,
    TextContentBlock,
    ToolCallContentBlock,
    ToolCallProgress,
    ToolCallStart,
)
from acp_sidecar.tools.built import generic_call_view, tool_result
from acp_sidecar.tools.definition import ToolDefinition
from acp_sidecar.tools.effects import undo_note
from acp_sidecar.tools.execution import ToolCallRecord
from acp_sidecar.tools.json_values import FrozenJson
from acp_sidecar.tools.presentation import (
    GenericCallView,
    PlanResultView,
    ToolCallKind,
    ToolCallView,
    ToolResult,
    ToolResultView,
    is_call_view,
    is_result_view,
)
from acp_sidecar.tools.result import ToolExecutionResult

logger = logging.getLogger(__name__)

REFUSED_CODES = frozenset(
    {
        "UNKNOWN_TOOL",
        "INVALID_INPUT",
        "INVALID_ARGS",
        "DENIED",
        "BLOCKED",
        "LISTENER_FAILED",
        "INVALID_RESULT",
        "INTERRUPTED",
    }
)
"""Error codes of calls the pipeline refused or rewrote before or around the tool's own work,
or that never returned (``INTERRUPTED``: the sidecar stopped while they ran): their cards
show the error text, not the tool's result presenter, which would have nothing of the tool's
to show."""

ResultUpdate = ToolCallProgress | Plan | PlanUpdate | PlanRemoved
"""What completing a call sends: its card's ``tool_call_update``, then, for a call whose
result replaces one of the session's plans, the plan's update (``plan`` for a client without
plan operations, else ``plan_update`` / ``plan_removed``)."""

_KINDS: Final[tuple[ToolCallKind, ...]] = get_args(ToolCallKind)

ToolLookup = Callable[[str], ToolDefinition | None]
"""Finds a tool's definition by name (``ToolRegistry.get``)."""


def fallback_call_view(name: str, arguments: FrozenJson) -> GenericCallView:
    """The generic card for a call without a usable presenter."""
    try:
        return generic_call_view(name, "other", arguments)
    except (TypeError, ValueError):  # arguments that are not JSON are not shown raw
        return GenericCallView(title=name, kind="other")


def recorded_call_view(call: ToolCallRecord) -> GenericCallView:
    """The generic card of a call whose tool is not registered any more: titled as its card
    was when it was made, when the log kept that, else by the tool's name."""
    if call.title is None:
        return fallback_call_view(call.name, call.arguments)
    kind: ToolCallKind = next((k for k in _KINDS if k == call.kind), "other")
    try:
        return generic_call_view(call.title, kind, call.arguments)
    except (TypeError, ValueError):  # arguments that are not JSON are not shown raw
        return GenericCallView(title=call.title, kind=kind)


def present_call(definition: ToolDefinition | None, call: ToolCallRecord) -> ToolCallView:
    """The call's pending view, or the generic fallback."""
    if definition is None:
        return recorded_call_view(call)
    presenter = definition.present_call
    if presenter is None:
        return fallback_call_view(call.name, call.arguments)
    try:
        view = presenter(call.arguments)
    except Exception:
        logger.exception("present_call of %s raised; showing a generic card", call.name)
        return fallback_call_view(call.name, call.arguments)
    if view is None:
        return fallback_call_view(call.name, call.arguments)
    if not is_call_view(view):
        logger.error(
            "present_call of %s returned %s, not a call view; showing a generic card",
            call.name,
            type(view).__name__,
        )
        return fallback_call_view(call.name, call.arguments)
    return view


def present_result(
    definition: ToolDefinition | None,
    call: ToolCallRecord,
    result: ToolExecutionResult,
    outcome: ToolResult,
) -> ToolResultView | None:
    """The call's completed view, or ``None`` to show the raw result content.

    ``outcome`` is ``result`` as the presenter sees it (content, ``is_error``, meta).
    """
    presenter = definition.present_result if definition is not None else None
    if presenter is None:
        return None
    if result.is_error and result.error is not None and result.error.code in REFUSED_CODES:
        return None
    try:
        view = presenter(call.arguments, outcome)
    except Exception:
        logger.exception("present_result of %s raised; showing the raw result", call.name)
        return None
    if view is not None and not is_result_view(view):
        logger.error(
            "present_result of %s returned %s, not a result view; showing the raw result",
            call.name,
            type(view).__name__,
        )
        return None
    return view


def translate_call(
    lookup: ToolLookup, call: ToolCallRecord, ctx: CardContext, preview: ToolCallView | None = None
) -> tuple[ToolCallStart, ToolCallView]:
    """The ``tool_call`` for a call, with the view it was drawn from (for its result).

    ``preview``: the tool's call-time card, drawn instead of its pure one (live calls only; a
    preview that cannot be drawn leaves the card to the pure presenter)."""
    if preview is not None:
        try:
            return call_start(call.call_id, preview, ctx, call.arguments, name=call.name), preview
        except Exception:
            logger.exception("the preview of %s could not be drawn; drawing its card", call.name)
    view = present_call(lookup(call.name), call)
    try:
        return call_start(call.call_id, view, ctx, call.arguments, name=call.name), view
    except Exception:
        logger.exception("the %s card could not be drawn; showing a generic card", call.name)
        view = fallback_call_view(call.name, call.arguments)
        return call_start(call.call_id, view, ctx, call.arguments, name=call.name), view


def translate_result(
    lookup: ToolLookup,
    call: ToolCallRecord,
    call_view: ToolCallView,
    result: ToolExecutionResult,
    ctx: CardContext,
    *,
    streamed: int = 0,
) -> list[ResultUpdate]:
    """The ``tool_call_update`` that completes a call's card, followed by the plan's update
    when the call's result view is a plan (replay sends the same, so the plan replays)."""
    outcome = tool_result(result.content, result.is_error, result.meta)
    view = present_result(lookup(call.name), call, result, outcome)
    try:
        card = result_update(call.call_id, call_view, view, outcome, ctx, streamed=streamed)
    except Exception:
        logger.exception("the %s result card could not be drawn; showing raw", call.name)
        return [result_update(call.call_id, call_view, None, outcome, ctx)]
    note = undo_note(result.meta)
    if note is not None:  # what the session kept of the call's files (a file too big to undo)
        told = TextContentBlock(text=note)
        card = attrs.evolve(card, content=[*(card.content or []), ToolCallContentBlock(told)])
    if isinstance(view, PlanResultView):
        return [card, *plan_updates(view, ctx)]
    return [card]
