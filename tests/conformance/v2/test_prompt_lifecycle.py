"""``session/prompt`` over v2, in process: the answer is the echoed message's id, the turn is
reported by ``state_update`` (``running``, then one ``idle`` with its stop reason after every
other update), and every message is judged by the v2 schema (``WireClient.version = 2``).

Spec: the vendored ``tests/fixtures/acp/v2/schema.json`` (``PromptResponse``, ``StateUpdate``,
``IdleStateUpdate``, ``CancelSessionNotification``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.drivers import DriverFactory
from tests.drivers import ScriptDriver
from tests.server.wire import WireClient, served

CLIENT_INFO = {"name": "v2-test-client", "version": "0"}


@asynccontextmanager
async def v2_session(
    cwd: Path, driver: DriverFactory | None = ScriptDriver
) -> AsyncIterator[tuple[WireClient, str]]:
    """A v2 connection with one session in ``cwd``."""
    server = AcpServer(driver, cancel_grace=0.3, acp_v2=True)
    async with served(server) as (client, _):
        client.version = 2
        params = {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": {}}
        await client.result("initialize", params)
        client.initialized = True
        created = await client.result("session/new", {"cwd": str(cwd)})
        yield client, created["sessionId"]


def prompt(session_id: str, text: str) -> dict[str, Any]:
    return {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}


async def until(
    client: WireClient, session_id: str, wanted: Callable[[dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    """Every update of ``session_id`` up to and including the first ``wanted`` one."""
    seen: list[dict[str, Any]] = []
    kept = list(client.updates)
    client.updates.clear()
    while True:
        message = kept.pop(0) if kept else await client.receive()
        if message.get("method") != "session/update":
            continue
        if message["params"]["sessionId"] != session_id:
            continue
        update = message["params"]["update"]
        seen.append(update)
        if wanted(update):
            client.updates.extend(kept)  # read ahead: left for the next wait
            return seen


async def until_idle(client: WireClient, session_id: str) -> list[dict[str, Any]]:
    """Every update of ``session_id`` up to and including its next idle ``state_update``,
    those read while awaiting an answer (kept in ``client.updates``) first."""
    return await until(client, session_id, is_idle)


def is_idle(update: dict[str, Any]) -> bool:
    return bool(update["sessionUpdate"] == "state_update" and update["state"] == "idle")


async def said_started(client: WireClient) -> None:
    """Read until the driver said it runs (it may have, before the prompt's answer)."""
    started = {"type": "text", "text": "started"}
    while not any(u["params"]["update"].get("content") == started for u in client.updates):
        await client.next_update()


def kinds(updates: list[dict[str, Any]]) -> list[str]:
    return [
        u["state"] if u["sessionUpdate"] == "state_update" else u["sessionUpdate"] for u in updates
    ]


async def test_the_answer_is_the_echoed_message_id_and_idle_ends_the_turn(tmp_path: Path) -> None:
    async with v2_session(tmp_path) as (client, session_id):
        answer = await client.result("session/prompt", prompt(session_id, "echo hello"))
        updates = await until_idle(client, session_id)
    echoed = [u for u in updates if u["sessionUpdate"] == "user_message_chunk"]
    assert [u["messageId"] for u in echoed] == [answer["messageId"]]
    order = [k for k in kinds(updates) if k != "available_commands_update"]
    assert order == [
        "running",
        "user_message_chunk",
        "agent_message_chunk",
        "session_info_update",
        "idle",
    ]
    said = next(u for u in updates if u["sessionUpdate"] == "agent_message_chunk")
    assert said["content"] == {"type": "text", "text": "hello"}
    assert said["messageId"] and said["messageId"] != answer["messageId"]
    assert updates[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
        "background": [],
    }


async def test_the_console_answers_help_over_v2(tmp_path: Path) -> None:
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        answer = await client.result("session/prompt", prompt(session_id, "/help"))
        updates = await until_idle(client, session_id)
    text = "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert "/help" in text
    assert updates[-1]["stopReason"] == "end_turn"
    assert any(u.get("messageId") == answer["messageId"] for u in updates)


async def test_cancel_ends_the_turn_idle_cancelled(tmp_path: Path) -> None:
    async with v2_session(tmp_path) as (client, session_id):
        await client.result("session/prompt", prompt(session_id, "wait"))
        await said_started(client)
        await client.notify("session/cancel", {"sessionId": session_id})
        updates = await until_idle(client, session_id)
    assert updates[-1]["stopReason"] == "cancelled"
    assert kinds(updates).count("idle") == 1


async def test_a_turn_that_raises_after_insertion_ends_idle_error(tmp_path: Path) -> None:
    async with v2_session(tmp_path) as (client, session_id):
        answer = await client.result("session/prompt", prompt(session_id, "raise"))
        updates = await until_idle(client, session_id)
    assert answer["messageId"]
    assert updates[-1]["stopReason"] == "error"
    assert updates[-1]["error"] == {
        "code": -32603,
        "message": "Internal error: the turn failed (RuntimeError)",
    }


async def test_an_empty_prompt_is_refused_without_a_turn(tmp_path: Path) -> None:
    async with v2_session(tmp_path) as (client, session_id):
        error = await client.error("session/prompt", {"sessionId": session_id, "prompt": []})
        answer = await client.result("session/prompt", prompt(session_id, "echo next"))
        updates = await until_idle(client, session_id)
    assert error["code"] == -32602
    assert error["message"] == "Invalid params: prompt: a prompt needs at least one block"
    echoed = [u for u in updates if u["sessionUpdate"] == "user_message_chunk"]
    assert [u["messageId"] for u in echoed] == [answer["messageId"]]  # the refused one: none


async def test_a_prompt_while_a_turn_runs_waits_for_it_and_runs_next(tmp_path: Path) -> None:
    # ScriptDriver takes no steering: the prompt waits (more in test_prompts_while_running).
    async with v2_session(tmp_path) as (client, session_id):
        await client.result("session/prompt", prompt(session_id, "wait"))
        await said_started(client)
        waiting = await client.send_request("session/prompt", prompt(session_id, "echo again"))
        await client.notify("session/cancel", {"sessionId": session_id})
        first = await until_idle(client, session_id)
        answer = await client.next_response(waiting)
        second = await until_idle(client, session_id)
    assert first[-1]["stopReason"] == "cancelled"
    echoed = [u["messageId"] for u in second if u["sessionUpdate"] == "user_message_chunk"]
    assert echoed == [answer["result"]["messageId"]]
    said = [u["content"] for u in second if u["sessionUpdate"] == "agent_message_chunk"]
    assert said == [{"type": "text", "text": "again"}]
    assert second[-1]["stopReason"] == "end_turn"


async def test_closing_the_session_mid_turn_ends_it_idle_cancelled_first(tmp_path: Path) -> None:
    async with v2_session(tmp_path) as (client, session_id):
        await client.result("session/prompt", prompt(session_id, "wait"))
        await said_started(client)
        closed = await client.send_request("session/close", {"sessionId": session_id})
        updates = await until_idle(client, session_id)
        answer = await client.next_response(closed)
    assert answer["result"] == {}
    assert updates[-1]["stopReason"] == "cancelled"
