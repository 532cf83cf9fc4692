"""Runs one tool call inside a session and draws its card from start to end.

Invariants, per call: the ``tool_call`` (``pending``) goes out before any policy runs;
``in_progress`` goes out when dispatch starts (after permission); progress streams through a
:class:`~acp_sidecar.bridge.live.LiveCall`; the final ``tool_call_update`` always follows the
last progress update. Stored events (:class:`ToolCallRecord` and the result) are what replay
feeds to the same translator.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from acp_sidecar.bridge.live import LiveCall
from acp_sidecar.bridge.policy import CallScope
from acp_sidecar.bridge.translate import translate_call, translate_result
from acp_sidecar.store.records import ToolCallRecord
from acp_sidecar.tools.execution import ToolExecutionInput, ToolExecutionResult
from acp_sidecar.tools.json_values import JsonValueError, freeze_json
from acp_sidecar.tools.registry import ToolRegistry

EventSink = Callable[[ToolCallRecord, ToolExecutionResult | None], Awaitable[None]]
"""Hears a call (``result`` is ``None``) and then its result, e.g. to store them."""


async def run_call(
    registry: ToolRegistry,
    scope: CallScope,
    call_id: str,
    name: str,
    arguments: object,
    *,
    record: EventSink | None = None,
) -> ToolExecutionResult:
    """Run a call through the registry's whole pipeline, drawing its card as it goes."""
    try:
        shown = freeze_json(arguments)
    except JsonValueError:
        shown = None  # the registry rejects it; the card shows no raw input
    event = ToolCallRecord(call_id=call_id, name=name, arguments=shown)
    if record is not None:
        await record(event, None)
    start, view = translate_call(registry.get, event, scope.cards)
    scope.pending[call_id] = (start, view)
    await scope.send(start)
    live = LiveCall(call_id, view, scope.cards, scope.send)
    try:
        result = await registry.execute(
            ToolExecutionInput(
                call_id=call_id,
                name=name,
                arguments=arguments,
                context=scope,
                signal=scope.signal,
                progress=live,
            )
        )
    finally:
        streamed = await live.close()
        scope.pending.pop(call_id, None)
    if record is not None:
        await record(event, result)
    await scope.send(
        translate_result(registry.get, event, view, result, scope.cards, streamed=streamed)
    )
    return result
