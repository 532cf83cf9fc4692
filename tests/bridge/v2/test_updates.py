"""The v2 encoder of the core's updates: every v1 kind either goes out in a form the v2 schema
accepts (the unstable one for the kinds only it defines), is dropped (no v2 form), or is
refused as never sent to a v2 client; never sent as v1."""

from __future__ import annotations

from typing import Any, get_args

import attrs
import pytest

from acp_sidecar import protocol as p
from acp_sidecar.bridge.v2.updates import NotServedOverV2, encode_update
from tests.acp_schema import update_kinds, validate_agent_message
from tests.protocol.samples import AGENT_SAMPLES, Sample

UPDATES = [s for s in AGENT_SAMPLES if isinstance(s.value, p.SessionNotification)]

SENT = {
    "available_commands_update",
    "config_option_update",
    "notice",
    "session_info_update",
    "usage_update",
    "compaction_update",
    "compaction_summary_chunk",
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
}
DROPPED = {"current_mode_update"}
CARDS = {"tool_call", "tool_call_update"}
"""Sent as one or more v2 updates (a card, its terminal)."""
PLANS = {"plan_update", "plan_removed"}
"""A checklist's are stable v2, a Markdown plan's unstable (see the plan tests below)."""
CHILDREN = {"subagent_update", "session_message", "session_message_chunk"}
"""Child sessions: v2's unstable surface."""
NOT_YET = {"plan"}
"""The legacy plan: the core gives a v2 client plan operations."""


def _kind(sample: Sample) -> str:
    kind: str = sample.value.update.session_update
    return kind


def test_every_v1_kind_is_placed_once() -> None:
    kinds = {attrs.fields(cl).session_update.default for cl in get_args(p.SessionUpdate)}
    assert kinds == SENT | DROPPED | NOT_YET | CARDS | PLANS | CHILDREN
    placed = [SENT, DROPPED, NOT_YET, CARDS, PLANS, CHILDREN]
    assert sum(len(k) for k in placed) == len(kinds)


@pytest.mark.parametrize("sample", UPDATES, ids=lambda s: s.name)
def test_each_update(sample: Sample) -> None:
    update = sample.value.update
    if getattr(update, "message_id", "") is None:  # the core stamps every chunk it sends
        update = attrs.evolve(update, message_id="m-1")
    kind = _kind(sample)
    if kind in NOT_YET:
        with pytest.raises(NotServedOverV2, match=kind):
            encode_update(update)
        return
    if kind in CARDS:
        several = encode_update(update)
        assert isinstance(several, tuple)
        for each in several:
            _validate(each)
            assert all(c["type"] != "session" for c in each.get("content", ()))
        assert several
        return
    wire = encode_update(update)
    if kind in DROPPED:
        assert wire is None
        return
    assert isinstance(wire, dict)
    _validate(wire, unstable=kind in CHILDREN | PLANS)


def _validate(wire: dict[str, Any], *, unstable: bool = False) -> None:
    assert wire["sessionUpdate"] in update_kinds(unstable=unstable, version=2)
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": wire},
    }
    validate_agent_message(message, unstable=unstable, version=2)


def test_commands_and_options_take_their_v2_tags() -> None:
    commands = p.AvailableCommandsUpdate(
        available_commands=[
            p.AvailableCommand(name="a", description="A", input=p.AvailableCommandInput(hint="x"))
        ]
    )
    assert encode_update(commands) == {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [
            {
                "type": "command",
                "name": "a",
                "description": "A",
                "input": {"type": "text", "hint": "x"},
            }
        ],
    }
    option = p.SessionConfigOption(
        id="mode",
        name="Mode",
        current_value="ask",
        options=[p.SessionConfigSelectOption(value="ask", name="Ask")],
    )
    wire = encode_update(p.ConfigOptionUpdate(config_options=[option]))
    assert wire is not None
    assert wire["configOptions"] == [
        {
            "type": "select",
            "configId": "mode",
            "name": "Mode",
            "currentValue": "ask",
            "options": [{"value": "ask", "name": "Ask"}],
        }
    ]


def test_a_chunk_without_its_message_id_is_refused() -> None:
    chunk = p.AgentMessageChunk(content=p.TextContentBlock(text="hi"))
    with pytest.raises(NotServedOverV2, match="without a messageId"):
        encode_update(chunk)


ENTRY = p.PlanEntry(content="look", priority="high", status="pending")


def test_a_checklist_goes_out_as_v2_plan_items() -> None:
    wire = encode_update(p.PlanUpdate(plan=p.PlanItems(plan_id="checklist", entries=[ENTRY])))
    assert isinstance(wire, dict)
    _validate(wire)
    assert wire["plan"] == {
        "type": "items",
        "planId": "checklist",
        "entries": [{"content": "look", "priority": "high", "status": "pending"}],
    }


def test_a_removed_checklist_is_one_without_entries() -> None:
    wire = encode_update(p.PlanRemoved(plan_id="checklist"))
    assert isinstance(wire, dict)
    _validate(wire)
    assert wire == {
        "sessionUpdate": "plan_update",
        "plan": {"type": "items", "planId": "checklist", "entries": []},
    }


def test_a_markdown_plan_goes_out_as_the_unstable_markdown_plan_without_its_path() -> None:
    document = p.PlanMarkdown(plan_id="markdown", content="# Plan", path="/w/PLAN.md")
    wire = encode_update(p.PlanUpdate(plan=document))
    assert isinstance(wire, dict)
    _validate(wire, unstable=True)
    assert wire == {
        "sessionUpdate": "plan_update",
        "plan": {"type": "markdown", "planId": "markdown", "content": "# Plan"},
    }


def test_a_removed_markdown_plan_is_the_unstable_plan_removed() -> None:
    wire = encode_update(p.PlanRemoved(plan_id="markdown"))
    assert isinstance(wire, dict)
    _validate(wire, unstable=True)
    assert wire == {"sessionUpdate": "plan_removed", "planId": "markdown"}


def test_a_task_cards_link_is_left_out_and_a_link_alone_patches_nothing() -> None:
    link = p.ToolCallSession(session_id="s~task~c1")
    text = p.ToolCallContentBlock(content=p.TextContentBlock(text="done"))
    alone = encode_update(p.ToolCallProgress(tool_call_id="c1", content=[link]))
    assert alone == ({"sessionUpdate": "tool_call_update", "toolCallId": "c1"},)
    (done,) = encode_update(
        p.ToolCallProgress(tool_call_id="c1", status="completed", content=[link, text])
    )
    assert done["content"] == [{"type": "content", "content": {"type": "text", "text": "done"}}]
    assert encode_update(p.ToolCallProgress(tool_call_id="c1", content=[]))[0]["content"] == []
