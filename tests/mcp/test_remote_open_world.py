"""A tool reached over HTTP or SSE reaches outside the machine, whatever its annotations say:
in ``ask`` mode it is asked for even when it declares itself read-only and closed-world (what
it is sent leaves the machine); the same tool over stdio runs unasked.

In process (``served()``, the console driver); the peers are ours: the MCP SDK's server side
over stdio and over streamable HTTP / SSE on 127.0.0.1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from tests.mcp.conftest import peer
from tests.server.wire import WireClient, served


def stdio_server() -> dict[str, Any]:
    config = peer("near", "serve")
    return {"name": "near", "command": config.command, "args": list(config.args), "env": []}


async def call(client: WireClient, session: str, command: str) -> list[dict[str, Any]]:
    """Run ``command``; the permission requests it made (each answered "allow once")."""
    asked: list[dict[str, Any]] = []
    prompt = await client.start_prompt(session, command)
    while True:
        message = await client.receive(30)
        if message.get("method") == "session/request_permission":
            asked.append(message["params"])
            await client.respond(
                message["id"], {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
            )
        elif message.get("method") == "session/update":
            client.updates.append(message)
        else:
            assert message["id"] == prompt, message
            assert message["result"]["stopReason"] == "end_turn"
            return asked


async def test_a_remote_tool_declared_closed_world_is_asked_for(
    tmp_path: Path, http_peer: str, sse_peer: str
) -> None:
    servers = [
        stdio_server(),
        {"type": "http", "name": "web", "url": f"{http_peer}/mcp", "headers": []},
        {"type": "sse", "name": "old", "url": f"{sse_peer}/sse", "headers": []},
    ]
    sidecar = AcpServer(tools=ToolsProvider(builtins=False, entry_points=False))
    async with served(sidecar) as (client, _server):
        await client.initialize()
        params = {"cwd": str(tmp_path), "mcpServers": servers}
        new = await client.next_response(await client.send_request("session/new", params), 30)
        session = new["result"]["sessionId"]
        assert await call(client, session, "/mcp__near__peek") == []
        for name in ("web", "old"):
            [asked] = await call(client, session, f"/mcp__{name}__peek")
            assert asked["toolCall"]["kind"] == "fetch"
