"""One connection: real servers started as a user would, our peers for the rest.

Reference servers: ``mcp-server-time`` and ``mcp-server-git`` (PyPI, by their console
scripts). Our peers (``peers/``): stdio, streamable HTTP and SSE on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path

import mcp_types as types
import pytest

from acp_sidecar.mcp.config import HttpServerConfig, SseServerConfig, StdioServerConfig
from acp_sidecar.mcp.connection import server_environment
from acp_sidecar.mcp.errors import McpCallError, McpServerGone
from acp_sidecar.mcp.servers import McpServers
from tests.mcp.conftest import HOOKS, Problems, listing_peer, peer, reference_server


def text_of(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def cancel_marker(state: Path) -> str:
    """What the peer wrote to ``state/cancelled`` when its slow call was cancelled (it writes
    ``yes`` once told by ``notifications/cancelled``); the wait is only a hang guard, and it
    reads on until the write is whole (the file exists a moment before it holds anything)."""
    marker = state / "cancelled"
    for _ in range(3000):
        if marker.exists() and (said := marker.read_text()):
            return said
        await asyncio.sleep(0.01)
    return marker.read_text() if marker.exists() else ""


@pytest.mark.process
async def test_mcp_server_time_lists_its_tools_and_answers_a_call(problems: Problems) -> None:
    servers = await McpServers.start(
        [reference_server("mcp-server-time")], hooks=HOOKS, on_problem=problems
    )
    try:
        assert problems == []
        time_server = servers.connections["time"]
        assert {tool.name for tool in time_server.tools} == {"get_current_time", "convert_time"}
        result = await time_server.call_tool("get_current_time", {"timezone": "UTC"})
        assert result.is_error is not True
        assert json.loads(text_of(result))["timezone"] == "UTC"
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_mcp_server_git_reads_a_temporary_repository(
    problems: Problems, git_repo: Path
) -> None:
    config = reference_server("mcp-server-git", "--repository", str(git_repo))
    servers = await McpServers.start([config], hooks=HOOKS, on_problem=problems)
    try:
        assert problems == []
        git = servers.connections["git"]
        assert "git_log" in {tool.name for tool in git.tools}
        result = await git.call_tool("git_log", {"repo_path": str(git_repo)})
        assert "first" in text_of(result)
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_a_server_error_answer_is_an_mcp_call_error(problems: Problems) -> None:
    servers = await McpServers.start(
        [reference_server("mcp-server-time")], hooks=HOOKS, on_problem=problems
    )
    try:
        time_server = servers.connections["time"]
        try:
            result = await time_server.call_tool("get_current_time", {"timezone": "Not/AZone"})
        except McpCallError as error:
            assert "'time'" in str(error)
        else:
            assert result.is_error is True
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_progress_reaches_the_callback_in_order(problems: Problems) -> None:
    servers = await McpServers.start([peer("p", "serve")], hooks=HOOKS, on_problem=problems)
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, total, message))

    try:
        result = await servers.connections["p"].call_tool("slow", {"steps": 3}, progress=progress)
        assert text_of(result) == "done"
        assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_cancelling_the_awaiting_task_sends_notifications_cancelled(
    problems: Problems, tmp_path: Path
) -> None:
    servers = await McpServers.start(
        [peer("p", "serve", str(tmp_path))], hooks=HOOKS, on_problem=problems
    )
    started = asyncio.Event()

    async def progress(value: float, total: float | None, message: str | None) -> None:
        started.set()

    try:
        connection = servers.connections["p"]
        call = asyncio.create_task(connection.call_tool("slow", {"steps": 100}, progress=progress))
        await asyncio.wait_for(started.wait(), 10)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # the server's handler was interrupted by the notification
        assert await cancel_marker(tmp_path) == "yes"
        # The connection is still usable afterwards.
        assert text_of(await connection.call_tool("noop", {})) == "ok"
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_a_server_that_dies_mid_call_raises_gone_and_is_reported(problems: Problems) -> None:
    changed: list[str] = []
    servers = await McpServers.start(
        [peer("p", "serve"), peer("q", "serve")],
        hooks=HOOKS,
        on_problem=problems,
        on_tools_changed=changed.append,
    )
    try:
        connection = servers.connections["p"]
        with pytest.raises(McpServerGone, match="'p'"):
            await connection.call_tool("die", {})
        for _ in range(300):
            if changed:
                break
            await asyncio.sleep(0.01)
        assert changed == ["p"]
        assert list(servers.connections) == ["q"]
        assert problems == [
            "MCP server 'p' stopped (it exited or closed its connection); its tools are no longer available"
        ]
        with pytest.raises(McpServerGone):
            await connection.call_tool("noop", {})
        assert text_of(await servers.connections["q"].call_tool("noop", {})) == "ok"
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_tools_list_is_read_across_pages_and_odd_schemas_are_judged_not_dropped(
    problems: Problems,
) -> None:
    servers = await McpServers.start([listing_peer("l", "pages")], hooks=HOOKS, on_problem=problems)
    try:
        assert problems == []
        tools = servers.connections["l"].tools
        assert [tool.name for tool in tools] == ["one", "two", "three", "odd-schema", "five"]
        # The listing judges each schema; the tool layer leaves the odd one out, with why.
        assert tools[3].tool.input_schema["properties"] == {"x": {"type": "no-such-type"}}
        assert isinstance(tools[3].schema, str) and "not a valid JSON Schema" in tools[3].schema
        assert tools[4].schema == {"type": "object", "properties": {}}
        assert servers.connections["l"].notes == ()
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_a_tools_list_that_is_not_mcp_fails_that_server_only(problems: Problems) -> None:
    servers = await McpServers.start(
        [listing_peer("bad", "broken"), peer("good", "serve")], hooks=HOOKS, on_problem=problems
    )
    try:
        assert list(servers.connections) == ["good"]
        assert len(problems) == 1 and problems[0].startswith("MCP server 'bad' did not start: ")
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_list_changed_relists_then_calls_on_tools_changed(problems: Problems) -> None:
    changed: list[str] = []
    servers = await McpServers.start(
        [peer("p", "serve")], hooks=HOOKS, on_problem=problems, on_tools_changed=changed.append
    )
    try:
        connection = servers.connections["p"]
        assert "extra" not in {tool.name for tool in connection.tools}
        await connection.call_tool("grow", {})
        for _ in range(300):
            if changed:
                break
            await asyncio.sleep(0.01)
        assert changed == ["p"]
        assert "extra" in {tool.name for tool in connection.tools}
        assert text_of(await connection.call_tool("extra", {})) == "extra"
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_a_stdio_server_gets_the_editors_env_over_a_minimal_base(
    problems: Problems, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-sidecar-secret")
    monkeypatch.setenv("ACP_SIDECAR_MODEL", "m")
    monkeypatch.setenv("SOME_OTHER_VARIABLE", "x")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    config = peer("p", "serve", env=(("SERVER_TOKEN", "given"), ("LANG", "de_DE.UTF-8")))
    servers = await McpServers.start([config], hooks=HOOKS, on_problem=problems)
    try:
        env = json.loads(text_of(await servers.connections["p"].call_tool("environment", {})))
    finally:
        await servers.aclose()
    assert env["SERVER_TOKEN"] == "given"
    assert env["LANG"] == "de_DE.UTF-8"
    assert env["LC_ALL"] == "C.UTF-8"
    assert env["PATH"] == os.environ["PATH"]
    for name in ("OPENAI_API_KEY", "ACP_SIDECAR_MODEL", "SOME_OTHER_VARIABLE", "ACP_SIDECAR_STORE"):
        assert name not in env
    assert "sk-sidecar-secret" not in json.dumps(env)


def test_server_environment_is_the_base_by_name_then_the_editors_entries() -> None:
    source = {
        "PATH": "/bin",
        "HOME": "/h",
        "OPENAI_API_KEY": "k",
        "LC_TIME": "C",
        "BASH_FUNC_x%%": "() { :; }",
    }
    config = StdioServerConfig(name="s", command="/bin/s", env=(("HOME", "/other"), ("EXTRA", "1")))
    assert server_environment(config, source) == {
        "PATH": "/bin",
        "HOME": "/other",
        "LC_TIME": "C",
        "EXTRA": "1",
    }


@pytest.mark.process
async def test_a_servers_stderr_goes_to_the_log(
    problems: Problems, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="acp_sidecar.mcp.stderr")
    servers = await McpServers.start([peer("p", "serve")], hooks=HOOKS, on_problem=problems)
    try:
        await servers.connections["p"].call_tool("complain", {"text": "a line for the log"})
        for _ in range(200):
            if any("a line for the log" in r.getMessage() for r in caplog.records):
                break
            await asyncio.sleep(0.01)
    finally:
        await servers.aclose()
    assert "[p] a line for the log" in [r.getMessage() for r in caplog.records]


async def test_streamable_http_with_headers(problems: Problems, guarded_http_peer: str) -> None:
    good = HttpServerConfig(
        name="web", url=f"{guarded_http_peer}/mcp", headers=(("X-Token", "s3cret-value"),)
    )
    bad = HttpServerConfig(
        name="nokey", url=f"{guarded_http_peer}/mcp", headers=(("X-Token", "wrong"),)
    )
    servers = await McpServers.start(
        [good, bad], hooks=HOOKS, on_problem=problems, start_timeout=10
    )
    try:
        assert list(servers.connections) == ["web"]
        assert len(problems) == 1 and problems[0].startswith("MCP server 'nokey' did not start: ")
        assert "s3cret-value" not in problems[0] and "wrong" not in problems[0]
        connection = servers.connections["web"]
        assert "echo" in {tool.name for tool in connection.tools}
        assert text_of(await connection.call_tool("echo", {"text": "over http"})) == "over http"
    finally:
        await servers.aclose()


async def test_streamable_http_cancel_and_progress(
    problems: Problems, http_peer: str, tmp_path: Path
) -> None:
    servers = await McpServers.start(
        [HttpServerConfig(name="web", url=f"{http_peer}/mcp")], hooks=HOOKS, on_problem=problems
    )
    seen: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append(value)

    try:
        connection = servers.connections["web"]
        assert (
            text_of(await connection.call_tool("slow", {"steps": 2}, progress=progress)) == "done"
        )
        assert seen == [1, 2]
        call = asyncio.create_task(connection.call_tool("slow", {"steps": 100}))
        await asyncio.sleep(0.3)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await cancel_marker(tmp_path) == "yes"  # the server stopped the call: it was told
        assert text_of(await connection.call_tool("noop", {})) == "ok"
    finally:
        await servers.aclose()


async def test_sse_transport(problems: Problems, sse_peer: str) -> None:
    servers = await McpServers.start(
        [SseServerConfig(name="old", url=f"{sse_peer}/sse")], hooks=HOOKS, on_problem=problems
    )
    try:
        assert problems == []
        assert text_of(await servers.connections["old"].call_tool("echo", {"text": "sse"})) == "sse"
    finally:
        await servers.aclose()


async def test_nothing_listening_at_an_http_url_is_a_problem_not_a_crash(
    problems: Problems,
) -> None:
    servers = await McpServers.start(
        [HttpServerConfig(name="void", url="http://127.0.0.1:9/mcp")],
        hooks=HOOKS,
        on_problem=problems,
    )
    await servers.aclose()
    assert servers.connections == {}
    assert problems == [
        "MCP server 'void' did not start: nothing answered at its URL (connection failed)"
    ]


async def test_an_http_server_that_dies_mid_call_is_gone_reported_and_removed(
    problems: Problems, http_peer: str
) -> None:
    changed: list[str] = []
    servers = await McpServers.start(
        [HttpServerConfig(name="web", url=f"{http_peer}/mcp")],
        hooks=HOOKS,
        on_problem=problems,
        on_tools_changed=changed.append,
    )
    try:
        with pytest.raises(McpServerGone, match="'web'"):
            await servers.connections["web"].call_tool("die", {})
        for _ in range(300):
            if changed:
                break
            await asyncio.sleep(0.01)
        assert changed == ["web"]
        assert servers.connections == {}
        assert problems == [
            "MCP server 'web' stopped (it exited or closed its connection); its tools are no longer available"
        ]
    finally:
        await servers.aclose()


def test_a_failure_line_never_shows_url_credentials_or_header_values() -> None:
    from acp_sidecar.mcp.errors import describe_failure

    config = HttpServerConfig(
        name="h",
        url="http://user:pw@h.example/mcp?token=abc",
        headers=(("Authorization", "Bearer s3cret"),),
    )
    error = RuntimeError("POST http://user:pw@h.example/mcp?token=abc failed, sent Bearer s3cret")
    line = describe_failure(error, config)
    assert line == "RuntimeError: POST http://h.example/mcp failed, sent ***"
