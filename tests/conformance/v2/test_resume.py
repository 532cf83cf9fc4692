"""``session/resume`` over v2, in process: without ``replayFrom`` nothing is replayed and one
idle ``state_update`` precedes the answer; with ``{type: "start"}`` the history replays first
(its cards as v2 ``tool_call_update``s under the ids the log kept), then the snapshot, then the
answer ``{configOptions, availableCommands}``; any other cursor is ``-32602`` and attaches
nothing; a session whose turn runs on this connection is refused, as by v1's load and resume
(it is attached already). The log is version-neutral: a session recorded over v1 resumes over v2, and one
recorded over v2 loads over v1. Every message is judged by the v2 (or v1) schema.

Spec: the vendored ``tests/fixtures/acp/v2/schema.json`` (``ResumeSessionRequest``,
``ReplayFrom``, ``ResumeSessionResponse``: "the agent MUST send a current ``state_update``
after any requested history replay and before this response").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from tests.conformance.v2.recorded import (
    record_v1,
    record_v2,
    resume_params,
    until_answer,
    v1_client,
    v2_client,
)
from tests.conformance.v2.test_prompt_lifecycle import CLIENT_INFO, prompt, said_started, until_idle
from tests.drivers import ScriptDriver
from tests.server.wire import served

IDLE = {"sessionUpdate": "state_update", "state": "idle", "background": []}
"""The snapshot of a resumed session: idle, no stop reason of its own, no work left running."""
WRITE = "/write " + json.dumps({"path": "new.txt", "content": "one\ntwo\n"})


def card_ids(updates: list[dict[str, Any]]) -> list[str]:
    seen = [u["toolCallId"] for u in updates if u["sessionUpdate"] == "tool_call_update"]
    return list(dict.fromkeys(seen))


async def test_without_replay_only_the_idle_snapshot_precedes_the_answer(tmp_path: Path) -> None:
    store = tmp_path / "store"
    session_id = await record_v2(store, tmp_path, [WRITE])
    async with v2_client(store) as (client, server):
        msg_id = await client.send_request("session/resume", resume_params(session_id, tmp_path))
        before, answer = await until_answer(client, msg_id)
        assert session_id in server.sessions
    assert before == [IDLE]
    result = answer["result"]
    assert {o["configId"] for o in result["configOptions"]} >= {"mode"}
    mode = next(o for o in result["configOptions"] if o["configId"] == "mode")
    assert mode["currentValue"] == "auto"  # the log's mode, restored
    assert {"type", "name", "description"} <= set(result["availableCommands"][0])


async def test_null_cursor_directories_and_servers_are_their_defaults(tmp_path: Path) -> None:
    store = tmp_path / "store"
    session_id = await record_v2(store, tmp_path, [WRITE])
    async with v2_client(store) as (client, _):
        nulls = {"replayFrom": None, "additionalDirectories": None, "mcpServers": None}
        params = resume_params(session_id, tmp_path, **nulls)
        before, answer = await until_answer(
            client, await client.send_request("session/resume", params)
        )
    assert "result" in answer
    assert [u["sessionUpdate"] for u in before] == ["state_update"]


async def test_replay_from_start_replays_the_history_then_the_snapshot(tmp_path: Path) -> None:
    store = tmp_path / "store"
    session_id = await record_v2(store, tmp_path, [WRITE, "/grep one"])
    async with v2_client(store) as (client, _):
        params = resume_params(session_id, tmp_path, replayFrom={"type": "start"})
        before, answer = await until_answer(
            client, await client.send_request("session/resume", params)
        )
    assert "result" in answer
    assert before[-1] == IDLE
    assert [u for u in before if u["sessionUpdate"] == "state_update"] == [before[-1]]
    kinds = [u["sessionUpdate"] for u in before]
    assert kinds.count("user_message_chunk") == 2  # both prompts, with their ids
    assert all(u["messageId"] for u in before if u["sessionUpdate"].endswith("_chunk"))
    names = {u["toolCallId"]: u.get("name") for u in before if u.get("name")}
    assert sorted(names.values()) == ["grep", "write"]
    finals = {u["toolCallId"]: u["status"] for u in before if u.get("status")}
    assert set(finals.values()) == {"completed"}
    assert len(card_ids(before)) == 2


async def test_replayed_cards_keep_the_ids_they_had_live(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with v2_client(store) as (client, _):
        session_id = (await client.result("session/new", {"cwd": str(tmp_path)}))["sessionId"]
        auto = {"sessionId": session_id, "configId": "mode", "type": "id", "value": "auto"}
        await client.result("session/set_config_option", auto)
        echoed = await client.result("session/prompt", prompt(session_id, WRITE))
        live = await until_idle(client, session_id)
    async with v2_client(store) as (client, _):
        params = resume_params(session_id, tmp_path, replayFrom={"type": "start"})
        before, _answer = await until_answer(
            client, await client.send_request("session/resume", params)
        )
    assert card_ids(before) == card_ids(live)
    [echo] = [u for u in before if u["sessionUpdate"] == "user_message_chunk"]
    assert echo["messageId"] == echoed["messageId"]


@pytest.mark.parametrize(
    ("cursor", "named"),
    [({"type": "message", "messageId": "m1"}, "'message'"), ({"type": "_ours"}, "'_ours'")],
)
async def test_an_unsupported_cursor_is_refused_and_attaches_nothing(
    tmp_path: Path, cursor: dict[str, Any], named: str
) -> None:
    store = tmp_path / "store"
    session_id = await record_v2(store, tmp_path, [WRITE])
    async with v2_client(store) as (client, server):
        params = resume_params(session_id, tmp_path, replayFrom=cursor)
        before, answer = await until_answer(
            client, await client.send_request("session/resume", params)
        )
        assert session_id not in server.sessions
    assert before == []
    assert answer["error"] == {
        "code": -32602,
        "message": f"Invalid params: replayFrom: unsupported cursor type {named} "
        "(this agent replays from 'start' only, or not at all)",
    }


async def test_a_malformed_cursor_is_invalid_params(tmp_path: Path) -> None:
    store = tmp_path / "store"
    session_id = await record_v2(store, tmp_path, [WRITE])
    async with v2_client(store) as (client, server):
        params = resume_params(session_id, tmp_path, replayFrom="start")
        error = await client.error("session/resume", params)
        assert session_id not in server.sessions
    assert error["code"] == -32602 and "replayFrom" in error["message"]


async def test_an_unknown_session_is_not_found_with_a_store_or_without(tmp_path: Path) -> None:
    params = resume_params("nope", tmp_path, replayFrom={"type": "start"})
    async with v2_client(tmp_path / "store") as (client, _):
        stored = await client.error("session/resume", params)
    sidecar = AcpServer(None, acp_v2=True)  # no store: resume is baseline in v2 all the same
    async with served(sidecar) as (client, _):
        client.version = 2
        init = {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": {}}
        await client.result("initialize", init)
        client.initialized = True
        unstored = await client.error("session/resume", params)
    expected = {"code": -32002, "message": "Session not found: nope", "data": {"sessionId": "nope"}}
    assert stored == unstored == expected


async def test_a_session_recorded_over_v1_resumes_over_v2_with_its_cards(tmp_path: Path) -> None:
    store = tmp_path / "store"
    session_id = await record_v1(store, tmp_path, [WRITE, "!echo hi"])
    async with v2_client(store) as (client, _):
        params = resume_params(session_id, tmp_path, replayFrom={"type": "start"})
        before, answer = await until_answer(
            client, await client.send_request("session/resume", params)
        )
    assert "result" in answer
    kinds = [u["sessionUpdate"] for u in before]
    assert "tool_call" not in kinds and "current_mode_update" not in kinds
    assert len(card_ids(before)) == 2
    assert "terminal_update" in kinds and "terminal_output_chunk" in kinds
    assert kinds[-1] == "state_update"


async def test_a_session_recorded_over_v2_loads_over_v1_with_its_cards(tmp_path: Path) -> None:
    store = tmp_path / "store"
    session_id = await record_v2(store, tmp_path, [WRITE, "!echo hi"])
    async with v1_client(store) as client:
        params = {"sessionId": session_id, "cwd": str(tmp_path), "mcpServers": []}
        before, answer = await until_answer(
            client, await client.send_request("session/load", params)
        )
    assert answer["result"]["modes"]["currentModeId"] == "auto"
    opened = [u for u in before if u["sessionUpdate"] == "tool_call"]
    assert len(opened) == 2
    assert not any(u["sessionUpdate"] == "state_update" for u in before)
    metas = [u.get("_meta", {}) for u in before if u["sessionUpdate"] == "tool_call_update"]
    assert any("terminal_output" in meta for meta in metas)  # the v1 terminal of the bash card


async def test_resuming_a_session_whose_turn_runs_here_is_refused_and_the_turn_goes_on(
    tmp_path: Path,
) -> None:
    sidecar = AcpServer(
        ScriptDriver, cancel_grace=0.3, acp_v2=True, store=lambda: SessionStore(tmp_path / "s")
    )
    async with served(sidecar) as (client, _):
        client.version = 2
        params = {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": {}}
        await client.result("initialize", params)
        client.initialized = True
        session_id = (await client.result("session/new", {"cwd": str(tmp_path)}))["sessionId"]
        await client.result("session/prompt", prompt(session_id, "wait"))
        await said_started(client)
        cursor = {"type": "start"}
        error = await client.error(
            "session/resume", resume_params(session_id, tmp_path, replayFrom=cursor)
        )
        await client.notify("session/cancel", {"sessionId": session_id})
        updates = await until_idle(client, session_id)
    assert error == {
        "code": -32600,
        "message": f"Invalid request: session {session_id} is running a prompt turn",
    }
    assert updates[-1]["stopReason"] == "cancelled"
    assert [u["state"] for u in updates if u["sessionUpdate"] == "state_update"] == [
        "running",
        "idle",
    ]
