"""The same stored session drawn over v1 and v2 gives the same cards, messages and plans: one
log (a write allowed in a permission dialog, an edit, a bash command, a checklist), recorded
over either version, is loaded over v1 (``session/load`` by a client with
``_meta.terminal_output`` and plan operations) and resumed over v2 (``replayFrom`` ``start``);
``render.blocks`` folds the v1 stream and ``tests.conformance.v2.fold`` the v2 one into the same
block shapes, which must agree (diffs by meaning). Every message is judged by its version's
schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.v2.fold import assert_same_view, fold_v1, fold_v2
from tests.conformance.v2.recorded import resume_params, until_answer, v1_client, v2_client
from tests.conformance.v2.test_prompt_lifecycle import prompt
from tests.server.wire import WireClient

ENTRIES = [
    {"content": "write it", "priority": "high", "status": "completed"},
    {"content": "check it", "priority": "medium", "status": "in_progress"},
]
PROMPTS = [
    "/write " + json.dumps({"path": "notes.txt", "content": "alpha\nbeta\ngamma\n"}),
    "/edit " + json.dumps({"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}),
    "!echo hi; echo there",
    "/plan " + json.dumps({"entries": ENTRIES}),
]
"""The session's turns, in the default mode: the write and the edit ask first."""


async def allow(client: WireClient, request: dict[str, Any]) -> None:
    assert request["method"] == "session/request_permission", request
    [option] = [o for o in request["params"]["options"] if o["kind"] == "allow_once"]
    outcome = {"outcome": "selected", "optionId": option["optionId"]}
    await client.respond(request["id"], {"outcome": outcome})


async def record_v1(store: Path, cwd: Path) -> tuple[str, int]:
    """The session recorded over v1, and how many dialogs it answered."""
    asked = 0
    async with v1_client(store) as client:
        session_id = await client.new_session(str(cwd))
        for text in PROMPTS:
            msg_id = await client.start_prompt(session_id, text)
            while "id" not in (message := await client.receive()) or "method" in message:
                if message.get("method") == "session/request_permission":
                    asked += 1
                    await allow(client, message)
            assert message["id"] == msg_id and message["result"]["stopReason"] == "end_turn"
    return session_id, asked


async def record_v2(store: Path, cwd: Path) -> tuple[str, int]:
    """The session recorded over v2, and how many dialogs it answered."""
    asked = 0
    async with v2_client(store) as (client, _):
        session_id = (await client.result("session/new", {"cwd": str(cwd)}))["sessionId"]
        for text in PROMPTS:
            await client.result("session/prompt", prompt(session_id, text))
            while True:
                message = await client.receive()
                if message.get("method") == "session/request_permission":
                    asked += 1
                    await allow(client, message)
                    continue
                update = message.get("params", {}).get("update", {})
                if update.get("sessionUpdate") == "state_update" and update["state"] == "idle":
                    assert update["stopReason"] == "end_turn", update
                    break
    return session_id, asked


async def loaded_over_v1(store: Path, cwd: Path, session_id: str) -> list[dict[str, Any]]:
    async with v1_client(store) as client:
        params = {"sessionId": session_id, "cwd": str(cwd), "mcpServers": []}
        updates, answer = await until_answer(
            client, await client.send_request("session/load", params)
        )
    assert "result" in answer, answer
    return updates


async def resumed_over_v2(store: Path, cwd: Path, session_id: str) -> list[dict[str, Any]]:
    async with v2_client(store) as (client, _):
        params = resume_params(session_id, cwd, replayFrom={"type": "start"})
        updates, answer = await until_answer(
            client, await client.send_request("session/resume", params)
        )
    assert "result" in answer, answer
    return updates


@pytest.mark.parametrize("recorder", [record_v1, record_v2], ids=["recorded-v1", "recorded-v2"])
async def test_one_log_draws_the_same_cards_messages_and_plans(
    tmp_path: Path, recorder: Any
) -> None:
    store = tmp_path / "store"
    session_id, asked = await recorder(store, tmp_path)
    assert asked == 3  # the write, the edit and the bash command asked; the plan did not
    v1 = fold_v1(await loaded_over_v1(store, tmp_path, session_id))
    v2 = fold_v2(await resumed_over_v2(store, tmp_path, session_id))
    assert_same_view(v1, v2)
    kinds = [type(block).__name__ for block in v1]
    assert kinds.count("CardBlock") == 4 and kinds.count("PlanBlock") == 1
    cards = [block.card for block in v1 if type(block).__name__ == "CardBlock"]
    assert [card.status for card in cards] == ["completed"] * 4
    assert sum(1 for card in cards for item in card.content if item.get("type") == "diff") == 2
    [terminal] = [t for card in cards for t in card.terminals.values()]
    assert terminal.output == "hi\nthere\n" and terminal.exit_code == 0
