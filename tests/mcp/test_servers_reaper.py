"""The shell tool's reaper never takes an MCP server.

The reaper ends what a ``bash`` call left behind: processes in the call's session, or
descendants of the sidecar whose environment carries the call's token or whose parent is the
call's. An MCP server is none of these: it runs in its own session, its environment is built
from scratch (:func:`acp_sidecar.mcp.connection.server_environment`, no ``ACP_SIDECAR_CALL``),
and its parent is the sidecar. Checked here against a running server, with a call that is
cancelled mid-way (the reaper's hardest path), then its orphan sweep run as if much later.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from acp_sidecar.mcp.config import StdioServerConfig
from acp_sidecar.mcp.connection import server_environment
from acp_sidecar.mcp.processes import group_members
from acp_sidecar.mcp.servers import McpServers
from acp_sidecar.tools.builtin.shell.process import run_command
from acp_sidecar.tools.builtin.shell.reaper import CALL_VARIABLE, ORPHAN_AGE_S, sweep_orphans
from acp_sidecar.tools.cancel import CancelSignal
from tests.mcp.conftest import HOOKS, Problems, peer


async def nothing(_text: str) -> None:
    return None


@pytest.mark.process
async def test_a_cancelled_bash_call_and_the_orphan_sweep_spare_a_running_mcp_server(
    problems: Problems, tmp_path: Path
) -> None:
    servers = await McpServers.start(
        [peer("family", "family", str(tmp_path / "g.pid"))], hooks=HOOKS, on_problem=problems
    )
    try:
        connection = servers.connections["family"]
        leader = connection.process_group
        assert leader is not None
        before = sorted(group_members(leader))
        assert len(before) == 2  # the server and its grandchild
        cancel = CancelSignal()
        running = asyncio.ensure_future(
            run_command(
                "setsid sleep 1000 & sleep 1000 & echo started; wait",
                cwd=str(tmp_path),
                timeout_s=60,
                signal=cancel,
                on_output=nothing,
            )
        )
        await asyncio.sleep(0.5)
        cancel.cancel("session/cancel")
        outcome = await asyncio.wait_for(running, 10)
        assert outcome.cancelled
        sweep_orphans()
        sweep_orphans(time.monotonic() + 2 * ORPHAN_AGE_S)
        assert sorted(group_members(leader)) == before
        assert connection.alive
        result = await connection.call_tool("noop", {})
        assert result.is_error is not True
    finally:
        await servers.aclose()


def test_a_server_never_carries_a_calls_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CALL_VARIABLE, "token-of-some-call")
    assert CALL_VARIABLE not in server_environment(StdioServerConfig(name="s", command="/bin/s"))
