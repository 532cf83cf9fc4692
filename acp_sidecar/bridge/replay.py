"""Replay: the stored events of a call become the same cards the editor saw live.

Invariant: replay uses the live path's translator (:mod:`acp_sidecar.bridge.translate`), so a
replayed call is the live call minus its transient progress: the ``tool_call`` and the final
``tool_call_update`` are identical, except that a capable terminal's final update carries the
whole output (live, part of it went out as progress first).
"""

from __future__ import annotations

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.translate import (
    ToolCallEvent,
    ToolLookup,
    translate_call,
    translate_result,
)
from acp_sidecar.protocol import ToolCallProgress, ToolCallStart
from acp_sidecar.tools.execution import ToolExecutionResult


def replay_call(
    lookup: ToolLookup,
    event: ToolCallEvent,
    result: ToolExecutionResult | None,
    ctx: CardContext,
) -> list[ToolCallStart | ToolCallProgress]:
    """The updates that redraw one stored call (only its ``tool_call`` if it never finished)."""
    start, view = translate_call(lookup, event, ctx)
    if result is None:
        return [start]
    return [start, translate_result(lookup, event, view, result, ctx)]
