"""What one server's tools/list can cost is bounded: tools, bytes, pages, and re-lists.

The peer is ``peers/crowd_peer.py`` (thousands of tools at once, pages, a loop of
``notifications/tools/list_changed``); its ``stats`` tool says what it was asked for.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from acp_sidecar.mcp import connection as connection_module
from acp_sidecar.mcp.listing import MAX_TOOL_BYTES, MAX_TOOLS
from acp_sidecar.mcp.servers import McpServers
from acp_sidecar.mcp.tools import mcp_tool_definitions
from tests.mcp.conftest import HOOKS, Problems, crowd_peer
from tests.mcp.test_connection import text_of

pytestmark = pytest.mark.process  # every test here starts an interpreter


async def stats(servers: McpServers) -> dict[str, Any]:
    result = await servers.connections["crowd"].call_tool("stats", {})
    counts: dict[str, Any] = json.loads(text_of(result))
    return counts


async def test_a_server_offering_more_tools_than_the_bound_gets_its_first_ones_used(
    problems: Problems,
) -> None:
    servers = await McpServers.start(
        [crowd_peer("crowd", "--tools", "1500", "--pages", "3", "--plain")],
        hooks=HOOKS,
        on_problem=problems,
    )
    try:
        connection = servers.connections["crowd"]
        names = [tool.name for tool in connection.tools]
        assert len(names) == MAX_TOOLS
        assert names[:3] == ["stats", "tool_0", "tool_1"] and names[-1] == "tool_998"
        assert connection.notes == (
            "The MCP server 'crowd' offers more than 1,000 tools; only its first 1,000 tools "
            "are used.",
        )
        assert (await stats(servers))["pages"] == 2  # the third page was never asked for
        definitions, warnings = mcp_tool_definitions(connection, taken=())
        assert len(definitions) == MAX_TOOLS and warnings == connection.notes
        assert problems == []
    finally:
        await servers.aclose()


async def test_a_tool_too_large_is_left_out_and_the_listing_stops_at_its_byte_bound(
    problems: Problems,
) -> None:
    # 100 tools of 120 KiB each: the 8 MiB of tool definitions hold 68 of them.
    servers = await McpServers.start(
        [crowd_peer("crowd", "--tools", "100", "--plain", "--describe", str(120 * 1024))],
        hooks=HOOKS,
        on_problem=problems,
    )
    try:
        connection = servers.connections["crowd"]
        assert len(connection.tools) == 69  # stats and tool_0 … tool_67
        assert connection.notes == (
            "The MCP server 'crowd' offers more than 8 MiB of tool definitions; only its "
            "first 69 tools are used.",
        )
    finally:
        await servers.aclose()
    servers = await McpServers.start(
        [crowd_peer("crowd", "--tools", "2", "--plain", "--describe", str(MAX_TOOL_BYTES))],
        hooks=HOOKS,
        on_problem=problems,
    )
    try:
        connection = servers.connections["crowd"]
        assert [tool.name for tool in connection.tools] == ["stats", "tool_0", "tool_1"]
        assert (
            connection.tools[1].schema == "its definition takes 129 KiB (at most 128 KiB is used)"
        )
        _definitions, warnings = mcp_tool_definitions(connection, taken=())
        assert warnings == tuple(
            f"The MCP server 'crowd' offers a tool 'tool_{n}' that cannot be used: its "
            "definition takes 129 KiB (at most 128 KiB is used). It is left out."
            for n in (0, 1)
        )
    finally:
        await servers.aclose()


async def test_a_listing_still_paginating_after_the_page_bound_says_so(problems: Problems) -> None:
    servers = await McpServers.start(
        [crowd_peer("crowd", "--tools", "150", "--pages", "150", "--plain")],
        hooks=HOOKS,
        on_problem=problems,
    )
    try:
        connection = servers.connections["crowd"]
        assert len(connection.tools) == 101  # stats, then one tool a page
        assert connection.notes == (
            "The MCP server 'crowd' was still listing its tools after 100 pages; the 101 "
            "tools of those pages are used.",
        )
    finally:
        await servers.aclose()


async def test_list_changed_in_a_loop_is_coalesced_into_one_relist_a_gap(
    problems: Problems, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection_module, "RELIST_GAP", 3600.0)
    changed: list[str] = []
    servers = await McpServers.start(
        [crowd_peer("crowd", "--tools", "5", "--plain", "--churn", "0.002")],
        hooks=HOOKS,
        on_problem=problems,
        on_tools_changed=changed.append,
    )
    try:
        # The first notification re-lists at once (the start's listing was the first)...
        while (counts := await stats(servers))["notified"] < 100 or counts["lists"] < 2:
            await asyncio.sleep(0.01)
        # ...and the next 99 wait for the gap's end.
        assert counts["lists"] == 2
        assert len(changed) <= 1
    finally:
        await servers.aclose()


async def test_the_sdk_validates_at_most_one_tool_past_the_bound_of_a_huge_page(
    problems: Problems, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp.client.session import ClientSession

    pages: list[int] = []
    list_tools = ClientSession.list_tools

    async def counted(self: ClientSession, **kwargs: Any) -> Any:
        page = await list_tools(self, **kwargs)
        pages.append(len(page.tools))
        return page

    monkeypatch.setattr(ClientSession, "list_tools", counted)
    servers = await McpServers.start(
        [crowd_peer("crowd", "--tools", "5000", "--plain")], hooks=HOOKS, on_problem=problems
    )
    try:
        assert len(servers.connections["crowd"].tools) == MAX_TOOLS
        # Over stdio, the transport drops what no listing can use before the SDK validates
        # it (on the event loop): one tool more than the bound, so the listing knows.
        assert pages == [MAX_TOOLS + 1]
    finally:
        await servers.aclose()
