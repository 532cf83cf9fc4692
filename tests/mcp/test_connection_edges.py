"""Edges of the connection layer: URLs the parser never saw, long server errors, a
cancelled ``aclose``, and ``tools/list_changed`` that changes nothing."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from acp_sidecar.mcp.config import HttpServerConfig, SseServerConfig, StdioServerConfig
from acp_sidecar.mcp.errors import McpCallError, describe_failure
from acp_sidecar.mcp.processes import group_members
from acp_sidecar.mcp.servers import McpServers
from tests.mcp.conftest import HOOKS, PEERS, Problems, peer

LIMIT = 300
"""The longest failure line a server's text may make (errors.one_line)."""


@pytest.mark.parametrize(
    "url", ["http://u:pw@h:99999/x", "http://u:pw@h:abc/x", "http://u:pw@[::1/x", "http://h:-1/"]
)
def test_a_failure_line_for_an_unparsable_url_neither_raises_nor_shows_it(url: str) -> None:
    # Configs made without parse_mcp_servers (or by a future parser) must not crash here.
    for config in (
        HttpServerConfig(name="h", url=url, headers=(("Authorization", "Bearer s3cret"),)),
        SseServerConfig(name="h", url=url, headers=(("Authorization", "Bearer s3cret"),)),
    ):
        line = describe_failure(RuntimeError(f"POST {url} failed, sent Bearer s3cret"), config)
        assert line.startswith("RuntimeError: POST ")
        assert "pw" not in line and "s3cret" not in line


def test_a_server_error_text_becomes_one_short_line() -> None:
    config = HttpServerConfig(name="h", url="http://h/mcp")
    text = "first line\nsecond\tline\n" + "x" * 10_000
    line = describe_failure(MCPError(code=7, message=text), config)
    assert "\n" not in line and "\t" not in line
    assert line.startswith("it answered an error: first line second line x")
    assert len(line) <= LIMIT + len("it answered an error:  (code 7)")
    assert line.endswith("(code 7)")


@pytest.mark.process
async def test_a_call_error_from_the_server_is_one_short_line(problems: Problems) -> None:
    servers = await McpServers.start([peer("p", "serve")], hooks=HOOKS, on_problem=problems)
    try:
        text = "boom\n  Traceback (most recent call last):\n" + "  frame\n" * 2_000
        with pytest.raises(McpCallError) as caught:
            await servers.connections["p"].call_tool("fail", {"text": text})
        message = str(caught.value)
        assert message.startswith("MCP server 'p' answered an error: boom Traceback (most")
        assert "\n" not in message
        assert len(message) <= LIMIT + 80
        assert message.endswith("(code 7)")
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_cancelling_a_task_awaiting_aclose_cancels_it_and_aclose_can_be_awaited_again(
    problems: Problems, tmp_path: Path
) -> None:
    # A stubborn server takes seconds to end (SIGTERM ignored): aclose is still waiting
    # when its caller is cancelled.
    servers = await McpServers.start(
        [peer("st", "stubborn", str(tmp_path / "pid"))], hooks=HOOKS, on_problem=problems
    )
    connection = servers.connections["st"]
    pgid = connection.process_group
    assert pgid is not None
    for close in (connection.aclose, servers.aclose):
        closer = asyncio.create_task(close())
        await asyncio.sleep(0.2)
        assert not closer.done()
        closer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closer
        assert closer.cancelled()
    # The connection kept winding down; awaiting aclose again (idempotent) sees it through.
    await connection.aclose()
    await servers.aclose()
    assert group_members(pgid) == []
    await connection.aclose()


@pytest.mark.process
async def test_list_changed_that_changes_nothing_does_not_call_on_tools_changed(
    problems: Problems,
) -> None:
    changed: list[str] = []
    servers = await McpServers.start(
        [peer("p", "serve")], hooks=HOOKS, on_problem=problems, on_tools_changed=changed.append
    )
    try:
        connection = servers.connections["p"]
        before = connection.tools
        assert await connection.call_tool("nudge", {"n": 50})
        await asyncio.sleep(0.5)
        assert connection.tools == before
        assert changed == []
        # A real change is still reported, once per change.
        await connection.call_tool("grow", {})
        for _ in range(300):
            if changed:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        assert changed == ["p"]
        assert "extra" in {tool.name for tool in connection.tools}
    finally:
        await servers.aclose()


async def test_an_invalid_line_from_a_server_is_a_short_warning(
    problems: Problems, caplog: pytest.LogCaptureFixture
) -> None:
    script = PEERS / "stdio_peer.py"
    garbage = "not json " + "y" * 10_000
    config = StdioServerConfig(
        name="noisy",
        command="/bin/sh",
        args=(
            "-c",
            f'echo "{garbage}"; echo "{{}}"; exec "$0" "$1" serve',
            sys.executable,
            str(script),
        ),
    )
    caplog.set_level(logging.WARNING, logger="acp_sidecar.mcp.connection")
    servers = await McpServers.start([config], hooks=HOOKS, on_problem=problems)
    try:
        assert "noisy" in servers.connections  # it serves on after the invalid lines
        await servers.connections["noisy"].call_tool("noop", {})
    finally:
        await servers.aclose()
    warnings = [r.getMessage() for r in caplog.records if "invalid line" in r.getMessage()]
    assert len(warnings) == 2, warnings
    for warning in warnings:
        assert warning.startswith("MCP server 'noisy' sent an invalid line: ")
        assert "\n" not in warning and len(warning) <= 400
