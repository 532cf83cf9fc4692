"""MCP servers named by a v2 client, in process (the MCP servers are our test peers, real
subprocesses): a ``stdio`` server on ``session/new`` draws v2 cards and asks in v2's dialog; an
``http`` one named on ``session/resume`` serves the resumed session; a server's question during
a call is v2's ``elicitation/create``, with the session ``requires_action`` until it is
answered, or abandoned with its call (cancelled alone, the turn ``running`` on; with the
turn, ``idle``); a transport v2 does not offer is ``-32602``. Every message is judged by the v2
schema.

Spec: the vendored ``tests/fixtures/acp/v2/schema.json`` (``McpServer``, ``McpServerStdio``,
``McpServerHttp``, ``CreateElicitationRequest``, ``StateUpdate``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.store import SessionStore
from tests.agent.model.fake_openai import Reply, say, stop
from tests.agent.model.fake_openai import tool_call as model_call
from tests.conformance.v2.fold import fold_v2
from tests.conformance.v2.recorded import record_v2, resume_params, until_answer, v2_client
from tests.conformance.v2.test_prompt_lifecycle import CLIENT_INFO, prompt, until_idle
from tests.conformance.v2.test_unstable import on_model
from tests.in_process import cli_server, kept_process_state
from tests.mcp.conftest import PEERS, http_peer
from tests.mcp.over_acp import PEER
from tests.server.subagent_harness import ENV, RoutedOpenAI
from tests.server.wire import WireClient, served

pytestmark = pytest.mark.process  # every test here starts an MCP server's interpreter

__all__ = ["http_peer"]  # the fixture, used by name

MCP_START = 30.0
"""Seconds a request naming servers may take to answer: it starts them (a hang guard)."""


def stdio_peer(state: Path) -> dict[str, Any]:
    """Our MCP test server, as a v2 ``McpServerStdio`` (``args`` given, ``env`` left out)."""
    state.mkdir(parents=True, exist_ok=True)
    return {
        "type": "stdio",
        "name": "peer",
        "command": sys.executable,
        "args": [str(PEER), str(state)],
    }


async def created(client: WireClient, cwd: Path, servers: list[dict[str, Any]]) -> str:
    params = {"cwd": str(cwd), "mcpServers": servers}
    answer = await client.next_response(await client.send_request("session/new", params), MCP_START)
    session_id: str = answer["result"]["sessionId"]
    return session_id


async def turn(client: WireClient, session_id: str, text: str) -> list[dict[str, Any]]:
    await client.result("session/prompt", prompt(session_id, text))
    return await until_idle(client, session_id)


def card_of(updates: list[dict[str, Any]]) -> Any:
    [block] = [b for b in fold_v2({"update": u} for u in updates) if hasattr(b, "card")]
    return block.card


def text_of(card: Any) -> str:
    return "".join(c["content"].get("text", "") for c in card.content if c["type"] == "content")


def states(updates: list[dict[str, Any]]) -> list[str]:
    return [u["state"] for u in updates if u["sessionUpdate"] == "state_update"]


async def test_a_stdio_server_draws_v2_cards_and_asks_in_v2(tmp_path: Path) -> None:
    state = tmp_path / "peer"
    async with v2_client(tmp_path / "store") as (client, _):
        session_id = await created(client, tmp_path, [stdio_peer(state)])
        echoed = await turn(client, session_id, '/mcp__peer__echo {"text": "hi"}')
        card = card_of(echoed)
        assert card.status == "completed" and text_of(card) == "hi"
        assert card.raw_input == {"text": "hi"}
        assert states(echoed) == ["running", "idle"]  # read-only: never asked

        await client.result("session/prompt", prompt(session_id, '/mcp__peer__touch {"name": "m"}'))
        request = await client.next_agent_request(MCP_START)
        assert request["method"] == "session/request_permission"
        subject = request["params"]["subject"]
        assert subject["type"] == "tool_call"
        [allow] = [o for o in request["params"]["options"] if o["kind"] == "allow_once"]
        outcome = {"outcome": "selected", "optionId": allow["optionId"]}
        await client.respond(request["id"], {"outcome": outcome})
        touched = await until_idle(client, session_id)
    card = card_of(touched)
    assert card.tool_call_id == subject["toolCall"]["toolCallId"]
    assert card.status == "completed" and (state / "m").exists()
    assert states(touched) == ["running", "requires_action", "running", "idle"]


async def test_an_http_server_named_on_resume_serves_the_resumed_session(
    tmp_path: Path, http_peer: str
) -> None:
    store = tmp_path / "store"
    session_id = await record_v2(store, tmp_path, [])
    server = {"type": "http", "name": "web", "url": f"{http_peer}/mcp", "headers": []}
    async with v2_client(store) as (client, _):
        params = resume_params(session_id, tmp_path, mcpServers=[server])
        answer = await client.next_response(
            await client.send_request("session/resume", params), MCP_START
        )
        commands = {c["name"] for c in answer["result"]["availableCommands"]}
        assert "mcp__web__echo" in commands  # the answer lists the server's tools already
        auto = {"sessionId": session_id, "configId": "mode", "type": "id", "value": "auto"}
        await client.result("session/set_config_option", auto)
        client.updates.clear()  # the resume's snapshot: not this turn's
        card = card_of(await turn(client, session_id, '/mcp__web__echo {"text": "over http"}'))
    assert card.status == "completed" and text_of(card) == "over http"


FORM = {
    "mode": "form",
    "message": "Your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}


async def test_a_question_during_a_call_is_v2_elicitation_and_blocks_the_turn(
    tmp_path: Path,
) -> None:
    asker = {
        "type": "stdio",
        "name": "asker",
        "command": sys.executable,
        "args": [str(PEERS / "asking_peer.py")],
        "env": [],
    }
    async with v2_client(tmp_path / "store", elicitation={"form": {}}) as (client, _):
        session_id = await created(client, tmp_path, [asker])
        auto = {"sessionId": session_id, "configId": "mode", "type": "id", "value": "auto"}
        await client.result("session/set_config_option", auto)
        ask = "/mcp__asker__ask " + json.dumps({"requests": [FORM]})
        await client.result("session/prompt", prompt(session_id, ask))
        request = await client.next_agent_request(MCP_START)
        before = [m["params"]["update"] for m in client.updates]
        assert request["method"] == "elicitation/create"
        await client.respond(request["id"], {"action": "accept", "content": {"name": "Ada"}})
        after = await until_idle(client, session_id)
    asked = request["params"]
    call_id = card_of(before).tool_call_id
    assert asked["sessionId"] == session_id and asked["toolCallId"] == call_id
    assert asked["mode"] == "form" and asked["requestedSchema"] == FORM["requestedSchema"]
    assert states(before)[-1] == "requires_action"  # while the question is open
    assert states(after) == ["running", "requires_action", "running", "idle"]  # the whole turn
    assert json.loads(text_of(card_of(after))) == [{"action": "accept", "content": {"name": "Ada"}}]


ASKER = {
    "type": "stdio",
    "name": "asker",
    "command": sys.executable,
    "args": [str(PEERS / "asking_peer.py")],
    "env": [],
}
"""Our MCP test server whose ``ask`` tool asks the client its ``requests`` during the call."""


async def test_a_call_cancelled_alone_during_a_question_leaves_the_turn_running(
    tmp_path: Path,
) -> None:
    endpoint = RoutedOpenAI()
    asked = json.dumps({"requests": [FORM]})
    endpoint.route(
        "ask",
        Reply([model_call(0, "call_q", "mcp__asker__ask", asked), stop("tool_calls")]),
        Reply([*say("Went on."), stop()]),
    )
    with kept_process_state(env=ENV):
        async with (
            endpoint,
            served(cli_server("--acp-v2", *on_model(endpoint, tmp_path / "s"))) as (client, _),
        ):
            client.version, client.unstable = 2, True
            caps = {"elicitation": {"form": {}}}
            params = {"protocolVersion": 2, "info": CLIENT_INFO, "capabilities": caps}
            await client.result("initialize", params)
            client.initialized = True
            session_id = await created(client, tmp_path, [ASKER])
            auto = {"sessionId": session_id, "configId": "mode", "type": "id", "value": "auto"}
            await client.result("session/set_config_option", auto)
            await client.result("session/prompt", prompt(session_id, "ask"))
            request = await client.next_agent_request(MCP_START)
            assert request["method"] == "elicitation/create"
            cancel = {"sessionId": session_id, "toolCallId": request["params"]["toolCallId"]}
            assert await client.result("tool_call/cancel", cancel) == {}
            ended = await until_idle(client, session_id)
            withdrawn = [m for m in client.received if m.get("method") == "$/cancel_request"]
    assert [m["params"] for m in withdrawn] == [{"requestId": request["id"]}]
    final = [u for u in ended if u["sessionUpdate"] == "tool_call_update" and "status" in u]
    assert final[-1]["toolCallId"] == "call_q" and final[-1]["status"] == "cancelled"
    said = next(i for i, u in enumerate(ended) if u["sessionUpdate"] == "agent_message_chunk")
    # The model's next step is the turn going on: "running" is reported before it.
    assert states(ended[:said])[-2:] == ["requires_action", "running"]
    assert states(ended[said:]) == ["idle"] and ended[-1]["stopReason"] == "end_turn"


async def test_a_turn_cancelled_during_a_question_ends_idle_and_reports_nothing_after(
    tmp_path: Path,
) -> None:
    async with v2_client(tmp_path / "store", elicitation={"form": {}}) as (client, _):
        session_id = await created(client, tmp_path, [ASKER])
        auto = {"sessionId": session_id, "configId": "mode", "type": "id", "value": "auto"}
        await client.result("session/set_config_option", auto)
        ask = "/mcp__asker__ask " + json.dumps({"requests": [FORM]})
        await client.result("session/prompt", prompt(session_id, ask))
        request = await client.next_agent_request(MCP_START)
        assert request["method"] == "elicitation/create"
        await client.notify("session/cancel", {"sessionId": session_id})
        ended = await until_idle(client, session_id)
        await client.respond(request["id"], {"action": "cancel"})  # the editor's dialog closes
        await client.result("session/list", {})  # a round trip: the answer was read
        later = [m for m in client.updates if m.get("method") == "session/update"]
    assert states(ended)[-2:] == ["requires_action", "idle"]
    assert ended[-1]["stopReason"] == "cancelled"
    assert [m for m in later if m["params"]["update"]["sessionUpdate"] == "state_update"] == []


@pytest.mark.parametrize(
    ("entry", "shown"),
    [
        ({"type": "sse", "name": "s", "url": "http://127.0.0.1:1/sse", "headers": []}, "'sse'"),
        ({"type": "acp", "name": "a", "id": "x"}, "'acp'"),
        ({"name": "bare", "command": "/bin/true", "args": []}, "missing"),
    ],
)
async def test_a_transport_v2_does_not_offer_is_invalid_params(
    tmp_path: Path, entry: dict[str, Any], shown: str
) -> None:
    store = tmp_path / "store"
    session_id = await record_v2(store, tmp_path, [])
    expected = {
        "code": -32602,
        "message": f"Invalid params: mcpServers[1].type: {shown} is not a transport this agent "
        "serves (stdio, http)",
    }
    servers = [stdio_peer(tmp_path / "peer"), entry]
    stored = SessionStore(store).list().sessions
    async with v2_client(store) as (client, server):
        new = await client.error("session/new", {"cwd": str(tmp_path), "mcpServers": servers})
        params = resume_params(session_id, tmp_path, mcpServers=servers)
        before, resumed = await until_answer(
            client, await client.send_request("session/resume", params)
        )
        forked = await client.error(
            "session/fork", resume_params(session_id, tmp_path, mcpServers=servers)
        )
        assert server.sessions == {}
    assert new == expected and resumed["error"] == expected and forked == expected
    assert before == []
    assert SessionStore(store).list().sessions == stored  # nothing was forked
