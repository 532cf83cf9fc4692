"""MCP servers over HTTP named by the editor, end to end: the ACP SDK client names our HTTP
peer (``tests/mcp/peers/http_peer.py``, the MCP SDK's server side on 127.0.0.1) in
``session/new``; its tools become commands and calls, with headers passed as given and live
progress on the card. Every message the sidecar writes is checked against the ACP schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp.schema import HttpHeader, HttpMcpServer, SseMcpServer

from tests.in_process import sdk_served
from tests.mcp.over_acp import McpEditor
from tests.sdk import prompt


def texts(card: dict[str, Any]) -> str:
    return "".join(
        c["content"].get("text", "") for c in card.get("content") or () if c["type"] == "content"
    )


async def test_an_http_server_with_headers(tmp_path: Path, guarded_http_peer: str) -> None:
    editor = McpEditor()
    good = HttpMcpServer(
        type="http",
        name="web",
        url=f"{guarded_http_peer}/mcp",
        headers=[HttpHeader(name="X-Token", value="s3cret-value")],
    )
    bad = HttpMcpServer(
        type="http",
        name="nokey",
        url=f"{guarded_http_peer}/mcp",
        headers=[HttpHeader(name="X-Token", value="wrong")],
    )
    async with sdk_served(editor, store=tmp_path / "store") as (connection, wire):
        session = (
            await connection.new_session(cwd=str(tmp_path), mcp_servers=[good, bad])
        ).session_id
        await editor.until(lambda: editor.commands and editor.said)
        assert "mcp__web__echo" in editor.commands[-1]
        assert not any(name.startswith("mcp__nokey") for name in editor.commands[-1])
        told = "".join(editor.said)
        assert "nokey" in told and "s3cret-value" not in told and "wrong" not in told
        wire.cards()
        call = "/mcp__web__echo " + json.dumps({"text": "over http"})
        assert await prompt(connection, session, call) == "end_turn"
        final = wire.cards()[-1]
        assert final["status"] == "completed" and texts(final) == "over http"


async def test_progress_streams_on_the_card(tmp_path: Path, http_peer: str) -> None:
    editor = McpEditor()
    server = HttpMcpServer(type="http", name="web", url=f"{http_peer}/mcp", headers=[])
    async with sdk_served(editor, store=tmp_path / "store") as (connection, wire):
        session = (await connection.new_session(cwd=str(tmp_path), mcp_servers=[server])).session_id
        await connection.set_session_mode(session_id=session, mode_id="auto")
        wire.cards()
        assert await prompt(connection, session, '/mcp__web__slow {"steps": 3}') == "end_turn"
        cards = wire.cards()
        assert cards[-1]["status"] == "completed"
        assert len(cards) > 3, cards  # progress updates between the start and the result


async def test_an_sse_server(tmp_path: Path, sse_peer: str) -> None:
    editor = McpEditor()
    server = SseMcpServer(type="sse", name="old", url=f"{sse_peer}/sse", headers=[])
    async with sdk_served(editor, store=tmp_path / "store") as (connection, wire):
        assert wire.initialized.agent_capabilities.mcp_capabilities.sse is True
        session = (await connection.new_session(cwd=str(tmp_path), mcp_servers=[server])).session_id
        await connection.set_session_mode(session_id=session, mode_id="auto")
        wire.cards()
        call = "/mcp__old__echo " + json.dumps({"text": "over sse"})
        assert await prompt(connection, session, call) == "end_turn"
        assert texts(wire.cards()[-1]) == "over sse"
