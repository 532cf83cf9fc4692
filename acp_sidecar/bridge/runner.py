"""One tool call inside a session, its card drawn from start to end: :func:`open_call`,
:func:`execute_call`, :func:`close_call` (a driver may take them apart), :func:`run_call`.

The ``pending`` card goes out once, before any policy runs; its record is written before the
card; replay feeds the recorded call and result to the same translator.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import attrs

from acp_sidecar.bridge.live import LiveCall
from acp_sidecar.bridge.policy import CallScope
from acp_sidecar.bridge.translate import ToolLookup, translate_call, translate_result
from acp_sidecar.tools.asking import first_view
from acp_sidecar.tools.execution import ToolCallRecord, ToolExecutionInput
from acp_sidecar.tools.json_values import JsonValueError, freeze_json
from acp_sidecar.tools.presentation import ToolCallView
from acp_sidecar.tools.registry import ToolRegistry
from acp_sidecar.tools.result import ToolExecutionResult

EventSink = Callable[[ToolCallRecord, ToolExecutionResult | None], Awaitable[None]]
"""Hears a call (``result`` is ``None``) and then its result, e.g. to store them."""


@attrs.frozen
class OpenCall:
    """A call whose pending card is drawn: what running and closing it need."""

    call: ToolCallRecord
    view: ToolCallView
    """The view the pending card was drawn from (its result card builds on it)."""


@attrs.frozen
class Executed:
    """What running an open call gave: its result, and how much output streamed live."""

    result: ToolExecutionResult
    streamed: int


def call_record(call_id: str, name: str, arguments: object) -> ToolCallRecord:
    """The record of a call; arguments that are not lossless JSON are recorded as ``None``
    (the registry rejects them, and the card shows no raw input)."""
    try:
        shown = freeze_json(arguments)
    except JsonValueError:
        shown = None
    return ToolCallRecord(call_id=call_id, name=name, arguments=shown)


async def open_call(
    lookup: ToolLookup, scope: CallScope, call: ToolCallRecord, *, record: EventSink | None = None
) -> OpenCall:
    """Draw the call's pending card: what it would change now when its tool can say (its
    call-time preview: a write's diff against the file as it is), else its pure card. The
    call goes to ``record`` first, with the title and kind its card shows."""
    definition = lookup(call.name)
    preview = await first_view(definition, call.call_id, call.arguments, scope, scope.signal)
    start, view = translate_call(lambda _name: definition, call, scope.cards, preview)
    call = attrs.evolve(call, title=start.title, kind=start.kind)
    if record is not None:
        await record(call, None)
    scope.pending[call.call_id] = (start, view)
    await scope.send(start)
    return OpenCall(call, view)


async def execute_call(
    registry: ToolRegistry, scope: CallScope, opened: OpenCall, arguments: object
) -> Executed:
    """Run an open call through the registry's whole pipeline, streaming its progress."""
    call_id = opened.call.call_id
    live = LiveCall(call_id, opened.view, scope.cards, scope.send)
    try:
        with scope.calls.running(call_id, scope.signal, session_id=scope.session_id) as signal:
            result = await registry.execute(
                ToolExecutionInput(
                    call_id=call_id,
                    name=opened.call.name,
                    arguments=arguments,
                    context=scope,
                    signal=signal,  # the turn's, or this call's own cancel
                    progress=live,
                )
            )
    finally:
        try:
            streamed = await live.close()
        except BaseException:
            scope.calls.forget(call_id)  # torn down before its card closes: none will
            raise
        scope.pending.pop(call_id, None)
    return Executed(result, streamed)


async def close_call(
    lookup: ToolLookup,
    scope: CallScope,
    opened: OpenCall,
    result: ToolExecutionResult,
    *,
    streamed: int = 0,
) -> None:
    """Draw the call's result card (also for a call answered without running)."""
    scope.pending.pop(opened.call.call_id, None)
    scope.calls.closing(opened.call.call_id)
    updates = translate_result(
        lookup, opened.call, opened.view, result, scope.cards, streamed=streamed
    )
    for update in updates:
        await scope.send(update)


async def run_call(
    registry: ToolRegistry,
    scope: CallScope,
    call_id: str,
    name: str,
    arguments: object,
    *,
    record: EventSink | None = None,
) -> ToolExecutionResult:
    """Open, run and close a call, recording it and its result."""
    opened = await open_call(
        registry.get, scope, call_record(call_id, name, arguments), record=record
    )
    executed = await execute_call(registry, scope, opened, arguments)
    if record is not None:
        await record(opened.call, executed.result)
    await close_call(registry.get, scope, opened, executed.result, streamed=executed.streamed)
    return executed.result
