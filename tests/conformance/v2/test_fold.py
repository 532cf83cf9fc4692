"""The v2 normaliser itself, on hand-written v2 updates: what it folds is what an editor applying
v2's upsert rules would hold, so the comparison in ``test_same_cards`` judges by those rules."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from acp_sidecar.render.blocks import CardBlock, MessageBlock, PlanBlock
from tests.conformance.v2.fold import assert_same_diff, fold_v2


def card(**fields: Any) -> dict[str, Any]:
    return {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "c1", **fields}}


def chunk(terminal_id: str, text: str) -> dict[str, Any]:
    data = base64.b64encode(text.encode()).decode()
    update = {"sessionUpdate": "terminal_output_chunk", "terminalId": terminal_id, "data": data}
    return {"update": update}


def test_one_update_creates_a_card_omitted_fields_stay_and_null_clears() -> None:
    [block] = fold_v2(
        [
            card(title="Run", kind="execute", status="pending", rawInput={"a": 1}),
            card(status="in_progress"),
            card(status="completed", kind=None, rawOutput={"ok": True}),
        ]
    )
    assert isinstance(block, CardBlock)
    folded = block.card
    assert (folded.title, folded.kind, folded.status) == ("Run", None, "completed")
    assert folded.raw_input == {"a": 1} and folded.raw_output == {"ok": True}


def test_a_terminal_announced_before_its_card_gathers_its_chunks_and_exit() -> None:
    terminal = {"type": "terminal", "terminalId": "t1"}
    [block] = fold_v2(
        [
            {"update": {"sessionUpdate": "terminal_update", "terminalId": "t1", "cwd": "/w"}},
            card(title="ls", content=[terminal]),
            chunk("t1", "é"),
            chunk("t1", "\n"),
            {
                "update": {
                    "sessionUpdate": "terminal_update",
                    "terminalId": "t1",
                    "exitStatus": {"exitCode": 2},
                }
            },
        ]
    )
    assert isinstance(block, CardBlock)
    [shown] = block.card.terminals.values()
    assert (shown.cwd, shown.output, shown.exit_code) == ("/w", "é\n", 2)


def test_chunks_of_one_message_join_and_a_plan_replaces_the_one_before() -> None:
    def said(text: str, message_id: str) -> dict[str, Any]:
        content = {"type": "text", "text": text}
        return {
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "messageId": message_id,
                "content": content,
            }
        }

    def plan(*names: str) -> dict[str, Any]:
        entries = [{"content": n, "priority": "low", "status": "pending"} for n in names]
        return {
            "update": {
                "sessionUpdate": "plan_update",
                "plan": {"type": "items", "planId": "checklist", "entries": entries},
            }
        }

    blocks = fold_v2([said("a", "m1"), said("b", "m1"), said("c", "m2"), plan("x"), plan()])
    first, second, checklist = blocks
    assert isinstance(first, MessageBlock) and isinstance(second, MessageBlock)
    assert [b["text"] for b in first.blocks] == ["a", "b"] and second.message_id == "m2"
    assert isinstance(checklist, PlanBlock) and checklist.entries == []


def test_a_diff_that_says_another_thing_is_told_apart() -> None:
    v1 = {"type": "diff", "path": "/w/f", "oldText": "a\n", "newText": "b\n"}
    patch = "diff --git /w/f /w/f\n--- /w/f\n+++ /w/f\n@@ -1 +1 @@\n-a\n+c\n"
    v2 = {
        "type": "diff",
        "changes": [{"operation": "modify", "path": "/w/f", "fileType": "text"}],
        "patch": {"format": "git_patch", "text": patch},
    }
    with pytest.raises(AssertionError):
        assert_same_diff(v1, v2)
    assert_same_diff({**v1, "newText": "c\n"}, v2)
