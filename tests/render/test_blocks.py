"""The fold of an update stream into blocks: order, coalescing, times, events, odd input."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from acp_sidecar.render.blocks import (
    BlockFold,
    CardBlock,
    CommandsBlock,
    EventBlock,
    MessageBlock,
    ModeBlock,
    ModeSwitched,
    PermissionDecided,
    PlanBlock,
    TurnEnded,
    fold_blocks,
)

T0 = datetime(2026, 12, 1, 9, 0, 0, tzinfo=UTC)
T1 = datetime(2026, 12, 1, 9, 0, 5, tzinfo=UTC)


def _chunk(kind: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}, **extra}


def _call(call_id: str, status: str = "pending", **extra: Any) -> dict[str, Any]:
    return {
        "sessionUpdate": "tool_call",
        "toolCallId": call_id,
        "title": call_id,
        "status": status,
        **extra,
    }


def _done(call_id: str, status: str = "completed") -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": status}


def test_a_message_is_released_when_another_block_follows_and_keeps_its_first_time() -> None:
    fold = BlockFold()
    assert fold.feed(_chunk("agent_message_chunk", "Hel"), T0) == []
    assert fold.feed(_chunk("agent_message_chunk", "lo"), T1) == []
    (message,) = fold.feed(_call("c1"), T1)
    assert isinstance(message, MessageBlock)
    assert message.role == "agent" and message.at == T0
    assert [b["text"] for b in message.blocks] == ["Hel", "lo"]


def test_blocks_after_a_running_card_wait_for_it_and_keep_their_order() -> None:
    fold = BlockFold()
    fold.feed(_call("c1"), T0)
    fold.feed(_call("c2"), T0)
    assert fold.feed(_done("c2"), T1) == []  # c1 still runs: nothing may overtake it
    released = fold.feed(_done("c1", "failed"), T1)
    assert [b.card.tool_call_id for b in released if isinstance(b, CardBlock)] == ["c1", "c2"]
    assert [b.card.status for b in released if isinstance(b, CardBlock)] == ["failed", "completed"]
    assert all(b.at == T0 for b in released)


def test_events_take_their_place_in_the_stream() -> None:
    fold = BlockFold()
    fold.feed(_call("c1"), T0)
    assert fold.event(PermissionDecided("c1", "write", "allow_once"), T0) == []
    released = fold.feed(_done("c1"), T1) + fold.event(ModeSwitched("code"), T1)
    assert [type(b) for b in released] == [CardBlock, EventBlock, EventBlock]
    decided = released[1]
    assert isinstance(decided, EventBlock) and isinstance(decided.event, PermissionDecided)
    assert decided.event.allowed and not PermissionDecided("c", "t", "reject_once").allowed


def test_a_turn_that_ended_normally_adds_nothing_and_others_say_why() -> None:
    fold = BlockFold()
    assert fold.stop("end_turn") == []
    (stopped,) = fold.stop("cancelled", T0)
    assert stopped == EventBlock(TurnEnded("cancelled"), T0)


def test_plans_replace_each_other_and_other_updates_become_blocks() -> None:
    entries = [{"content": "a", "status": "pending"}]
    blocks = list(
        fold_blocks(
            [
                {"sessionUpdate": "plan", "entries": [{"content": "old"}]},
                {"sessionUpdate": "plan", "entries": entries},
                {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
                {
                    "sessionUpdate": "available_commands_update",
                    "availableCommands": [{"name": "run"}, {"nope": 1}, "x"],
                },
            ]
        )
    )
    assert blocks == [PlanBlock(entries), ModeBlock("code"), CommandsBlock(("run",))]


def test_odd_input_is_skipped_and_finish_releases_unfinished_cards() -> None:
    fold = BlockFold()
    for odd in (
        {},
        {"update": 3},
        {"sessionUpdate": 7},
        {"sessionUpdate": "tool_call"},
        {"sessionUpdate": "usage_update", "used": 1},
        _chunk("user_message_chunk", "x") | {"content": "not an object"},
    ):
        assert fold.feed(odd) == []
    fold.feed({"sessionId": "s", "update": _call("c9", "in_progress")})
    (card,) = fold.finish()
    assert isinstance(card, CardBlock) and card.card.status == "in_progress"
    # A card already released is not reopened by a late update.
    assert fold.feed(_done("c9")) == [] and fold.finish() == []


def test_a_notice_is_a_block_of_its_own() -> None:
    from acp_sidecar.render.blocks import NoticeBlock

    fold = BlockFold()
    fold.feed(_chunk("agent_message_chunk", "hi"), T0)
    notice = {"sessionUpdate": "notice", "severity": "warning", "title": "MCP server x failed"}
    message, block = fold.feed(notice | {"description": "MCP server x failed\nno such file"}, T1)
    assert isinstance(message, MessageBlock)
    assert block == NoticeBlock(
        "warning", "MCP server x failed", "MCP server x failed\nno such file", T1
    )
    assert isinstance(block, NoticeBlock) and block.detail == "no such file"  # not the title again
    assert fold.feed({"sessionUpdate": "notice", "severity": "info"}) == []  # no title: skipped


def test_a_compaction_folds_its_updates_and_holds_back_what_follows_until_it_ends() -> None:
    from acp_sidecar.render.blocks import CompactionBlock

    fold = BlockFold()
    assert (
        fold.feed(
            {"sessionUpdate": "compaction_update", "compactionId": "k1", "status": "in_progress"},
            T0,
        )
        == []
    )
    for text in ("The user ", "asked for x."):
        chunk = {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k1"}
        assert fold.feed(chunk | {"content": {"type": "text", "text": text}}, T1) == []
    assert fold.feed(_chunk("agent_message_chunk", "answer"), T1) == []  # waits for it
    done = {"sessionUpdate": "compaction_update", "compactionId": "k1", "status": "completed"}
    (compaction,) = fold.feed(done, T1)
    assert isinstance(compaction, CompactionBlock) and compaction.at == T0
    assert compaction.status == "completed" and compaction.summary_text == "The user asked for x."
    # A complete summary replaces the chunks; a failure keeps its error.
    replayed = list(
        fold_blocks(
            [
                done | {"compactionId": "k2", "summary": [{"type": "text", "text": "whole"}]},
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": "k3",
                    "status": "failed",
                    "error": "no summary",
                },
            ]
        )
    )
    assert [
        (b.status, b.summary_text, b.error) for b in replayed if isinstance(b, CompactionBlock)
    ] == [
        ("completed", "whole", None),
        ("failed", "", "no summary"),
    ]


def test_a_plan_cards_raw_input_is_not_repeated_above_the_plan() -> None:
    """The bridge completes a plan call's card with no content and sends the plan right after
    it: the card stands for that plan, and no view shows the plan's JSON again on it."""
    from acp_sidecar.export.cards import card_html
    from acp_sidecar.export.gfm_cards import card_markdown
    from acp_sidecar.render.draw import raw_input_line

    entries = [{"content": "Write it", "priority": "high", "status": "pending"}]
    fold = BlockFold()
    assert fold.feed(_call("p1", rawInput={"entries": entries}), T0) == []
    completed = _done("p1") | {"title": "Plan: 1 entry", "content": []}
    assert fold.feed(completed, T0) == []  # held: a plan may follow
    (card,) = fold.feed({"sessionUpdate": "plan", "entries": entries}, T1)
    (plan,) = fold.finish()
    assert isinstance(card, CardBlock) and isinstance(plan, PlanBlock)
    assert card.card.shows_plan and raw_input_line(card.card) is None
    assert "entries" not in card_markdown(card.card, None)
    assert "raw-input" not in card_html(card.card, None)

    # A card that ends without content and without a plan still shows its input.
    other = list(
        fold_blocks([_call("x1", rawInput={"q": "needle"}), _done("x1") | {"content": []}])
    )
    assert isinstance(other[0], CardBlock) and not other[0].card.shows_plan
    assert raw_input_line(other[0].card) == '{"q": "needle"}'


def test_plan_operations_fold_like_plans_and_a_markdown_plan_is_its_own_block() -> None:
    entries = [{"content": "a", "status": "pending"}]
    items = {"type": "items", "planId": "checklist", "entries": entries}
    document = {"type": "markdown", "planId": "markdown", "content": "# P", "path": "/w/P.md"}
    blocks = list(
        fold_blocks(
            [
                {"sessionUpdate": "plan_update", "plan": {**items, "entries": [{"content": "x"}]}},
                {"sessionUpdate": "plan_update", "plan": items},  # same plan: replaces it
                {"sessionUpdate": "plan_update", "plan": document},  # another plan: a new block
                {"sessionUpdate": "plan_update", "plan": {**document, "content": "# Q"}},
                {"sessionUpdate": "current_mode_update", "currentModeId": "code"},
                {"sessionUpdate": "plan_removed", "planId": "markdown"},
                {"sessionUpdate": "plan_removed", "planId": "checklist"},
            ]
        )
    )
    assert blocks == [
        PlanBlock(entries),
        PlanBlock([], markdown="# Q", path="/w/P.md"),
        ModeBlock("code"),
        PlanBlock([], markdown=""),
        PlanBlock([]),
    ]
