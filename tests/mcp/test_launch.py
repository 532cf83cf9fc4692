"""Stdio servers started ahead of the MCP SDK (:mod:`acp_sidecar.mcp.launch`) and handed to
its client (:mod:`acp_sidecar.mcp.stdio`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from acp_sidecar.mcp.config import StdioServerConfig
from acp_sidecar.mcp.launch import ServerProcess, launch, launch_all
from acp_sidecar.mcp.processes import group_members
from acp_sidecar.mcp.servers import McpServers
from tests.mcp.conftest import HOOKS, PEERS, Problems, peer
from tests.mcp.over_acp import alive


@pytest.mark.process
async def test_started_servers_are_taken_by_their_connections(problems: Problems) -> None:
    configs = [peer("a", "serve"), StdioServerConfig(name="missing", command="/nonexistent/x")]
    launched = await launch_all(configs)
    first = launched._started["a"]
    assert isinstance(first, ServerProcess)
    servers = await McpServers.start(configs, hooks=HOOKS, on_problem=problems, launched=launched)
    try:
        assert servers.connections["a"].process_group == first.pid  # the one started first
        assert problems == ["MCP server 'missing' did not start: its command does not exist"]
        assert launched.take("a") is None
    finally:
        await servers.aclose()
        await launched.aclose()
    assert group_members(first.pid) == []


@pytest.mark.process
async def test_what_no_connection_took_is_stopped_with_its_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "g.pid"
    launched = await launch_all([peer("fam", "family", str(pidfile))])
    process = launched._started["fam"]
    assert isinstance(process, ServerProcess)
    for _ in range(500):
        if pidfile.exists() and pidfile.read_text():
            break
        await asyncio.sleep(0.01)
    assert len(group_members(process.pid)) == 2
    await launched.aclose()
    assert group_members(process.pid) == []


@pytest.mark.process
async def test_a_hurried_stop_of_a_stubborn_server_keeps_to_its_grace(tmp_path: Path) -> None:
    pidfile = tmp_path / "g.pid"
    process = await launch(peer("stubborn", "stubborn", str(pidfile)))
    for _ in range(500):
        if pidfile.exists() and pidfile.read_text():
            break
        await asyncio.sleep(0.01)
    assert len(group_members(process.pid)) == 2  # ignores EOF and SIGTERM, with a grandchild
    # Only SIGKILL ends them: the stop escalates once the grace is spent, whatever the load
    # (the generous wait is a hang guard).
    await asyncio.wait_for(process.stop(grace=0.6), 60)
    assert group_members(process.pid) == []
    assert process.exited


async def test_each_stdout_line_is_validated_with_the_sdks_own_model() -> None:
    from acp_sidecar.mcp.stdio import parse_line

    assert isinstance(parse_line(b"not json"), Exception)
    assert isinstance(parse_line(b'{"jsonrpc": "2.0", "id": 1, "nonsense": true}'), Exception)
    message = parse_line(b'{"jsonrpc": "2.0", "id": 1, "result": {}}')
    assert not isinstance(message, Exception)
    assert message.message.model_dump(by_alias=True, exclude_unset=True) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {},
    }


@pytest.mark.process
def test_a_stop_cut_short_by_the_programs_exit_still_kills_the_group(tmp_path: Path) -> None:
    """The program exits while a server's gentle stop is still waiting (asyncio cancels the
    stop's task): the server's whole group is SIGKILLed, not its leader alone."""
    pidfile = tmp_path / "silent.pid"
    config = StdioServerConfig(
        name="silent", command=sys.executable, args=(str(PEERS / "silent_peer.py"), str(pidfile))
    )

    async def main() -> None:
        process = await launch(config)
        for _ in range(500):
            if pidfile.exists() and len(pidfile.read_text().split()) == 2:
                break
            await asyncio.sleep(0.01)
        stopping = asyncio.ensure_future(process.stop())  # gentle: 2 s after EOF, SIGTERM
        await asyncio.sleep(0.3)  # returning now cancels it, as at the program's exit
        assert not stopping.done()

    asyncio.run(main())
    server, grandchild = (int(pid) for pid in pidfile.read_text().split())
    try:
        for _ in range(100):  # SIGKILLed processes take a moment to die
            if not group_members(server) and not alive(grandchild):
                break
            time.sleep(0.01)
        assert group_members(server) == []
        assert not alive(grandchild)
    finally:
        for pid in (server, grandchild):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


async def _lines_from(script: str) -> list[object]:
    """What :func:`acp_sidecar.mcp.stdio.process_streams` reads from a process running
    ``script``, up to its stdout's end."""
    from acp_sidecar.mcp.stdio import process_streams

    process = await launch(StdioServerConfig(name="w", command=sys.executable, args=("-c", script)))
    items: list[object] = []
    try:
        async with process_streams(process) as (read, _write):
            async with asyncio.timeout(60):
                async for item in read:
                    items.append(item)
    finally:
        await process.stop(grace=0.5)
    return items


def _result_line(n: int, size: int) -> str:
    """Python code for a message line (bytes, no newline) whose result has ``size`` x's."""
    return f"""b'{{"jsonrpc": "2.0", "id": {n}, "result": {{"text": "' + b'x' * {size} + b'"}}}}'"""


@pytest.mark.process
async def test_a_32_mb_line_arrives_whole() -> None:
    size = 32 * 1024 * 1024
    script = (
        "import sys; out = sys.stdout.buffer\n"
        f"out.write({_result_line(1, size)} + b'\\n')\n"
        f"out.write({_result_line(2, 1)} + b'\\n')\n"
    )
    items = await _lines_from(script)
    assert [getattr(item, "message", item).id for item in items] == [1, 2]  # type: ignore[attr-defined]
    first = items[0].message  # type: ignore[attr-defined]
    assert len(first.result["text"]) == size


@pytest.mark.process
async def test_a_line_over_the_limit_is_an_error_and_the_next_one_arrives(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from acp_sidecar.mcp import stdio

    monkeypatch.setattr(stdio, "MAX_LINE", 100_000)
    script = (
        "import sys, time; out = sys.stdout.buffer\n"
        # over the limit, in pieces (the limit is crossed before its newline arrives)
        f"line = {_result_line(1, 300_000)}\n"
        "for i in range(0, len(line), 7000):\n"
        "    out.write(line[i:i + 7000]); out.flush()\n"
        "out.write(b'\\n')\n"
        f"out.write({_result_line(2, 99_000)} + b'\\n')\n"  # under it: kept
        f"out.write({_result_line(3, 200_000)} + b'\\n')\n"  # over it, at once
        f"out.write({_result_line(4, 1)} + b'\\n')\n"
    )
    items = await _lines_from(script)
    assert len(items) == 4, items
    assert isinstance(items[0], ValueError) and "longer than" in str(items[0])
    assert items[1].message.id == 2  # type: ignore[attr-defined]
    assert isinstance(items[2], ValueError)
    assert items[3].message.id == 4  # type: ignore[attr-defined]


def test_lines_are_split_across_chunks_and_the_limit_is_inclusive() -> None:
    from acp_sidecar.mcp.stdio import LineSplitter

    lines = LineSplitter(5)
    assert lines.feed(b"ab") == []
    assert lines.feed(b"c\nde") == [b"abc"]
    assert lines.feed(b"\n") == [b"de"]
    assert lines.feed(b"12345\n\n") == [b"12345", b""]  # exactly the limit: kept
    assert lines.feed(b"123") == []
    (error,) = lines.feed(b"456")  # over it before its newline: reported once
    assert isinstance(error, ValueError)
    assert lines.feed(b"789") == []
    assert lines.feed(b"0\nok\n") == [b"ok"]
    error, after = lines.feed(b"1234567\nyes\n")  # over it at once
    assert isinstance(error, ValueError) and after == b"yes"
    assert lines.feed(b"x\n") == [b"x"]
