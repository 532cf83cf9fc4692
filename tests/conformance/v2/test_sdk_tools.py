"""The official TypeScript SDK's experimental v2 client (2.4.0) runs tools on a spawned sidecar
with ``--acp-v2``: a write and an edit allowed in their dialogs, a command allowed and one
rejected, a grep, and a tool of ``mcp-server-time`` (the reference MCP server from PyPI, named
by the client as a v2 ``stdio`` entry). The SDK parses every update by its own v2 types and
hands it back; the cards it handed back are folded by v2's upsert rules and checked, and every
line the sidecar wrote is judged by the v2 schema here too."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.render.blocks import CardBlock
from acp_sidecar.render.fold import CardState
from tests.acp_schema import validate_agent_message
from tests.conformance.v2.fold import fold_v2
from tests.conformance.v2.node_peer import run_peer
from tests.mcp.over_acp import BIN

PROMPTS = [
    "/write " + json.dumps({"path": "notes.txt", "content": "alpha\nbeta\n"}),
    "/edit " + json.dumps({"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}),
    "!echo hi",
    "!echo DENY > denied.txt",
    "/grep BETA",
    "/mcp__time__get_current_time " + json.dumps({"timezone": "UTC"}),
]


def card_of(updates: list[dict[str, Any]]) -> CardState:
    """The one card a turn drew, folded from the updates the SDK handed back."""
    [block] = [b for b in fold_v2({"update": u} for u in updates) if isinstance(b, CardBlock)]
    return block.card


def text_of(card: CardState) -> str:
    return "".join(c["content"].get("text", "") for c in card.content if c["type"] == "content")


@pytest.mark.process  # node runs the SDK's client, which spawns the sidecar and the MCP server
async def test_the_typescript_v2_client_runs_tools_with_their_dialogs(tmp_path: Path) -> None:
    time_server = BIN / "mcp-server-time"
    if not time_server.exists():
        pytest.skip("mcp-server-time is not installed (pip install -e '.[test]')")
    sidecar = [sys.executable, "-m", "acp_sidecar", "--acp-v2", "--store", str(tmp_path / "s")]
    servers = [{"type": "stdio", "name": "time", "command": str(time_server), "args": []}]
    seen = await run_peer(
        "peer_tools.mjs",
        sidecar,
        tmp_path,
        timeout=120,
        MCP_SERVERS=json.dumps(servers),
        PROMPTS=json.dumps(PROMPTS),
    )

    assert (tmp_path / "notes.txt").read_text() == "alpha\nBETA\n"
    assert not (tmp_path / "denied.txt").exists()  # rejected: never ran
    turns = seen["turns"]
    assert len(turns) == len(PROMPTS)
    for turn in turns:
        assert turn["answer"]["messageId"]
        assert turn["updates"][-1]["stopReason"] == "end_turn"
    write, edit, echo, denied, grep, clock = (card_of(t["updates"]) for t in turns)
    for card, operation in ((write, "add"), (edit, "modify")):
        assert card.status == "completed"
        [diff] = card.content
        assert diff["type"] == "diff"
        assert [(c["operation"], c["path"]) for c in diff["changes"]] == [
            (operation, str(tmp_path / "notes.txt"))
        ]
    assert echo.status == "completed"
    [terminal] = echo.terminals.values()
    assert terminal.output == "hi\n" and terminal.exit_code == 0
    assert denied.status == "failed"
    [never_ran] = denied.terminals  # shown under the refusal, and marked over: how, unknown
    assert {"sessionUpdate": "terminal_update", "terminalId": never_ran, "exitStatus": {}} in (
        turns[3]["updates"]
    )
    assert grep.status == "completed" and "notes.txt" in text_of(grep)
    assert clock.status == "completed" and "UTC" in text_of(clock)

    # Read-only tools never ask; the rest ask once each, a command by its own subject.
    subjects = [dialog["subject"] for dialog in seen["asked"]]
    assert [s["type"] for s in subjects] == ["tool_call", "tool_call", "command", "command"]
    assert [s["command"] for s in subjects[2:]] == ["echo hi", "echo DENY > denied.txt"]
    assert {s["cwd"] for s in subjects[2:]} == {str(tmp_path)}

    lines = [json.loads(line) for line in seen["written"].splitlines()]
    methods = {m["id"]: m["method"] for m in lines if "method" in m and "id" in m}
    for message in lines:
        if "method" in message:
            validate_agent_message(message, version=2)
    prompted = [m for m in lines if "result" in m and "messageId" in m["result"]]
    for answer in prompted:
        validate_agent_message(answer, request_method="session/prompt", version=2)
    assert len(prompted) == len(PROMPTS)
    assert sorted(methods.values()) == ["session/request_permission"] * 4
