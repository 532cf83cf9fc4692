"""The sidecar exits within its bound (2 s) even when an MCP server ignores both the end of
its stdin and SIGTERM: the server's group is SIGKILLed in time, and nothing is left behind.

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

STUBBORN = Path(__file__).parent / "peers" / "stdio_peer.py"
EXIT_BOUND_S = 2.0
"""How long the sidecar may take to exit once asked to (stdio.py's shutdown invariant)."""


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
    loop = asyncio.get_running_loop()
    began = loop.time()
    if trigger == "eof":
        process.stdin.close()
    else:
        process.send_signal(getattr(signal, trigger))
    assert await asyncio.wait_for(process.wait(), 10) == 0
    took = loop.time() - began
    assert sorted(pid for pid in below if alive(pid)) == []
    assert took < EXIT_BOUND_S, f"the sidecar took {took:.2f} s to exit"


SILENT = Path(__file__).parent / "peers" / "silent_peer.py"


@pytest.mark.parametrize("trigger", ["eof", "SIGTERM"])
async def test_a_shutdown_during_session_new_leaves_no_server_behind(
    tmp_path: Path, trigger: str
) -> None:
    """The sidecar is ended while ``session/new`` is still waiting for a server's handshake
    (it never answers ``initialize``, ignores the end of its stdin and SIGTERM, and has a
    grandchild in its group): it exits within the bound, and the whole group is gone."""
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
    loop = asyncio.get_running_loop()
    began = loop.time()
    if trigger == "eof":
        process.stdin.close()
    else:
        process.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(process.wait(), 10)
        took = loop.time() - began
        await asyncio.sleep(0.2)  # a SIGKILLed process needs a moment to be reaped
        assert [pid for pid in (server, grandchild) if alive(pid)] == []
        assert took < EXIT_BOUND_S, f"the sidecar took {took:.2f} s to exit"
    finally:
        for pid in (server, grandchild):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
