"""Folding a ``session/update`` stream into the blocks a transcript shows, as plain data.

Every view (terminal, HTML, Markdown) draws these, so they agree. Invariants: nothing fed
makes the fold raise; blocks come out in first-update order, each once it can no longer
change, so memory holds only the blocks since the oldest running card.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any, Literal, TypeAlias, assert_never

import attrs

from acp_sidecar.render.fold import CardState, apply_tool_update, as_mapping, as_str

logger = logging.getLogger(__name__)

Role: TypeAlias = Literal["user", "agent", "thought"]

_CHUNK_ROLES: dict[str, Role] = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}


# -- events the update stream does not carry -----------------------------------------------


@attrs.frozen
class ModeSwitched:
    """The session switched mode."""

    mode_id: str


@attrs.frozen
class OptionChanged:
    """The user changed a session config option (``model``, ``reasoning_effort``)."""

    config_id: str
    value: str


@attrs.frozen
class PermissionDecided:
    """How a tool call's permission was decided: ``answer`` is the option chosen
    (``allow_once``, ``allow_always``, ``reject_once``, ``reject_always``) or ``cancelled``;
    ``remembered`` when an earlier "always" answer decided it without asking; ``rule``: the
    permission rule that decided it (``rule_allow``, ``rule_ask``, ``rule_deny``) and where it
    came from."""

    call_id: str
    tool: str
    answer: str
    remembered: bool = False
    rule: str | None = None

    @property
    def allowed(self) -> bool:
        """Whether the call was allowed to run (as far as this decision goes)."""
        return self.answer.startswith("allow_") or self.answer == "rule_allow"


@attrs.frozen
class TurnEnded:
    """A prompt turn ended otherwise than ``end_turn`` (``cancelled``, ``refusal``, …)."""

    reason: str


Event: TypeAlias = ModeSwitched | OptionChanged | PermissionDecided | TurnEnded
"""The closed union of things a transcript shows that are not ``session/update``\\ s."""


# -- blocks ----------------------------------------------------------------------------------


@attrs.define
class MessageBlock:
    """Consecutive message chunks of one role (``blocks``: ACP content-block JSON)."""

    role: Role
    message_id: str | None
    blocks: list[Mapping[str, Any]] = attrs.Factory(list)
    at: datetime | None = None


@attrs.define
class CardBlock:
    """A tool-call card being folded."""

    card: CardState
    at: datetime | None = None


@attrs.define
class PlanBlock:
    """The agent's plan (consecutive updates of the same plan replace it): a checklist, or a
    Markdown plan when ``markdown`` is set (``""``: it was removed)."""

    entries: list[Mapping[str, Any]]
    at: datetime | None = None
    markdown: str | None = None
    path: str | None = None


@attrs.frozen
class ModeBlock:
    """A ``current_mode_update``."""

    mode_id: str
    at: datetime | None = None


@attrs.frozen
class CommandsBlock:
    """An ``available_commands_update``: the commands' names."""

    names: tuple[str, ...]
    at: datetime | None = None


@attrs.frozen
class EventBlock:
    """An :data:`Event`."""

    event: Event
    at: datetime | None = None


@attrs.frozen
class NoticeBlock:
    """A ``notice``: something told outside the conversation (``severity``: ``info``,
    ``warning``, ``error`` or another the client does not know)."""

    severity: str
    title: str
    description: str | None = None
    at: datetime | None = None

    @property
    def detail(self) -> str | None:
        """The description without a first line that only repeats the title."""
        if self.description is None:
            return None
        first, _, rest = self.description.strip().partition("\n")
        shown = rest.strip() if first.strip() == self.title.strip() else self.description.strip()
        return shown or None


@attrs.define
class CompactionBlock:
    """A context compaction, folded from its ``compaction_update``\\ s and
    ``compaction_summary_chunk``\\ s: the oldest turns summarised for the model."""

    compaction_id: str
    status: str = "in_progress"
    summary: list[Mapping[str, Any]] = attrs.Factory(list)
    """The summary's content blocks (ACP content-block JSON)."""
    error: str | None = None
    at: datetime | None = None

    @property
    def summary_text(self) -> str:
        """The summary's text blocks, joined."""
        return "".join(t for b in self.summary if (t := _text_of(b)) is not None)


Block: TypeAlias = (
    MessageBlock
    | CardBlock
    | PlanBlock
    | ModeBlock
    | CommandsBlock
    | EventBlock
    | NoticeBlock
    | CompactionBlock
)
"""The closed union of transcript blocks."""


def _text_of(block: Mapping[str, Any]) -> str | None:
    return as_str(block.get("text")) if block.get("type") == "text" else None


def update_of(params: object) -> Mapping[str, Any] | None:
    """The ``update`` object of ``session/update`` params, or a bare update; else ``None``."""
    mapping = as_mapping(params)
    if mapping is None:
        return None
    inner = as_mapping(mapping.get("update"))
    if inner is not None:
        return inner
    return mapping if "sessionUpdate" in mapping else None


class BlockFold:
    """Folds updates and events into blocks, releasing each once it is final (see the module
    invariants): every method returns the blocks that became ready, in order."""

    def __init__(self) -> None:
        self._queue: deque[Block] = deque()
        self._open_cards: dict[str, CardBlock] = {}
        self._released_cards: set[str] = set()
        self._open_compactions: dict[str, CompactionBlock] = {}
        self._released_compactions: set[str] = set()
        self._markdown_plans: set[str] = set()

    def feed(self, params: Mapping[str, Any], at: datetime | None = None) -> list[Block]:
        """Take one ``session/update`` notification's params (or a bare update)."""
        update = update_of(params)
        tag = None if update is None else as_str(update.get("sessionUpdate"))
        if update is None or tag is None:
            logger.debug("transcript: skipped a malformed update %r", params)
            return []
        if (role := _CHUNK_ROLES.get(tag)) is not None:
            content = as_mapping(update.get("content"))
            if content is not None:
                self._chunk(role, as_str(update.get("messageId")), content, at)
        elif tag in ("tool_call", "tool_call_update"):
            self._tool(tag, update, at)
        elif tag == "plan":
            self._plan(PlanBlock(_entries(update), at))
        elif tag == "plan_update":
            plan = as_mapping(update.get("plan")) or {}
            plan_id = as_str(plan.get("planId")) or ""
            if plan.get("type") == "markdown":
                self._markdown_plans.add(plan_id)
                document = as_str(plan.get("content")) or ""
                self._plan(PlanBlock([], at, markdown=document, path=as_str(plan.get("path"))))
            else:
                self._markdown_plans.discard(plan_id)
                self._plan(PlanBlock(_entries(plan), at))
        elif tag == "plan_removed":
            removed = as_str(update.get("planId")) or ""
            gone = "" if removed in self._markdown_plans else None
            self._plan(PlanBlock([], at, markdown=gone))
        elif tag == "available_commands_update":
            commands = update.get("availableCommands")
            listed = commands if isinstance(commands, list) else []
            names = tuple(
                name
                for c in listed
                if isinstance(c, Mapping) and (name := as_str(c.get("name"))) is not None
            )
            self._queue.append(CommandsBlock(names, at))
        elif tag == "current_mode_update":
            mode = as_str(update.get("currentModeId"))
            if mode is not None:
                self._queue.append(ModeBlock(mode, at))
        elif tag == "notice":
            title = as_str(update.get("title"))
            if title:
                severity = as_str(update.get("severity")) or "info"
                self._queue.append(
                    NoticeBlock(severity, title, as_str(update.get("description")), at)
                )
        elif tag in ("compaction_update", "compaction_summary_chunk"):
            self._compaction(tag, update, at)
        else:
            logger.debug("transcript: skipped an update it does not fold: %s", tag)
        return self._ready()

    def event(self, event: Event, at: datetime | None = None) -> list[Block]:
        """Take an :data:`Event` (something the stream itself does not carry)."""
        self._queue.append(EventBlock(event, at))
        return self._ready()

    def user_prompt(
        self, content: Iterable[Mapping[str, Any]], at: datetime | None = None
    ) -> list[Block]:
        """A prompt the client itself sent (live, the agent does not echo it)."""
        blocks = [b for b in content if isinstance(b, Mapping)]
        self._queue.append(MessageBlock("user", None, blocks, at))
        return self._ready()

    def stop(self, reason: str, at: datetime | None = None) -> list[Block]:
        """A turn ended with ``reason``: a :class:`TurnEnded` event unless it is ``end_turn``."""
        return [] if reason == "end_turn" else self.event(TurnEnded(reason), at)

    def finish(self) -> list[Block]:
        """Every block still held, unfinished cards as they stand."""
        out = list(self._queue)
        self._queue.clear()
        for block in out:
            self._release(block)
        return out

    # -- internals -----------------------------------------------------------------------

    def _chunk(
        self, role: Role, message_id: str | None, content: Mapping[str, Any], at: datetime | None
    ) -> None:
        tail = self._queue[-1] if self._queue else None
        if isinstance(tail, MessageBlock) and tail.role == role and tail.message_id == message_id:
            tail.blocks.append(content)
        else:
            self._queue.append(MessageBlock(role, message_id, [content], at))

    def _plan(self, block: PlanBlock) -> None:
        """A plan replaces the one right before it when both are checklists or both Markdown."""
        tail = self._queue[-1] if self._queue else None
        if isinstance(tail, PlanBlock) and (tail.markdown is None) == (block.markdown is None):
            tail.entries, tail.markdown, tail.path = block.entries, block.markdown, block.path
            return
        if isinstance(tail, CardBlock) and _waits_for_plan(tail):
            tail.card.shows_plan = True
        self._queue.append(block)

    def _tool(self, tag: str, update: Mapping[str, Any], at: datetime | None) -> None:
        call_id = as_str(update.get("toolCallId"))
        if call_id is None:
            logger.debug("transcript: skipped a %s without a toolCallId", tag)
            return
        block = self._open_cards.get(call_id)
        if block is None:
            if tag == "tool_call_update" and call_id in self._released_cards:
                logger.debug("transcript: card %s changed after it was released", call_id)
                return
            block = self._open_cards[call_id] = CardBlock(CardState(call_id), at)
            self._queue.append(block)
        apply_tool_update(block.card, update)

    def _compaction(self, tag: str, update: Mapping[str, Any], at: datetime | None) -> None:
        compaction_id = as_str(update.get("compactionId"))
        if compaction_id is None or compaction_id in self._released_compactions:
            logger.debug("transcript: skipped a %s of no open compaction", tag)
            return
        block = self._open_compactions.get(compaction_id)
        if block is None:
            block = self._open_compactions[compaction_id] = CompactionBlock(compaction_id, at=at)
            self._queue.append(block)
        if tag == "compaction_summary_chunk":
            if (content := as_mapping(update.get("content"))) is not None:
                block.summary.append(content)
            return
        if (status := as_str(update.get("status"))) is not None:
            block.status = status
        summary = update.get("summary", ...)
        if summary is None or isinstance(summary, list):  # present: it replaces (null clears)
            block.summary = [b for b in summary or () if isinstance(b, Mapping)]
        error = update.get("error", ...)
        if error is None or isinstance(error, str):
            block.error = error

    @staticmethod
    def _final(block: Block, is_tail: bool) -> bool:
        match block:
            case MessageBlock() | PlanBlock():
                return not is_tail
            case CardBlock():
                return block.card.finished and not (is_tail and _waits_for_plan(block))
            case CompactionBlock():
                return block.status != "in_progress"
            case ModeBlock() | CommandsBlock() | EventBlock() | NoticeBlock():
                return True
            case _:
                assert_never(block)

    def _release(self, block: Block) -> None:
        if isinstance(block, CardBlock):
            call_id = block.card.tool_call_id
            self._open_cards.pop(call_id, None)
            self._released_cards.add(call_id)
        elif isinstance(block, CompactionBlock):
            self._open_compactions.pop(block.compaction_id, None)
            self._released_compactions.add(block.compaction_id)

    def _ready(self) -> list[Block]:
        out: list[Block] = []
        queue = self._queue
        while queue and self._final(queue[0], len(queue) == 1):
            block = queue.popleft()
            self._release(block)
            out.append(block)
        return out


def _entries(update: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    entries = update.get("entries")
    return [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []


def _waits_for_plan(block: CardBlock) -> bool:
    """A card completed with no content, last in the stream: the plan its call set may be the
    next update (the bridge sends a plan call's card, then the plan)."""
    card = block.card
    return card.finished and card.emptied and not card.shows_plan


def fold_blocks(updates: Iterable[Mapping[str, Any]]) -> Iterator[Block]:
    """The blocks of a whole stream of ``session/update`` params, in order."""
    fold = BlockFold()
    for params in updates:
        yield from fold.feed(params)
    yield from fold.finish()
