"""The sidecar exits even when an MCP server ignores both the end of its stdin and SIGTERM:
the server's group is SIGKILLed, and nothing is left behind. (Its 2 s bound is the
benchmarks' to time; here the order and the outcome are checked, under a hang guard.)

The peer is :mod:`tests.mcp.peers.stdio_peer` in ``stubborn`` mode: it and its grandchild
ignore SIGTERM and it keeps running after its stdin closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from pathlib import Path

import pytest

from tests.mcp.over_acp import alive, bare_sidecar, descendants

pytestmark = pytest.mark.process  # every test here starts an interpreter

STUBBORN = Path(__file__).parent / "peers" / "stdio_peer.py"


@pytest.mark.parametrize("trigger", ["eof", "SIGTERM", "SIGHUP"])
async def test_a_stubborn_server_does_not_hold_the_exit_past_the_bound(
    tmp_path: Path, trigger: str
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    process = await bare_sidecar(tmp_path, "stubborn", [str(STUBBORN), "stubborn", str(pidfile)])
    assert process.stdin is not None and process.stdout is not None
    async with asyncio.timeout(20):
        while json.loads(await process.stdout.readline()).get("id") != 1:
            pass
    below = descendants(process.pid)
    grandchild = int(pidfile.read_text())
    assert grandchild in below and len(below) >= 2  # the server and its grandchild
    if trigger == "eof":
        process.stdin.close()
    else:
        process.send_signal(getattr(signal, trigger))
    # The server ignores EOF and SIGTERM and would hold the exit for ever: the sidecar
    # exits 0 having killed it and its grandchild (the generous wait is a hang guard).
    assert await asyncio.wait_for(process.wait(), 60) == 0
    assert sorted(pid for pid in below if alive(pid)) == []


SILENT = Path(__file__).parent / "peers" / "silent_peer.py"


@pytest.mark.parametrize("trigger", ["eof", "SIGTERM"])
async def test_a_shutdown_during_session_new_leaves_no_server_behind(
    tmp_path: Path, trigger: str
) -> None:
    """The sidecar is ended while ``session/new`` is still waiting for a server's handshake
    (it never answers ``initialize``, ignores the end of its stdin and SIGTERM, and has a
    grandchild in its group): it exits 0, and the whole group is gone."""
    pidfile = tmp_path / "silent.pid"
    process = await bare_sidecar(tmp_path, "silent", [str(SILENT), str(pidfile)])
    assert process.stdin is not None and process.stdout is not None
    assert json.loads(await asyncio.wait_for(process.stdout.readline(), 20))["id"] == 0
    async with asyncio.timeout(20):
        while not pidfile.exists() or len(pidfile.read_text().split()) < 2:
            await asyncio.sleep(0.05)
    server, grandchild = (int(pid) for pid in pidfile.read_text().split())
    await asyncio.sleep(0.6)  # session/new is still in the server's handshake
    assert alive(server) and alive(grandchild)
    if trigger == "eof":
        process.stdin.close()
    else:
        process.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(process.wait(), 60)  # a hang guard
        await asyncio.sleep(0.2)  # a SIGKILLed process needs a moment to be reaped
        assert [pid for pid in (server, grandchild) if alive(pid)] == []
    finally:
        for pid in (server, grandchild):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
