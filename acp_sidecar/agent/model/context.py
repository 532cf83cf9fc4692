"""One turn's context: the messages it sends, kept inside the model's window, and what each used.

Invariants:
- Past turns are summarised (and the summary recorded) only when the request would not leave
  room for the response; failing that they are left out, the user told, nothing recorded.
- The client sees compaction only when it advertised ``session.compaction``.
- A request refused for its length is compacted to half its estimate and retried, once a turn.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

import attrs

from acp_sidecar.agent.driver import Turn, send_notice
from acp_sidecar.agent.model.budget import metered
from acp_sidecar.agent.model.compaction import (
    MIN_SUMMARY_TOKENS,
    Known,
    Past,
    answer_reserve,
    estimate_request,
    past_of,
    request_budget,
    summary_batches,
    summary_request,
    summary_tokens,
    turns_to_keep,
)
from acp_sidecar.agent.model.config import ModelConfig, ModelProfile
from acp_sidecar.agent.model.messages import Message, add_user_message
from acp_sidecar.agent.model.room import Room, Window, overfilled, room_of
from acp_sidecar.agent.model.stream import StreamAssembly
from acp_sidecar.agent.model.usage import Usage, price, tally_from, usage_record
from acp_sidecar.agent.model.waiting import Sleep, told_wait
from acp_sidecar.bridge.meter import usage_update
from acp_sidecar.protocol import TextContentBlock
from acp_sidecar.protocol.updates import CompactionSummaryChunk, CompactionUpdate, UsageUpdate
from acp_sidecar.store.records import CompactionRecord, UsageRecord

if TYPE_CHECKING:
    from acp_sidecar.agent.model.endpoint import Endpoint

logger = logging.getLogger(__name__)

CLOSE_GRACE_S: Final = 2.0
"""How long closing an abandoned summary response may take before the turn stops waiting."""

Cancelled = Literal["cancelled"]

UNANSWERABLE: Final = frozenset({"config", "unreachable", "key", "forbidden", "not found"})
"""Failures of a summary request that the turn's own request would meet too (see
:data:`~acp_sidecar.agent.model.endpoint.FailureKind`): the turn ends with them."""


@attrs.frozen
class Unanswered:
    """The endpoint cannot answer this turn at all (it is down, refuses the key, does not know
    the model): the turn ends, and the user is told this, once."""

    explained: str


Stopped = Cancelled | Unanswered
"""Why fitting a request ended the turn instead."""


class SummaryFailed(Exception):
    """A summary request ended without a usable summary (the message says why)."""

    def __init__(self, message: str, *, unanswerable: bool = False) -> None:
        super().__init__(message)
        self.unanswerable = unanswerable
        """The endpoint failed in a way every request of the turn would."""


class TurnContext:
    """The messages of one turn's requests, and the session's usage as the turn goes."""

    def __init__(
        self,
        turn: Turn,
        config: ModelConfig,
        profile: ModelProfile,
        head: Message,
        prompt: Message,
        reasoning_field: str | None,
        on_retry: Callable[[int, str], None] | None = None,
        wait_sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.turn = turn
        self.config = config
        self.profile = profile
        self.head = head
        """The system message."""
        self.prompt = prompt
        self.reasoning_field = reasoning_field
        self.steps: list[Message] = []
        """What this turn added after its prompt (responses and results)."""
        self.past = past_of(turn.history)
        self._history = self.past.messages(reasoning_field, profile.images)
        self.tally = tally_from(turn.history)
        self.known: Known | None = None
        """The last request whose tokens the endpoint reported (``None`` after a compaction)."""
        self.retried = False
        self.on_retry = on_retry
        """Tells the user a summary request is being retried, as the turn's own are."""
        self.wait_sleep = wait_sleep
        """The clock a summary request's wait is told on (the turn's requests' clock)."""
        self._told_overfilled = False
        self._dropped = False
        """Turns were left out (not summarised) in this turn: a later summary does not cover
        them, so it is not recorded as covering everything before it."""

    def messages(self) -> list[Message]:
        """The next request's messages."""
        messages = [self.head, *self._history]
        add_user_message(messages, self.prompt)
        messages.extend(self.steps)
        return messages

    def _set_past(self, past: Past) -> None:
        self.past = past
        self._history = past.messages(self.reasoning_field, self.profile.images)
        self.known = None

    # -- usage ----------------------------------------------------------------------------

    async def account(self, usage: Usage | None, sent: int, seconds: float | None = None) -> None:
        """Take a response's usage (``sent``: how many messages its request had; ``seconds``:
        how long it took, when the budget measured it), charged to the budget and logged (a
        response without usage still logs its time, outside the meter)."""
        self._charge(usage, seconds)
        if usage is None:
            if seconds and self.turn.keep is not None:
                timed = usage_record(self.profile, Usage(0, 0), self.tally, window=False)
                self.turn.keep(attrs.evolve(timed, seconds=seconds))
            return
        self.known = Known(sent, usage.used)
        self.tally = self.tally.add(usage, self.profile.prices)
        record = attrs.evolve(usage_record(self.profile, usage, self.tally), seconds=seconds)
        if self.turn.keep is not None:
            self.turn.keep(record)
        window = self.profile.context_window
        if window is not None:
            await self.turn.send(metered(usage_update(record, window), self.turn.budget))

    def _charge(self, usage: Usage | None, seconds: float | None) -> None:
        """Count one request's work against the session's budget (its time even without
        usage)."""
        if self.turn.budget is None:
            return
        prices = self.profile.prices
        self.turn.budget.charge(
            tokens=0 if usage is None else usage.used,
            cost=0.0 if usage is None or prices is None else price(usage, prices),
            seconds=seconds or 0.0,
            currency=None if prices is None else prices.currency,
        )

    async def account_child(self, usage: Sequence[UsageRecord]) -> None:
        """Take what a child conversation of this turn spent (its usage records, the last
        with its total cost): counted toward the session's cost, logged as a request outside
        the conversation, and the meter told the new cost."""
        if not usage:
            return
        last = usage[-1]
        self.tally = self.tally.spent(last.cost, last.currency)
        cost = self.tally.cost
        record = UsageRecord(
            model=last.model,
            prompt_tokens=sum(r.prompt_tokens for r in usage),
            completion_tokens=sum(r.completion_tokens for r in usage),
            cost=None if cost is None else cost.amount,
            currency=None if cost is None else cost.currency,
            seconds=sum(r.seconds or 0.0 for r in usage) or None,  # charged as the child went
        )
        if self.turn.keep is not None:
            self.turn.keep(record)
        window = self.profile.context_window
        if window is not None and self.known is not None:
            update = UsageUpdate(used=self.known.tokens, size=window, cost=cost)
            await self.turn.send(metered(update, self.turn.budget))

    # -- fitting --------------------------------------------------------------------------

    async def fit(self, endpoint: Endpoint, tools: Sequence[Mapping[str, Any]]) -> Stopped | None:
        """Compact when the next request would not leave room for its response."""
        window = self.profile.context_window
        if window is None:
            return None
        budget = request_budget(window, self.config.max_tokens)
        if estimate_request(self.messages(), tools, self.known) <= budget:
            return None
        room = self._room(tools)
        if room.fixed > budget:
            # No summary makes room for what every request carries: leave the past out and
            # send the request anyway (the estimate errs high; the endpoint may take it).
            summary = self.past.summary is not None
            left_out = self._leave_out_past()
            if left_out or summary:
                await self._tell_overfilled(room, left_out, summary)
            return None
        return await self._compact(endpoint, tools, budget, room)

    async def overflowed(
        self, endpoint: Endpoint, tools: Sequence[Mapping[str, Any]], *, cap: bool = False
    ) -> Stopped | bool:
        """The endpoint refused the request for its length (``cap``: it named the cap on the
        response): compact it to half and say whether to retry (once per turn). Refused for
        the prompt with nothing left to cut, the user is told what every request carries."""
        room = self._room(tools)
        empty = not self.past.turns and self.past.summary is None
        if self.retried or empty:
            if empty and not cap:
                await self._tell_overfilled(room, 0, False, refused=True)
            return False
        self.retried = True
        estimate = estimate_request(self.messages(), tools, self.known)
        budget = estimate // 2
        window = self.profile.context_window
        if window is not None:
            budget = min(budget, request_budget(window, self.config.max_tokens))
        before = (self.past.covered, self.past.summary)
        if room.fixed > budget:
            self._leave_out_past()  # no summary fits beside what every request carries
            await self._tell_dropped(self.past.covered - before[0], None)
        else:
            stopped = await self._compact(endpoint, tools, budget, room)
            if stopped is not None:
                return stopped
        return (self.past.covered, self.past.summary) != before

    def _room(self, tools: Sequence[Mapping[str, Any]]) -> Room:
        return room_of(self.head, tools, self.prompt, self.steps)

    def _leave_out_past(self) -> int:
        """Leave the whole past (and its summary) out of the requests; how many turns went."""
        count = len(self.past.turns)
        if count or self.past.summary is not None:
            self._dropped = self._dropped or bool(count)
            self._set_past(Past(None, self.past.covered + count, ()))
        return count

    async def _tell_overfilled(
        self, room: Room, left_out: int, summary: bool, *, refused: bool = False
    ) -> None:
        """Say what every request carries and what to change (once per turn)."""
        if self._told_overfilled:
            return
        self._told_overfilled = True
        window = self.profile.context_window
        known = None
        if window is not None:
            budget = request_budget(window, self.config.max_tokens)
            if room.fixed > budget or not refused:
                reserve = answer_reserve(window, self.config.max_tokens)
                known = Window(window, budget, reserve)
        logger.warning(
            "what every request carries (about %d tokens) overfills the context window (%s)",
            room.fixed,
            "unknown" if window is None else f"{window} tokens",
        )
        await send_notice(self.turn, overfilled(room, known, left_out=left_out, summary=summary))

    async def _tell_dropped(self, dropped: int, failure: str | None) -> None:
        if not dropped:
            return
        turns = "turn was" if dropped == 1 else f"{dropped} turns were"
        why = f"Summarising it failed ({failure}). " if failure is not None else ""
        await send_notice(
            self.turn,
            f"The conversation is too long for the model's context window. {why}The "
            f"oldest {turns} left out of what the model is sent (the session keeps them).",
        )

    async def _compact(
        self,
        endpoint: Endpoint,
        tools: Sequence[Mapping[str, Any]],
        budget: int,
        room: Room,
    ) -> Stopped | None:
        fixed = room.fixed
        space = budget - fixed
        count = len(self.past.turns) - turns_to_keep(self.past, space, self.reasoning_field)
        if space < MIN_SUMMARY_TOKENS:
            count = 0  # not even the shortest summary would fit: turns are only left out
        failure: str | None = None
        if count > 0:
            cap = summary_tokens(space)
            try:
                summary = await self._summarise(endpoint, count, cap, budget)
            except SummaryFailed as error:
                if error.unanswerable:
                    return Unanswered(str(error))
                failure = str(error)
                self._dropped = True
                self._set_past(
                    Past(self.past.summary, self.past.covered + count, self.past.turns[count:])
                )
            else:
                if summary is None:
                    return "cancelled"
                self._set_past(self.past.after(count, summary))
                if self.turn.keep is not None and not self._dropped:
                    self.turn.keep(CompactionRecord(summary=summary, turns=self.past.covered))
        dropped = (count if failure is not None else 0) + self._drop(tools, budget)
        await self._tell_dropped(dropped, failure)
        return None

    def _drop(self, tools: Sequence[Mapping[str, Any]], budget: int) -> int:
        """Leave out the oldest turns (then the summary) until the request fits; how many
        turns went."""
        dropped = 0
        while estimate_request(self.messages(), tools, None) > budget:
            past = self.past
            if past.turns:
                self._set_past(Past(past.summary, past.covered + 1, past.turns[1:]))
                self._dropped = True
                dropped += 1
            elif past.summary is not None:
                self._set_past(Past(None, past.covered, ()))
            else:
                logger.warning("the current turn alone is longer than the context window")
                break
        return dropped

    # -- summarising ----------------------------------------------------------------------

    async def _summarise(self, endpoint: Endpoint, count: int, cap: int, budget: int) -> str | None:
        """A summary of the past's first ``count`` turns (and its summary); ``None`` when
        the turn was cancelled.

        Raises:
            SummaryFailed: no summary came (the reason is for the user).
        """
        shown = self.turn.client.capabilities.shows_compaction
        compaction_id = f"compaction_{uuid.uuid4().hex[:16]}"
        if shown:
            await self.turn.send(
                CompactionUpdate(compaction_id=compaction_id, status="in_progress")
            )
        summary = self.past.summary
        turns = self.past.turns[:count]
        at = 0
        try:
            for size in summary_batches(summary, turns, budget - cap):
                request = summary_request(summary, turns[at : at + size])
                summary = await self._request(
                    endpoint, request, cap, compaction_id if shown else None
                )
                if summary is None:
                    if shown:
                        await self.turn.send(
                            CompactionUpdate(compaction_id=compaction_id, status="cancelled")
                        )
                    return None
                at += size
        except SummaryFailed as error:
            if shown:
                await self.turn.send(
                    CompactionUpdate(compaction_id=compaction_id, status="failed", error=str(error))
                )
            raise
        assert summary is not None
        if shown:
            await self.turn.send(
                CompactionUpdate(
                    compaction_id=compaction_id,
                    status="completed",
                    summary=[TextContentBlock(text=summary)],
                )
            )
        return summary

    async def _request(
        self, endpoint: Endpoint, messages: list[Message], cap: int, shown: str | None
    ) -> str | None:
        """One summary request, raced against the turn's signal (``None``: cancelled)."""
        assembly = StreamAssembly()
        budget = self.turn.budget
        started = None if budget is None else budget.clock()
        streaming = asyncio.ensure_future(self._stream(endpoint, messages, cap, assembly, shown))
        cancelled = asyncio.ensure_future(self.turn.signal.wait())
        try:
            await asyncio.wait((streaming, cancelled), return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancelled.cancel()
            if not streaming.done():
                streaming.cancel()  # closes the response
                await asyncio.wait((streaming,), timeout=CLOSE_GRACE_S)
        if self.turn.signal.cancelled:
            return None
        error = streaming.exception()
        if error is not None:
            unanswerable = endpoint.failure_kind(error) in UNANSWERABLE
            raise SummaryFailed(endpoint.explain(error, self.turn.model), unanswerable=unanswerable)
        seconds = None if budget is None or started is None else budget.clock() - started
        self._charge(assembly.usage, seconds)  # a summary is model work too
        if assembly.usage is not None:
            self.tally = self.tally.add(assembly.usage, self.profile.prices)
            if self.turn.keep is not None:  # its cost counts; its size is no meter reading
                summarised = usage_record(self.profile, assembly.usage, self.tally, window=False)
                self.turn.keep(attrs.evolve(summarised, seconds=seconds))
        text = assembly.text.strip()
        if assembly.finish_reason is None or not text or assembly.refused:
            raise SummaryFailed("the model sent no summary")
        return text

    async def _stream(
        self,
        endpoint: Endpoint,
        messages: list[Message],
        cap: int,
        assembly: StreamAssembly,
        shown: str | None,
    ) -> None:
        async with (
            told_wait(self.turn.waiting, self.wait_sleep) as wait,
            endpoint.stream(
                messages, (), model=self.turn.model, max_tokens=cap, on_retry=self.on_retry
            ) as chunks,
        ):
            async for chunk in chunks:
                if wait.waiting:
                    wait.stop()
                _thought, text = assembly.feed(chunk)
                if text and shown is not None:
                    await self.turn.send(
                        CompactionSummaryChunk(
                            compaction_id=shown, content=TextContentBlock(text=text)
                        )
                    )
