"""The v2 → view normaliser: a v2 ``session/update`` stream folded into the blocks
``render.blocks`` folds a v1 stream into (messages, cards as ``render.fold.CardState`` with
their ``TerminalState``, plans), so both versions are judged by one state type.

It applies v2's upsert rules as an editor does: one ``tool_call_update`` creates a card and
later ones patch it (omitted: unchanged, ``null``: cleared, a value: replaced), terminals are
announced by ``terminal_update`` and fed by base64 ``terminal_output_chunk``s, message chunks
append. :func:`assert_same_view` then compares a v1 fold with a v2 one: fields equal, diffs by
meaning (the v2 patch applied to the v1 card's old text gives its new text).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from acp_sidecar.render.blocks import (
    Block,
    CardBlock,
    MessageBlock,
    PlanBlock,
    Role,
    fold_blocks,
    update_of,
)
from acp_sidecar.render.fold import CardState, TerminalState
from tests.conformance.v2.patches import apply_patch

Viewed: TypeAlias = MessageBlock | CardBlock | PlanBlock
"""What both versions must agree on; commands, modes, notices and states are not compared."""

ROLES: dict[str, Role] = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}
CLEARED: dict[str, Any] = {
    "title": "",
    "kind": None,
    "status": "pending",
    "content": [],
    "locations": [],
    "rawInput": None,
    "rawOutput": None,
}
"""Each card field a v2 patch may set, with what ``null`` leaves in it."""
FIELDS = {"rawInput": "raw_input", "rawOutput": "raw_output"}


class V2Fold:
    """Folds a v2 stream, every block kept (a comparison wants them all)."""

    def __init__(self) -> None:
        self.blocks: list[Viewed] = []
        self.cards: dict[str, CardState] = {}
        self.terminals: dict[str, TerminalState] = {}

    def feed(self, params: Mapping[str, Any]) -> None:
        update = update_of(params)
        assert update is not None, params
        kind = update["sessionUpdate"]
        if (role := ROLES.get(kind)) is not None:
            self._chunk(role, update["messageId"], update["content"])
        elif kind == "tool_call_update":
            self._card(update)
        elif kind == "terminal_update":
            terminal = self.terminal(update["terminalId"])
            if update.get("cwd") is not None:
                terminal.cwd = update["cwd"]
            if (status := update.get("exitStatus")) is not None:
                terminal.exit_code, terminal.signal = status.get("exitCode"), status.get("signal")
        elif kind == "terminal_output_chunk":
            data = base64.b64decode(update["data"], validate=True).decode("utf-8")
            self.terminal(update["terminalId"]).chunks.append(data)
        elif kind == "plan_update":
            plan = update["plan"]
            assert plan["type"] == "items", plan  # the stable surface has no other
            self._plan(PlanBlock(list(plan["entries"])))
        elif kind == "tool_call_content_chunk":
            self.cards[update["toolCallId"]].content.append(update["content"])

    def terminal(self, terminal_id: str) -> TerminalState:
        state = self.terminals.get(terminal_id)
        if state is None:
            state = self.terminals[terminal_id] = TerminalState(terminal_id)
        return state

    def _chunk(self, role: Role, message_id: str, content: Mapping[str, Any]) -> None:
        tail = self.blocks[-1] if self.blocks else None
        if isinstance(tail, MessageBlock) and (tail.role, tail.message_id) == (role, message_id):
            tail.blocks.append(content)
        else:
            self.blocks.append(MessageBlock(role, message_id, [content]))

    def _card(self, update: Mapping[str, Any]) -> None:
        call_id = update["toolCallId"]
        card = self.cards.get(call_id)
        if card is None:
            card = self.cards[call_id] = CardState(call_id)
            self.blocks.append(CardBlock(card))
        for key, cleared in CLEARED.items():
            if key in update:
                value = cleared if update[key] is None else update[key]
                setattr(card, FIELDS.get(key, key), value)
        if "content" in update:
            card.emptied = not card.content
            for item in card.content:
                if item.get("type") == "terminal":
                    card.terminals[item["terminalId"]] = self.terminal(item["terminalId"])

    def _plan(self, block: PlanBlock) -> None:
        """As ``render.blocks``: a checklist replaces the one right before it."""
        tail = self.blocks[-1] if self.blocks else None
        if isinstance(tail, PlanBlock):
            tail.entries = block.entries
        else:
            self.blocks.append(block)


def fold_v2(updates: Iterable[Mapping[str, Any]]) -> list[Viewed]:
    """The messages, cards and plans of a v2 stream, in first-update order."""
    fold = V2Fold()
    for params in updates:
        fold.feed(params)
    return fold.blocks


def fold_v1(updates: Iterable[Mapping[str, Any]]) -> list[Viewed]:
    """The messages, cards and plans ``render.blocks`` folds a v1 stream into."""
    return [block for block in fold_blocks(updates) if is_viewed(block)]


def is_viewed(block: Block) -> bool:
    return isinstance(block, MessageBlock | CardBlock | PlanBlock)


def assert_same_view(v1: list[Viewed], v2: list[Viewed]) -> None:
    """The two folds show the same: the same blocks in order, each equal (see the module)."""
    assert [type(b).__name__ for b in v1] == [type(b).__name__ for b in v2]
    for old, new in zip(v1, v2, strict=True):
        match old, new:
            case MessageBlock(), MessageBlock():
                assert (old.role, old.message_id, old.blocks) == (
                    new.role,
                    new.message_id,
                    new.blocks,
                )
            case PlanBlock(), PlanBlock():
                assert old.entries == new.entries and old.markdown is None
            case CardBlock(), CardBlock():
                assert_same_card(old.card, new.card)
            case _:
                raise AssertionError(f"{old!r} is drawn over v1, {new!r} over v2")


def assert_same_card(v1: CardState, v2: CardState) -> None:
    for field in ("tool_call_id", "title", "kind", "status", "locations", "raw_input"):
        assert getattr(v1, field) == getattr(v2, field), (field, v1, v2)
    assert v1.raw_output == v2.raw_output, (v1.raw_output, v2.raw_output)
    assert len(v1.content) == len(v2.content), (v1.content, v2.content)
    for old, new in zip(v1.content, v2.content, strict=True):
        if old.get("type") == "diff":
            assert_same_diff(old, new)
        else:
            assert old == new, (old, new)
    assert terminals_of(v1) == terminals_of(v2)


def assert_same_diff(v1: Mapping[str, Any], v2: Mapping[str, Any]) -> None:
    """A v1 diff (old and new text) and a v2 one (its change and ``git_patch``) say one thing."""
    old_text = v1.get("oldText")
    [change] = v2["changes"]
    assert change == {
        "operation": "add" if old_text is None else "modify",
        "path": v1["path"],
        "fileType": "text",
    }
    assert v2["patch"]["format"] == "git_patch"
    assert apply_patch(old_text, v2["patch"]["text"]) == v1["newText"]


def terminals_of(card: CardState) -> dict[str, tuple[str | None, str, int | None, str | None]]:
    return {
        terminal_id: (t.cwd, t.output, t.exit_code, t.signal)
        for terminal_id, t in card.terminals.items()
    }
