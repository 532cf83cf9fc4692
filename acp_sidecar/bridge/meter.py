"""The context meter: a usage record → its ``usage_update``, live and on replay alike (one
mapping, so a loaded session's meter reads as it did live)."""

from __future__ import annotations

from acp_sidecar.protocol.updates import Cost, UsageUpdate
from acp_sidecar.store.records import UsageRecord


def usage_update(record: UsageRecord, size: int) -> UsageUpdate:
    """The ``usage_update`` a usage record stands for, in a window of ``size`` tokens."""
    cost = None
    if record.cost is not None and record.currency is not None:
        cost = Cost(amount=record.cost, currency=record.currency)
    return UsageUpdate(used=record.prompt_tokens + record.completion_tokens, size=size, cost=cost)
