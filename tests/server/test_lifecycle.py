"""Connection lifecycle: initialize, authenticate, session/new, and the default driver."""

from __future__ import annotations

import pytest

from acp_sidecar import __version__
from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.protocol import INVALID_PARAMS
from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.handlers import MCP_SSE
from tests.server.wire import WireClient, served


@pytest.mark.parametrize("asked", [1, 2, 65535, 0])
async def test_initialize_answers_version_1_whatever_is_asked(wire: WireClient, asked: int) -> None:
    result = await wire.result("initialize", {"protocolVersion": asked})
    assert result["protocolVersion"] == 1


async def test_initialize_advertises_only_what_is_implemented(wire: WireClient) -> None:
    result = await wire.initialize()
    capabilities = result["agentCapabilities"]
    assert capabilities["loadSession"] is False
    # MCP over HTTP is implemented; SSE as far as the MCP package does it cleanly.
    from acp_sidecar.mcp.config import SSE_SUPPORTED

    assert capabilities["mcpCapabilities"] == {"http": True, "sse": SSE_SUPPORTED}
    assert MCP_SSE == SSE_SUPPORTED
    assert "list" not in capabilities.get("sessionCapabilities", {})
    # The test driver accepts images and embedded context, not audio.
    assert capabilities["promptCapabilities"] == {
        "image": True,
        "audio": False,
        "embeddedContext": True,
    }
    assert [m["id"] for m in result["authMethods"]] == ["configure"]  # tests/server/test_auth.py
    assert result["agentInfo"]["name"] == "acp-sidecar"
    assert result["agentInfo"]["version"] == __version__


async def test_initialize_keeps_the_client_capabilities(
    connection: tuple[WireClient, AcpServer],
) -> None:
    wire, server = connection
    await wire.initialize(fs={"readTextFile": True}, terminal=True, _meta={"terminal_output": True})
    assert server.client_capabilities.fs.read_text_file is True
    assert server.client_capabilities.fs.write_text_file is False
    assert server.client_capabilities.terminal is True
    assert server.client_capabilities.meta == {"terminal_output": True}


async def test_authenticate_succeeds(ready: WireClient) -> None:
    assert await ready.result("authenticate", {"methodId": "configure"}) == {}


async def test_session_new_returns_fresh_ids(ready: WireClient) -> None:
    ids = {await ready.new_session() for _ in range(5)}
    assert len(ids) == 5


async def test_session_new_refuses_a_relative_cwd(ready: WireClient) -> None:
    error = await ready.error("session/new", {"cwd": "work/dir", "mcpServers": []})
    assert error["code"] == INVALID_PARAMS
    assert "cwd" in error["message"] and "absolute" in error["message"]


async def test_prompt_content_the_driver_does_not_accept_is_refused(ready: WireClient) -> None:
    session = await ready.new_session()
    audio = {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
    error = await ready.error(
        "session/prompt",
        {"sessionId": session, "prompt": [{"type": "text", "text": "echo"}, audio]},
    )
    assert error["code"] == INVALID_PARAMS
    assert "prompt/1" in error["message"] and "audio" in error["message"]


async def test_the_default_driver_is_the_tool_console() -> None:
    tools = ToolsProvider(builtins=False, entry_points=False)
    async with served(AcpServer(tools=tools)) as (wire, _server):
        result = await wire.initialize()
        assert result["agentCapabilities"]["promptCapabilities"] == {
            "image": False,
            "audio": False,
            "embeddedContext": True,  # @-mentions the editor embeds are accepted
        }
        session = await wire.new_session()
        response = await wire.next_response(await wire.start_prompt(session, "hello"))
        assert response["result"] == {"stopReason": "end_turn"}
        assert "console for the sidecar's tools" in wire.texts()[0]
        assert wire.updates[0]["params"]["sessionId"] == session
