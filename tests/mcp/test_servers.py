"""``McpServers``: concurrent start bounded per server, failures reported never raised,
servers that die later, and a lifecycle that leaves no process behind."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from acp_sidecar.mcp.config import StdioServerConfig
from acp_sidecar.mcp.errors import McpServerGone
from acp_sidecar.mcp.processes import group_members
from acp_sidecar.mcp.servers import McpServers
from tests.mcp.conftest import HOOKS, Problems, peer


def gone(pid: int) -> bool:
    """No such process, or only its zombie is left."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


async def pid_in(path: Path) -> int:
    for _ in range(500):
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path.name} was never written")


@pytest.mark.process
async def test_failures_are_reported_in_config_order_and_the_rest_start(
    problems: Problems, tmp_path: Path
) -> None:
    plain_file = tmp_path / "server.sh"
    plain_file.write_text("#!/bin/sh\n")
    plain_file.chmod(0o644)
    configs = [
        peer("first", "serve"),
        peer("exits", "exit"),
        StdioServerConfig(name="missing", command="/nonexistent/mcp-server"),
        StdioServerConfig(name="not-executable", command=str(plain_file)),
        peer("last", "serve"),
    ]
    servers = await McpServers.start(configs, hooks=HOOKS, on_problem=problems)
    try:
        assert list(servers.connections) == ["first", "last"]
        assert problems == [
            "MCP server 'exits' did not start: it exited or closed its connection before answering",
            "MCP server 'missing' did not start: its command does not exist",
            "MCP server 'not-executable' did not start: its command cannot be executed (permission denied)",
        ]
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_hung_servers_cost_their_timeout_once_not_each(
    problems: Problems, tmp_path: Path
) -> None:
    configs = [
        peer("a", "hang", str(tmp_path / "a.pid")),
        peer("b", "hang", str(tmp_path / "b.pid")),
    ]
    seen: list[set[str]] = []  # which of the two ran, at each look
    pids: set[int] = set()

    async def watch() -> None:
        while True:
            running = _servers_running(tmp_path)
            seen.append({name for name, _pid in running})
            pids.update(pid for _name, pid in running)
            await asyncio.sleep(0.01)

    watching = asyncio.create_task(watch())
    try:
        servers = await McpServers.start(configs, hooks=HOOKS, on_problem=problems, start_timeout=1)
    finally:
        watching.cancel()
    await servers.aclose()
    assert problems == [
        "MCP server 'a' did not start: it did not finish starting within 1 s",
        "MCP server 'b' did not start: it did not finish starting within 1 s",
    ]
    # Concurrently: one timeout, not two. Started one after the other, the first would have
    # been given up before the second began.
    assert {"a", "b"} in seen, seen
    assert len(pids) == 2 and all(gone(pid) for pid in pids)


def _servers_running(tmp_path: Path) -> set[tuple[str, int]]:
    """The hung peers ``a`` and ``b`` (by their pidfile argument) alive now, with their pids."""
    running = set()
    for name in ("a", "b"):
        wanted = str(tmp_path / f"{name}.pid").encode()
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                argv = cmdline.read_bytes().split(b"\0")
            except OSError:
                continue
            pid = int(cmdline.parent.name)
            if wanted in argv and not gone(pid):
                running.add((name, pid))
    return running


@pytest.mark.process
async def test_aclose_ends_the_whole_process_group_grandchildren_included(
    problems: Problems, tmp_path: Path
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    servers = await McpServers.start(
        [peer("fam", "family", str(pidfile))], hooks=HOOKS, on_problem=problems
    )
    connection = servers.connections["fam"]
    leader = connection.process_group
    grandchild = await pid_in(pidfile)
    assert leader is not None and leader != os.getpid()
    assert os.getpgid(grandchild) == leader  # the server's group, not ours
    assert sorted(group_members(leader)) == sorted([leader, grandchild])
    await servers.aclose()
    assert gone(leader) and gone(grandchild)
    assert group_members(leader) == []
    await servers.aclose()  # idempotent
    with pytest.raises(McpServerGone):
        await connection.call_tool("noop", {})
    assert problems == []  # a stop we asked for is no problem


@pytest.mark.process
async def test_a_server_killed_later_is_reported_removed_and_its_group_ended(
    problems: Problems, tmp_path: Path
) -> None:
    changed: list[str] = []
    pidfile = tmp_path / "grandchild.pid"
    servers = await McpServers.start(
        [peer("fam", "family", str(pidfile)), peer("other", "serve")],
        hooks=HOOKS,
        on_problem=problems,
        on_tools_changed=changed.append,
    )
    try:
        leader = servers.connections["fam"].process_group
        assert leader is not None
        grandchild = await pid_in(pidfile)
        os.kill(leader, signal.SIGKILL)
        for _ in range(300):
            if changed:
                break
            await asyncio.sleep(0.01)
        assert changed == ["fam"]
        assert list(servers.connections) == ["other"]
        assert problems == [
            "MCP server 'fam' stopped (it exited or closed its connection); its tools are no longer available"
        ]
        for _ in range(300):
            if gone(grandchild):
                break
            await asyncio.sleep(0.01)
        assert gone(grandchild)
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_cancelling_the_start_stops_what_it_started(
    problems: Problems, tmp_path: Path
) -> None:
    pidfile = tmp_path / "hang.pid"
    start = asyncio.create_task(
        McpServers.start([peer("hangs", "hang", str(pidfile))], hooks=HOOKS, on_problem=problems)
    )
    pid = await pid_in(pidfile)
    start.cancel()
    with pytest.raises(asyncio.CancelledError):
        await start
    assert gone(pid)


@pytest.mark.process
async def test_callbacks_that_raise_do_not_break_anything() -> None:
    def bad(_: str) -> None:
        raise RuntimeError("boom")

    servers = await McpServers.start(
        [peer("exits", "exit"), peer("ok", "serve")],
        hooks=HOOKS,
        on_problem=bad,
        on_tools_changed=bad,
    )
    try:
        assert list(servers.connections) == ["ok"]
        await servers.connections["ok"].call_tool("grow", {})
        await asyncio.sleep(0.3)
        assert "extra" in {tool.name for tool in servers.connections["ok"].tools}
    finally:
        await servers.aclose()


async def test_no_servers_is_fine() -> None:
    servers = await McpServers.start([], hooks=HOOKS, on_problem=Problems())
    assert servers.connections == {}
    await servers.aclose()


@pytest.mark.process
async def test_nothing_a_server_does_reaches_our_stdout(
    problems: Problems, capfd: pytest.CaptureFixture[str]
) -> None:
    servers = await McpServers.start(
        [peer("p", "serve"), peer("x", "exit")], hooks=HOOKS, on_problem=problems
    )
    try:
        await servers.connections["p"].call_tool("complain", {"text": "to stderr"})
    finally:
        await servers.aclose()
    out, _ = capfd.readouterr()
    assert out == ""


@pytest.mark.process
def test_the_package_does_not_import_the_sdk_at_start() -> None:
    import subprocess

    code = "import acp_sidecar.mcp, acp_sidecar.server, sys; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.process
async def test_configs_with_a_taken_name_start_only_the_first(problems: Problems) -> None:
    servers = await McpServers.start(
        [peer("p", "serve"), peer("p", "exit")], hooks=HOOKS, on_problem=problems
    )
    try:
        assert list(servers.connections) == ["p"]
        assert problems == ["MCP server 'p' was not started: its name is taken"]
    finally:
        await servers.aclose()


@pytest.mark.process
async def test_a_server_that_ignores_eof_and_sigterm_is_killed_with_its_group(
    problems: Problems, tmp_path: Path
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    servers = await McpServers.start(
        [peer("stubborn", "stubborn", str(pidfile))], hooks=HOOKS, on_problem=problems
    )
    leader = servers.connections["stubborn"].process_group
    grandchild = await pid_in(pidfile)
    assert leader is not None
    await servers.aclose()
    # It ignores EOF and SIGTERM: gone, it and its grandchild were killed.
    assert gone(leader) and gone(grandchild)
    assert group_members(leader) == []


@pytest.mark.process
async def test_starting_and_stopping_leaks_no_file_descriptor(problems: Problems) -> None:
    def open_fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    configs = [
        peer("ok", "serve"),
        peer("exits", "exit"),
        StdioServerConfig(name="missing", command="/nonexistent"),
    ]
    servers = await McpServers.start(
        configs, hooks=HOOKS, on_problem=problems
    )  # warms up lazy loop resources
    await servers.aclose()
    before = open_fds()
    for _ in range(3):
        servers = await McpServers.start(configs, hooks=HOOKS, on_problem=problems)
        await servers.connections["ok"].call_tool("complain", {"text": "x"})
        await servers.aclose()
    await asyncio.sleep(0.1)
    assert open_fds() == before


@pytest.mark.process
async def test_a_stdio_server_is_our_child_leading_its_own_session(problems: Problems) -> None:
    servers = await McpServers.start([peer("own", "serve")], hooks=HOOKS, on_problem=problems)
    try:
        leader = servers.connections["own"].process_group
        assert leader is not None
        assert os.getsid(leader) == leader and os.getpgid(leader) == leader
        stat = Path(f"/proc/{leader}/stat").read_text().rsplit(")", 1)[1].split()
        assert int(stat[1]) == os.getpid()  # started by us, not through a shell
    finally:
        await servers.aclose()
    assert group_members(leader) == []
