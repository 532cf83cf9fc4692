"""Against ``@modelcontextprotocol/server-everything`` (node, through ``npx``): text, image and
resource results, progress from a long-running operation, cancel, roots, elicitation, and no
process of its tree (npx, a shell, node) left after ``aclose``.

One server for the whole walk: it does not exit when its stdin closes, so each stop costs the
2 s grace (the SDK's own) before the group is signalled.
"""

from __future__ import annotations

import asyncio
import json

import mcp_types as types
import pytest

from acp_sidecar.mcp.client_side import ClientSideHooks, ElicitationAnswer, ElicitationRequest
from acp_sidecar.mcp.config import StdioServerConfig
from acp_sidecar.mcp.processes import group_members
from acp_sidecar.mcp.servers import McpServers
from tests.mcp.conftest import Problems
from tests.mcp.test_connection import text_of


# The first run on a machine fetches the package (the fixture allows 240 s for it, then
# skips); the suite's 60 s per-test bound would turn a slow registry into a failure.
@pytest.mark.timeout(300)
async def test_server_everything_over_stdio_through_npx(
    everything: StdioServerConfig, problems: Problems
) -> None:
    elicited: list[str] = []

    async def elicit(request: ElicitationRequest) -> ElicitationAnswer:
        elicited.append(request.message)
        return ElicitationAnswer(action="decline")

    hooks = ClientSideHooks(roots=lambda: ["/srv/workspace"], elicit=elicit)
    servers = await McpServers.start([everything], hooks=hooks, on_problem=problems)
    connection = servers.connections["everything"]
    group = connection.process_group
    seen: list[tuple[float, float | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total))

    try:
        names = {tool.name for tool in connection.tools}
        assert {
            "echo",
            "get-tiny-image",
            "get-resource-links",
            "trigger-long-running-operation",
        } <= names
        assert "trigger-sampling-request" not in names  # offered only to clients that sample

        assert text_of(await connection.call_tool("echo", {"message": "hi"})) == "Echo: hi"
        image = await connection.call_tool("get-tiny-image", {})
        assert any(
            isinstance(block, types.ImageContent) and block.mime_type == "image/png"
            for block in image.content
        )
        links = await connection.call_tool("get-resource-links", {"count": 2})
        assert sum(isinstance(block, types.ResourceLink) for block in links.content) == 2
        embedded = await connection.call_tool(
            "get-resource-reference", {"resourceType": "Text", "resourceId": 1}
        )
        assert any(isinstance(block, types.EmbeddedResource) for block in embedded.content)

        await connection.call_tool(
            "trigger-long-running-operation", {"duration": 0.4, "steps": 4}, progress=progress
        )
        assert [total for _, total in seen] == [4, 4, 4, 4]
        assert [value for value, _ in seen] == sorted(value for value, _ in seen)
        call = asyncio.create_task(
            connection.call_tool("trigger-long-running-operation", {"duration": 30, "steps": 30})
        )
        await asyncio.sleep(0.3)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert (
            text_of(await connection.call_tool("echo", {"message": "still here"}))
            == "Echo: still here"
        )

        assert "file:///srv/workspace" in text_of(await connection.call_tool("get-roots-list", {}))
        declined = await connection.call_tool("trigger-elicitation-request", {})
        assert len(elicited) == 1
        assert "decline" in json.dumps(declined.model_dump(mode="json")).lower()
        assert group is not None and group_members(group)
    finally:
        await servers.aclose()
    assert problems == []
    assert group is not None and group_members(group) == []
