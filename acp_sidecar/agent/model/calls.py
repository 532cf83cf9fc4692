"""The tool calls of one model response, each started as soon as it is complete.

Invariants:
- A call's card (``pending``) and record go out at once, in call order, even while it waits
  for a slot; the card is opened once and the call run and closed on it.
- Arguments that are not JSON never reach the registry: an ``INVALID_ARGS`` result quotes them.
- Every call started gets exactly one result (``CANCELLED`` if still waiting at a cancel),
  returned in call order; the log gets every call of the response before any result.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Final, NoReturn

import attrs

from acp_sidecar.agent.driver import Turn
from acp_sidecar.agent.model.messages import EMPTY_ARGUMENTS
from acp_sidecar.agent.model.stream import CallDraft
from acp_sidecar.bridge.runner import OpenCall, call_record, close_call, execute_call, open_call
from acp_sidecar.tools.errors import ToolArgsError, ToolCancelledError
from acp_sidecar.tools.execution import ToolCallRecord
from acp_sidecar.tools.registry import ToolRegistry
from acp_sidecar.tools.result import ToolExecutionResult, error_result

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


class StepCalls:
    """The calls of one response: started as they complete, ``cap`` running at a time."""

    def __init__(
        self, registry: ToolRegistry, turn: Turn, claim: Callable[[str], str], cap: int
    ) -> None:
        self._registry = registry
        self._turn = turn
        self._claim = claim
        """Makes a model's call id unique within the session."""
        self._slots = asyncio.Semaphore(cap)
        self.calls: list[PlannedCall] = []
        """The calls started, in call order."""
        self._tasks: list[asyncio.Task[ToolExecutionResult]] = []
        self._drawn_last: asyncio.Future[None] | None = None
        """Done when the last started call's card is drawn (cards go out in call order)."""
        self._held: list[tuple[ToolCallRecord, ToolExecutionResult]] | None = []
        """Results waiting for the response's last call to be recorded (``None``: no more)."""

    def start(self, draft: CallDraft) -> None:
        """Start a complete call: its card now, its run when a slot frees."""
        call = PlannedCall.parse(self._claim(draft.call_id), draft.name, draft.arguments)
        self.calls.append(call)
        after, drawn = self._drawn_last, asyncio.get_running_loop().create_future()
        self._drawn_last = drawn
        self._tasks.append(asyncio.ensure_future(self._run(call, after, drawn)))

    async def results(self) -> list[ToolExecutionResult]:
        """Wait for every started call; their results in call order."""
        if self._drawn_last is not None:
            await asyncio.wait((self._drawn_last,))  # every call recorded: results may follow
        held, self._held = self._held or [], None
        for call, result in held:
            await self._record(call, result)
        return list(await asyncio.gather(*self._tasks))

    def abandon(self) -> None:
        """Stop the calls still running (when the turn itself is torn down)."""
        for task in self._tasks:
            task.cancel()

    async def _run(
        self, call: PlannedCall, after: asyncio.Future[None] | None, drawn: asyncio.Future[None]
    ) -> ToolExecutionResult:
        try:
            if after is not None:
                await asyncio.wait((after,))
            opened = await self._draw(call)
        finally:
            if not drawn.done():
                drawn.set_result(None)
        if call.error is not None:
            return await self._close(opened, error_result(call.call_id, call.error))
        if not await self._take_slot():
            reason = self._turn.signal.reason or "cancelled"
            error = ToolCancelledError(
                f"{call.name} was not run: the turn was cancelled ({reason})"
            )
            return await self._close(opened, error_result(call.call_id, error))
        try:
            executed = await execute_call(self._registry, self._turn.scope, opened, call.arguments)
            # The slot is held until the result is recorded and drawn, so the next call's
            # in_progress never overtakes this call's completed card.
            return await self._close(opened, executed.result, streamed=executed.streamed)
        finally:
            self._slots.release()

    async def _draw(self, call: PlannedCall) -> OpenCall:
        """Record the call and draw its pending card."""
        # A call whose arguments did not parse is recorded with none.
        record = call_record(call.call_id, call.name, None if call.error else call.arguments)
        return await open_call(self._registry.get, self._turn.scope, record, record=self._record)

    async def _close(
        self, opened: OpenCall, result: ToolExecutionResult, *, streamed: int = 0
    ) -> ToolExecutionResult:
        """Record the call's result (or hold it back) and draw its result card."""
        await self._hold(opened.call, result)
        await close_call(self._registry.get, self._turn.scope, opened, result, streamed=streamed)
        return result

    async def _take_slot(self) -> bool:
        """Wait for a free slot; ``False`` (holding none) if the turn is cancelled first."""
        signal = self._turn.signal
        acquiring = asyncio.ensure_future(self._slots.acquire())
        cancelled = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait((acquiring, cancelled), return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
            if not acquiring.done():
                acquiring.cancel()
                await asyncio.wait((acquiring,))
        held = not acquiring.cancelled()
        if held and signal.cancelled:
            self._slots.release()
            return False
        return held

    async def _hold(self, call: ToolCallRecord, result: ToolExecutionResult) -> None:
        """Record a result, or hold it while the response's calls are still being recorded."""
        if self._held is not None:
            self._held.append((call, result))
            return
        await self._record(call, result)

    async def _record(self, call: ToolCallRecord, result: ToolExecutionResult | None) -> None:
        if self._turn.record is not None:
            await self._turn.record(call, result)
