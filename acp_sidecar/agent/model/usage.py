"""What a model response used and what the session has cost (the ``usage_update`` for both:
:mod:`acp_sidecar.bridge.meter`).

Usage is only what the endpoint reported. The cost is unknown from the first response that
could not be priced: a total that leaves charges out is never reported.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

import attrs

from acp_sidecar.agent.model.config import ModelProfile, Prices
from acp_sidecar.protocol.updates import Cost
from acp_sidecar.store.records import Record, UsageRecord

PER_MILLION: Final = 1_000_000


@attrs.frozen
class Usage:
    """One response's token counts, as the endpoint reported them."""

    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int | None = None

    @property
    def used(self) -> int:
        """The tokens in the context after the response: its prompt and its completion."""
        return self.prompt_tokens + self.completion_tokens


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def usage_of(raw: Any) -> Usage | None:
    """The usage a chunk's ``usage`` object carries (``None`` when it is missing or
    malformed: a server that sends nonsense reports nothing)."""
    if raw is None:
        return None
    prompt = _count(getattr(raw, "prompt_tokens", None))
    completion = _count(getattr(raw, "completion_tokens", None))
    if prompt is None or completion is None:
        return None
    details = getattr(raw, "prompt_tokens_details", None)
    cached = None if details is None else _count(getattr(details, "cached_tokens", None))
    return Usage(prompt, completion, cached)


def price(usage: Usage, prices: Prices) -> float:
    """What one response cost at ``prices``."""
    return (
        usage.prompt_tokens * prices.input_per_mtok
        + usage.completion_tokens * prices.output_per_mtok
    ) / PER_MILLION


@attrs.frozen
class CostTally:
    """The session's cumulative cost: ``amount`` in ``currency`` while ``known``."""

    amount: float = 0.0
    currency: str | None = None
    """``None`` until the first priced response."""
    known: bool = True

    def add(self, usage: Usage, prices: Prices | None) -> CostTally:
        """The tally after one more response (unknown from the first unpriced one on)."""
        if not self.known:
            return self
        if prices is None or (self.currency is not None and prices.currency != self.currency):
            return CostTally(known=False)
        return CostTally(self.amount + price(usage, prices), prices.currency)

    def spent(self, amount: float | None, currency: str | None) -> CostTally:
        """The tally after ``amount`` spent elsewhere (a child's conversation); unknown when
        that amount is, or is in another currency."""
        if not self.known:
            return self
        if amount is None or currency is None:
            return CostTally(known=False)
        if self.currency is not None and currency != self.currency:
            return CostTally(known=False)
        return CostTally(self.amount + amount, currency)

    @property
    def cost(self) -> Cost | None:
        """The cost to report, if it is known and something was priced."""
        if not self.known or self.currency is None:
            return None
        return Cost(amount=self.amount, currency=self.currency)


def tally_from(records: Iterable[Record | Any]) -> CostTally:
    """The tally a session's history ends with (its last usage record's total)."""
    last: UsageRecord | None = None
    for record in records:
        if isinstance(record, UsageRecord):
            last = record
    if last is None:
        return CostTally()
    if last.cost is None or last.currency is None:
        return CostTally(known=False)
    return CostTally(last.cost, last.currency)


def usage_record(
    profile: ModelProfile, usage: Usage, tally: CostTally, *, window: bool = True
) -> UsageRecord:
    """The log's record of one response (``window=False``: a request outside the
    conversation, e.g. a summary's, whose size is no reading of the context meter)."""
    cost = tally.cost
    return UsageRecord(
        model=profile.name,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cached_tokens=usage.cached_tokens,
        context_window=profile.context_window if window else None,
        cost=None if cost is None else cost.amount,
        currency=None if cost is None else cost.currency,
    )
