"""The tool calls of one model response, run through the pipeline.

Invariants:
- Every call the model made gets exactly one result, returned in the order of its calls,
  whatever order they finish in; at most ``cap`` run at once (a queued call's card appears
  when it starts).
- A call whose arguments parse runs through :func:`~acp_sidecar.bridge.runner.run_call`
  with exactly what the model sent: the whole pipeline, its card, its record.
- Arguments that are not JSON never reach the registry. The call still gets what any
  refused call gets — a recorded call (arguments ``None``) and result, and a card drawn by
  the same translator replay uses — with an ``INVALID_ARGS`` result that quotes what the model
  wrote, so it can correct itself.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Final, NoReturn

import attrs

from acp_sidecar.agent.driver import Turn
from acp_sidecar.agent.model.messages import EMPTY_ARGUMENTS
from acp_sidecar.bridge.runner import run_call
from acp_sidecar.bridge.translate import ToolCallEvent, translate_call, translate_result
from acp_sidecar.tools.content import TextContent
from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.execution import ToolErrorInfo, ToolExecutionResult
from acp_sidecar.tools.registry import ToolRegistry

QUOTED_CHARS: Final = 500
"""How much of unparseable arguments an error result quotes back to the model."""


@attrs.frozen
class PlannedCall:
    """A call as the model streamed it, with its session-unique id and parsed arguments."""

    call_id: str
    name: str
    text: str
    """The arguments' text as the model wrote it."""
    arguments: object = None
    """Their JSON value (when ``error`` is ``None``)."""
    error: ToolArgsError | None = None
    """Why the text is not JSON."""

    @classmethod
    def parse(cls, call_id: str, name: str, text: str) -> PlannedCall:
        """The call with its arguments parsed (see :func:`parse_arguments`)."""
        try:
            return cls(call_id, name, text, parse_arguments(text))
        except ToolArgsError as error:
            return cls(call_id, name, text, error=error)

    @property
    def sent_arguments(self) -> str:
        """The arguments as the next request repeats them: valid JSON text (else ``{}``)."""
        return self.text if self.error is None and self.text.strip() else EMPTY_ARGUMENTS


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def parse_arguments(text: str) -> object:
    """The JSON value of a call's arguments (blank text, which some servers send for a call
    without arguments, is ``{}``).

    Raises:
        ToolArgsError: the text is not JSON (``NaN`` and ``Infinity`` included).
    """
    if not text.strip():
        return {}
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except ValueError as exc:
        quoted = text if len(text) <= QUOTED_CHARS else text[:QUOTED_CHARS] + "…"
        raise ToolArgsError(
            [f"the arguments are not valid JSON ({exc}); they were: {quoted}"]
        ) from None


async def refuse_call(
    registry: ToolRegistry, turn: Turn, call: PlannedCall, error: ToolArgsError
) -> ToolExecutionResult:
    """Answer a call that cannot run with ``error``, recording it and drawing its card."""
    result = ToolExecutionResult(
        call_id=call.call_id,
        content=(TextContent(str(error)),),
        is_error=True,
        error=ToolErrorInfo(name=error.name, code=error.code),
    )
    event = ToolCallEvent(call_id=call.call_id, name=call.name, arguments=None)
    scope = turn.scope
    if turn.record is not None:
        await turn.record(event, None)
    start, view = translate_call(registry.get, event, scope.cards)
    await scope.send(start)
    if turn.record is not None:
        await turn.record(event, result)
    await scope.send(translate_result(registry.get, event, view, result, scope.cards))
    return result


async def run_calls(
    registry: ToolRegistry, turn: Turn, calls: Sequence[PlannedCall], cap: int
) -> list[ToolExecutionResult]:
    """Run ``calls`` (``cap`` at a time); their results in call order."""
    limit = asyncio.Semaphore(cap)

    async def run(call: PlannedCall) -> ToolExecutionResult:
        async with limit:
            if call.error is not None:
                return await refuse_call(registry, turn, call, call.error)
            return await run_call(
                registry, turn.scope, call.call_id, call.name, call.arguments, record=turn.record
            )

    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(run(call)) for call in calls]
    return [task.result() for task in tasks]
