"""The model driver with a session's MCP servers, end to end: ``acp-sidecar --model`` (in
process, every message checked against the ACP schema) offers the session's MCP tools to
the scripted OpenAI-compatible endpoint and runs the one it calls; a session without
servers offers only the built-in tools."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.agent.model.fake_openai import ScriptedOpenAI, answer, calling, tool_call
from tests.in_process import serving
from tests.mcp.over_acp import PEER

pytestmark = pytest.mark.process  # every test here starts an interpreter


async def test_the_model_is_offered_and_calls_the_sessions_mcp_tools(tmp_path: Path) -> None:
    state = tmp_path / "peer"
    state.mkdir()
    server = {"name": "peer", "command": sys.executable, "args": [str(PEER), str(state)], "env": []}
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(
            calling(tool_call(0, "call_1", "mcp__peer__echo", '{"text": "from the model"}')),
            answer("Echoed."),
            answer("No servers here."),
        )
        async with serving(
            "--model",
            "test-model",
            "--base-url",
            endpoint.base_url,
            "--store",
            str(tmp_path / "store"),
            env={"OPENAI_API_KEY": "sk-test"},
        ) as (wire, _server):
            await wire.initialize()
            new = {"cwd": str(tmp_path), "mcpServers": [server]}
            answered = await wire.next_response(await wire.send_request("session/new", new), 20)
            session = answered["result"]["sessionId"]
            response = await wire.next_response(await wire.start_prompt(session, "echo it"), 20)
            assert response["result"]["stopReason"] == "end_turn"
            offered = [t["function"]["name"] for t in endpoint.requests[0].body["tools"]]
            assert "mcp__peer__echo" in offered and "read" in offered
            assert endpoint.requests[1].messages[-1] == {
                "role": "tool",
                "tool_call_id": "call_1",
                "content": "from the model",
            }

            plain = await wire.new_session(str(tmp_path))
            await wire.next_response(await wire.start_prompt(plain, "anything?"), 20)
            offered = [t["function"]["name"] for t in endpoint.requests[2].body["tools"]]
            assert "read" in offered and not any(n.startswith("mcp__") for n in offered)


async def test_an_mcp_tools_card_carries_its_registry_name_live_and_on_replay(
    tmp_path: Path,
) -> None:
    state = tmp_path / "peer"
    state.mkdir()
    server = {"name": "peer", "command": sys.executable, "args": [str(PEER), str(state)], "env": []}
    store = str(tmp_path / "store")
    model = ("--model", "test-model", "--store", store)
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(
            calling(tool_call(0, "call_1", "mcp__peer__echo", '{"text": "named"}')),
            answer("Echoed."),
        )
        async with serving(
            *model, "--base-url", endpoint.base_url, env={"OPENAI_API_KEY": "sk-test"}
        ) as (wire, _server):
            await wire.initialize()
            new = {"cwd": str(tmp_path), "mcpServers": [server]}
            answered = await wire.next_response(await wire.send_request("session/new", new), 20)
            session = answered["result"]["sessionId"]
            await wire.next_response(await wire.start_prompt(session, "echo it"), 20)
            live = [u["params"]["update"] for u in wire.updates]
        async with serving("--store", store) as (wire, _server):
            await wire.initialize()
            load = {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
            await wire.next_response(await wire.send_request("session/load", load), 20)
            replayed = [u["params"]["update"] for u in wire.updates]
    for updates in (live, replayed):
        cards = [u for u in updates if u["sessionUpdate"] == "tool_call"]
        assert [(c["toolCallId"], c["name"]) for c in cards] == [("call_1", "mcp__peer__echo")]
