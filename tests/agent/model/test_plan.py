"""A model that keeps a plan: its ``plan`` call reaches the editor as a ``plan`` update (checked
against the schema by the editor), the model reads a one-line summary back, and the plan
replays from the session log through the same translator."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from acp_sidecar.agent.model import ModelDriver
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.modes import ModeId, SessionPolicy
from acp_sidecar.bridge.policy import install_policy
from acp_sidecar.bridge.replay import replay_updates
from acp_sidecar.protocol import SessionNotification, SessionUpdate, to_wire
from acp_sidecar.store import SessionStore
from acp_sidecar.tools.builtin import plan_tool
from acp_sidecar.tools.registry import ToolRegistry
from tests.agent.model.fake_openai import ScriptedOpenAI, answer, calling, tool_call
from tests.agent.model.harness import (
    CWD,
    SESSION,
    RecordedSession,
    assert_well_formed,
    make_turn,
)
from tests.fakes import Editor

ENTRIES = [
    {"content": "Find the bug", "priority": "high", "status": "in_progress"},
    {"content": "Write a test", "priority": "medium", "status": "pending"},
]


@pytest.fixture
def registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(plan_tool)
    install_policy(registry)
    return registry


async def test_the_model_sets_the_plan_and_reads_a_summary(
    driver: ModelDriver, endpoint: ScriptedOpenAI, registry: ToolRegistry, tmp_path: Path
) -> None:
    arguments = json.dumps({"entries": ENTRIES})
    endpoint.script(calling(tool_call(0, "call_p", "plan", arguments)), answer("On it."))
    session = RecordedSession(tmp_path)
    editor = Editor()

    assert await session.run(driver, "fix it", editor=editor) == "end_turn"

    first, second = endpoint.requests
    assert [t["function"]["name"] for t in first.body["tools"]] == ["plan"]
    assert_well_formed(second.messages)
    assert second.messages[-1] == {
        "role": "tool",
        "tool_call_id": "call_p",
        "content": "Plan updated: 2 entries, 1 in progress.",
    }
    plans = [u for u in editor.updates if u["sessionUpdate"] == "plan"]
    assert plans == [{"sessionUpdate": "plan", "entries": ENTRIES}]
    kinds = [u["sessionUpdate"] for u in editor.updates]
    assert kinds.index("plan") == kinds.index("agent_message_chunk") - 1

    # Replayed from the log: the same plan, after the same card.
    with SessionStore(tmp_path).open_log(SESSION) as log:
        replayed = [
            update.session_update
            for update in replay_updates(log.header, log, registry.get, CardContext(cwd=CWD))
        ]
    assert replayed.count("plan") == 1
    assert replayed.index("plan") == replayed.index("tool_call_update") + 1


@pytest.mark.parametrize("mode", ["ask", "read-only"])
async def test_the_plan_runs_without_asking_in_ask_and_read_only_modes(
    driver: ModelDriver, endpoint: ScriptedOpenAI, mode: ModeId
) -> None:
    endpoint.script(
        calling(tool_call(0, "call_p", "plan", json.dumps({"entries": ENTRIES}))), answer("ok")
    )
    editor = Editor()  # no answers: a permission dialog would fail the test
    turn = make_turn(editor, "plan it")
    scope = attrs.evolve(turn.scope, policy=SessionPolicy(mode=mode))

    assert await driver.run_turn(attrs.evolve(turn, scope=scope)) == "end_turn"

    assert editor.asked == []
    assert [u for u in editor.updates if u["sessionUpdate"] == "plan"] == [
        {"sessionUpdate": "plan", "entries": ENTRIES}
    ]
    assert (
        endpoint.requests[-1].messages[-1]["content"] == "Plan updated: 2 entries, 1 in progress."
    )


async def test_the_model_writes_a_markdown_plan_in_read_only_mode(
    driver: ModelDriver, endpoint: ScriptedOpenAI
) -> None:
    """No new mode: ``read-only`` lets the model plan, and a client with plan operations gets
    the document as a ``plan_update`` (checked against the unstable schema)."""
    from tests.agent.test_plan_operations import check_message

    document, path = "# Plan\n\n- find the bug\n", f"{CWD}/PLAN.md"
    arguments = json.dumps({"markdown": document, "path": path})
    endpoint.script(calling(tool_call(0, "call_p", "plan", arguments)), answer("ok"))
    sent: list[dict[str, object]] = []

    async def send(update: SessionUpdate) -> None:
        params = to_wire(SessionNotification(session_id="s", update=update))
        check_message({"jsonrpc": "2.0", "method": "session/update", "params": params})
        sent.append(params["update"])

    editor = Editor()  # no answers: a permission dialog would fail the test
    turn = make_turn(editor, "plan it", send=send)
    cards = CardContext(cwd=CWD, plan_operations=True)
    scope = attrs.evolve(turn.scope, policy=SessionPolicy(mode="read-only"), cards=cards)

    assert await driver.run_turn(attrs.evolve(turn, scope=scope)) == "end_turn"

    assert editor.asked == []
    plan = {"type": "markdown", "planId": "markdown", "content": document, "path": path}
    assert [u for u in sent if u["sessionUpdate"] == "plan_update"] == [
        {"sessionUpdate": "plan_update", "plan": plan}
    ]
    assert endpoint.requests[-1].messages[-1]["content"] == "Plan updated: Markdown plan, 3 lines."
