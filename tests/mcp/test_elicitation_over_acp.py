"""A server's question during a call, as the editor gets it: ``elicitation/create`` naming
the session and the tool call, its form in ACP's schema (legacy ``enumNames`` as ``oneOf``),
the user's answer back to the server. In process (``served()``, the console driver); every
message the sidecar writes is checked against the ACP schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from tests.mcp.conftest import asking_peer
from tests.server.wire import served

pytestmark = pytest.mark.process  # every test here starts an interpreter

LEGACY = {
    "mode": "form",
    "message": "Pick a colour",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "color": {"type": "string", "enum": ["r", "g"], "enumNames": ["Red", "Green"]}
        },
    },
}


async def test_a_question_during_a_call_names_its_call_and_has_titled_options(
    tmp_path: Path,
) -> None:
    config = asking_peer("asker")
    server: dict[str, Any] = {
        "name": "asker",
        "command": config.command,
        "args": list(config.args),
        "env": [],
    }
    sidecar = AcpServer(tools=ToolsProvider(builtins=False, entry_points=False))
    async with served(sidecar) as (client, _server):
        await client.initialize(elicitation={"form": {}, "url": {}})
        params = {"cwd": str(tmp_path), "mcpServers": [server]}
        new = await client.next_response(await client.send_request("session/new", params), 30)
        session = new["result"]["sessionId"]
        await client.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
        prompt = await client.start_prompt(
            session, "/mcp__asker__ask " + json.dumps({"requests": [LEGACY]})
        )
        request = await client.next_agent_request(30)
        assert request["method"] == "elicitation/create"
        [call_id] = {
            u["params"]["update"]["toolCallId"]
            for u in client.updates
            if u["params"]["update"]["sessionUpdate"] == "tool_call"
        }
        asked = request["params"]
        assert asked["sessionId"] == session and asked["toolCallId"] == call_id
        assert asked["requestedSchema"]["properties"]["color"] == {
            "type": "string",
            "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}],
        }
        await client.respond(request["id"], {"action": "accept", "content": {"color": "g"}})
        answer = await client.next_response(prompt, 30)
        assert answer["result"]["stopReason"] == "end_turn"
        final = [
            u["params"]["update"]
            for u in client.updates
            if u["params"]["update"].get("status") == "completed"
        ][-1]
        text = final["content"][0]["content"]["text"]
        assert json.loads(text) == [{"action": "accept", "content": {"color": "g"}}]
