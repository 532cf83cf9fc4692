"""The official TypeScript SDK's experimental v2 client (2.4.0) drives a spawned sidecar with
``--acp-v2``: initialize, session/new, a prompt that writes a file behind a permission dialog
(read until idle), set_config_option, session/list, session/close, then session/resume with
``replayFrom`` ``start`` (the written file's card replayed, the idle snapshot last). The SDK
parses every answer and update by its own v2 types; every line the sidecar wrote is judged
here too."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.acp_schema import update_kinds, validate_agent_message
from tests.conformance.v2.node_peer import run_peer

METHODS = [
    "initialize",
    "session/new",
    "session/prompt",
    "session/set_config_option",
    "session/list",
    "session/close",
    "session/resume",
]


@pytest.mark.process  # node runs the SDK's client, which spawns the sidecar
async def test_the_typescript_v2_client_sets_up_a_session(tmp_path: Path) -> None:
    store = tmp_path / "store"
    sidecar = [sys.executable, "-m", "acp_sidecar", "--acp-v2", "--store", str(store)]
    seen = await run_peer("peer.mjs", sidecar, tmp_path)
    assert seen["initialized"]["protocolVersion"] == 2
    assert seen["sessionId"] == seen["newSession"]["sessionId"]
    mode = next(o for o in seen["set"]["configOptions"] if o["configId"] == "mode")
    assert mode["currentValue"] == "auto"
    assert seen["options"] == seen["set"]["configOptions"]  # the SDK took the answer
    listed = seen["listed"]["sessions"]
    assert [s["sessionId"] for s in listed] == [seen["sessionId"]]  # prompted: stored
    (asked,) = seen["asked"]
    assert asked["subject"]["type"] == "tool_call"
    assert asked["subject"]["toolCall"]["content"][0]["type"] == "diff"
    assert (tmp_path / "from-peer.txt").read_text() == "written by the peer\n"
    assert seen["closed"] == {}
    lines = [json.loads(line) for line in seen["written"].splitlines()]
    answers = [m for m in lines if "id" in m and "method" not in m]
    # The peer awaits each request before the next: the answers come in its order.
    assert len(answers) == len(METHODS)
    for answer, method in zip(answers, METHODS, strict=True):
        validate_agent_message(answer, request_method=method, version=2)
    for message in lines:
        if message.get("method") == "session/update":
            validate_agent_message(message, version=2)
            assert message["params"]["update"]["sessionUpdate"] in update_kinds(version=2)
    (dialog,) = [m for m in lines if m.get("method") == "session/request_permission"]
    lines = lines[: lines.index(answers[METHODS.index("session/close")])]  # before the resume
    validate_agent_message(dialog, version=2)
    kinds = [
        m["params"]["update"]["sessionUpdate"] for m in lines if m.get("method") == "session/update"
    ]
    assert "available_commands_update" in kinds
    echoed = [
        m["params"]["update"]
        for m in lines
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "user_message_chunk"
    ]
    assert [u["messageId"] for u in echoed] == [seen["prompted"]["messageId"]]
    states = [
        m["params"]["update"]
        for m in lines
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "state_update"
    ]
    assert [s["state"] for s in states] == ["running", "requires_action", "running", "idle"]
    assert states[-1]["stopReason"] == "end_turn"
    card_id = asked["subject"]["toolCall"]["toolCallId"]
    replayed = seen["replayed"]
    cards = [u for u in replayed if u["sessionUpdate"] == "tool_call_update"]
    assert {u["toolCallId"] for u in cards} == {card_id}  # the one card, under its id
    assert cards[0]["name"] == "write" and cards[-1]["status"] == "completed"
    snapshot = {"sessionUpdate": "state_update", "state": "idle", "background": []}
    assert [u for u in replayed if u["sessionUpdate"] == "state_update"] == [snapshot]
    everything = [json.loads(line) for line in seen["written"].splitlines()]
    resume_answer = everything.index(answers[METHODS.index("session/resume")])
    assert everything[resume_answer - 1]["params"]["update"] == snapshot  # right before it
    assert [u["messageId"] for u in replayed if u["sessionUpdate"] == "user_message_chunk"] == [
        seen["prompted"]["messageId"]
    ]
    resumed = seen["resumed"]
    mode = next(o for o in resumed["configOptions"] if o["configId"] == "mode")
    assert mode["currentValue"] == "auto"  # the log's mode, restored
    assert {c["name"] for c in resumed["availableCommands"]} >= {"write", "edit", "bash"}
