"""What both export formats share: the walk from entries to final blocks, times, the tally.
Each block once, in order, as soon as final: the log is never held whole.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Final

import attrs

from acp_sidecar.export.source import StoredSession, Timed
from acp_sidecar.render.blocks import Block, BlockFold, CardBlock, MessageBlock
from acp_sidecar.store import UsageRecord

ANSWERS: Final[Mapping[str, str]] = {
    "allow_once": "allowed once",
    "allow_always": "allowed always",
    "allow_always_project": "allowed always in this project",
    "allow_always_user": "allowed always everywhere",
    "reject_once": "rejected once",
    "reject_always": "rejected always",
    "reject_always_project": "rejected always in this project",
    "reject_always_user": "rejected always everywhere",
    "rule_allow": "allowed by the rule",
    "rule_ask": "asked about by the rule",
    "rule_deny": "refused by the rule",
    "cancelled": "cancelled",
}
"""How a permission answer reads in a transcript."""


@attrs.define
class Tally:
    """Counts over the blocks walked (for the heading)."""

    prompts: int = 0
    calls: int = 0
    failed: int = 0

    def count(self, block: Block) -> None:
        """Count ``block``."""
        if isinstance(block, CardBlock):
            self.calls += 1
            self.failed += block.card.status == "failed"
        elif isinstance(block, MessageBlock) and block.role == "user":
            self.prompts += 1


@attrs.frozen
class Fact:
    """One row of a transcript's heading: a label and its values, shown as code when they are
    identifiers or paths (``code``)."""

    label: str
    values: tuple[str, ...]
    code: bool = False


def heading_facts(session: StoredSession, tally: Tally) -> list[Fact]:
    """The rows of a transcript's heading, once the walk has ended (both formats show these)."""
    heading, facts = session.heading, session.facts
    rows = [Fact("Session", (heading.session_id,), code=True)]
    rows.append(Fact("Working directory", (heading.cwd,), code=True))
    if heading.additional_directories:
        rows.append(Fact("Also in", heading.additional_directories, code=True))
    if facts.models:
        rows.append(Fact("Model", tuple(facts.models), code=True))
    rows.append(Fact("Mode", (facts.mode,), code=True))
    rows.append(Fact("Started", (full_time(heading.created_at),)))
    rows.append(Fact("Last activity", (full_time(facts.last_at or heading.updated_at),)))
    calls = f"{tally.prompts} prompts · {tally.calls} tool calls"
    if tally.failed:
        calls += f" ({tally.failed} failed)"
    rows.append(Fact("Activity", (calls,)))
    if (usage := facts.usage) is not None:
        rows.append(Fact("Usage", (usage_text(usage),)))
    return rows


def walk(entries: Iterable[Timed], tally: Tally) -> Iterator[Block]:
    """The final blocks of ``entries`` in order, counted into ``tally``."""
    fold = BlockFold()
    for entry in entries:
        item = entry.item
        ready = (
            fold.feed(item, entry.at) if isinstance(item, Mapping) else fold.event(item, entry.at)
        )
        for block in ready:
            tally.count(block)
            yield block
    for block in fold.finish():
        tally.count(block)
        yield block


def utc(moment: datetime) -> datetime:
    """``moment`` in UTC (a naive time is taken as UTC)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def full_time(moment: datetime) -> str:
    """``2026-12-01 13:09:35 UTC``."""
    return utc(moment).strftime("%Y-%m-%d %H:%M:%S UTC")


class Clock:
    """Short entry times: ``13:09:35``, with the date whenever the day changes."""

    def __init__(self) -> None:
        self._day: str | None = None

    def label(self, moment: datetime) -> str:
        """The label for an entry at ``moment``."""
        at = utc(moment)
        day = at.strftime("%Y-%m-%d")
        clock = at.strftime("%H:%M:%S")
        if day == self._day:
            return clock
        self._day = day
        return f"{day} {clock}"


def display_title(title: str | None) -> str:
    """A session's title for a heading: its first prompt's text (as listings shorten it)
    without a leading Markdown heading marker; ``Untitled session`` when it has none."""
    shown = (title or "").strip().lstrip("#").strip()
    return shown or "Untitled session"


def answer_text(answer: str, remembered: bool, rule: str | None = None) -> str:
    """``allowed once``, ``rejected always (remembered)``, ``refused by the rule deny bash
    rm * (user (/home/me/.config/acp-sidecar/config.toml:3))``, …"""
    text = ANSWERS.get(answer, answer)
    if rule is not None:
        return f"{text} {rule}"
    return f"{text} (remembered)" if remembered else text


def usage_text(usage: UsageRecord) -> str:
    """``12,345 of 128,000 tokens in context · 0.0312 USD so far``: the context meter as the
    editor drew it from the same record (prompt and completion, as ``usage_update`` counts them)."""
    used = usage.prompt_tokens + usage.completion_tokens
    context = f"{used:,} tokens in context"
    if usage.context_window:
        context = f"{used:,} of {usage.context_window:,} tokens in context"
    if usage.cost is None:
        return context
    return f"{context} · {usage.cost:.4g} {usage.currency or ''} so far".replace("  ", " ").strip()
