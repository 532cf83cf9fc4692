"""A server's unusable tools are told a bounded number of times: a few one by one, then a
line saying there are more — at the start and while the server re-lists in a loop.

In process (``served()``, the console driver, which sends the commands again whenever a
session's tools change), a client that shows no notices: warnings arrive as agent messages
and are kept in the session's log as notices.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.mcp import connection as connection_module
from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.mcp_session import TOLD_PER_SERVER
from tests.mcp.test_listing_off_loop import crowd
from tests.server.wire import WireClient, served

pytestmark = pytest.mark.process  # every test here starts an interpreter


def warnings_told(client: WireClient) -> list[str]:
    return [
        paragraph
        for text in client.texts()
        for paragraph in text.split("\n\n")
        if "MCP server 'crowd'" in paragraph
    ]


def commands_updates(client: WireClient) -> int:
    return sum(
        u["params"]["update"]["sessionUpdate"] == "available_commands_update"
        for u in client.updates
    )


async def test_many_unusable_tools_are_told_a_few_at_a_time_then_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(connection_module, "RELIST_GAP", 0.0)
    monkeypatch.setattr(connection_module, "RELIST_GAP_MAX", 0.0)
    caplog.set_level(logging.WARNING, logger="acp_sidecar.server.mcp_session")
    server = crowd(tmp_path, 30, "--bad", "25", "--plain", "--churn", "0.002")
    sidecar = AcpServer(tools=ToolsProvider(builtins=False, entry_points=False))
    async with served(sidecar) as (client, _server):
        await client.initialize()
        await client.result("session/new", {"cwd": str(tmp_path), "mcpServers": [server]})
        # The tools change (one bad tool renamed) on every re-list: each sends the commands.
        while commands_updates(client) < 30:
            await client.next_update()
        told = warnings_told(client)
        assert len(told) == TOLD_PER_SERVER + 1
        assert told[:3] == [
            f"The MCP server 'crowd' offers a tool 'tool_{n}' that cannot be used: its "
            "inputSchema is not a valid JSON Schema: 'no-such-type' is not valid under any of "
            "the given schemas (at inputSchema/properties/x/type). It is left out."
            for n in range(3)
        ]
        assert told[-1] == (
            "The MCP server 'crowd' has more tools that cannot be used (15 now); they are not "
            "told one by one."
        )
    logged = [r.getMessage() for r in caplog.records]
    assert sum("cannot be used" in line for line in logged) == TOLD_PER_SERVER
    assert 1 <= sum("not told" in line for line in logged) <= 20
