"""The subreaper sidecar reaps orphans nobody waits for, steals no exit status, and keeps its
process scans off the event loop.

The subreaper cases run in a child Python (making the test process a subreaper would change
every other test), with the sweep's period and age shortened so they take a second.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from acp_sidecar.tools.builtin.shell import reaper
from acp_sidecar.tools.builtin.shell.reaper import CallProcesses

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


def run_python(script: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


@pytest.mark.process
def test_orphans_of_a_child_that_is_no_call_are_reaped() -> None:
    # What ripgrep, git or an MCP server may do: a short-lived grandchild outlives its parent,
    # is re-parented to the sidecar and dies there, and nobody waits for it.
    out = run_python(
        """
        import os, subprocess, time
        from acp_sidecar.server.hardening import harden_process
        from acp_sidecar.tools.builtin.shell import reaper
        reaper.SWEEP_S, reaper.ORPHAN_AGE_S = 0.1, 0.3
        assert harden_process().subreaper
        for _ in range(20):
            subprocess.run(["sh", "-c", "(sleep 0.1 &); true"], check=True)
        def zombies():
            found = [reaper.read_process(pid) for pid in reaper._children(os.getpid())]
            return [info for info in found if info is not None and info.dead]
        time.sleep(0.3)
        before = len(zombies())
        deadline = time.monotonic() + 10
        while zombies() and time.monotonic() < deadline:
            time.sleep(0.05)
        print(before, len(zombies()))
        """
    )
    before, after = map(int, out.split())
    assert before > 0  # the orphans were there, as zombies of the sidecar
    assert after == 0


@pytest.mark.process
def test_exit_codes_survive_the_sweep() -> None:
    # The sweep runs flat out beside asyncio's child watcher and subprocess.run: every exit
    # status still reaches its owner.
    out = run_python(
        """
        import asyncio, subprocess, threading
        from acp_sidecar.server.hardening import harden_process
        from acp_sidecar.tools.builtin.shell import reaper
        reaper.SWEEP_S, reaper.ORPHAN_AGE_S = 0.002, 0.5
        assert harden_process().subreaper
        stop = threading.Event()
        def sweep():
            while not stop.is_set():
                reaper.sweep_orphans()
        threading.Thread(target=sweep, daemon=True).start()
        async def one(code):
            process = await asyncio.create_subprocess_exec("sh", "-c", f"exit {code}")
            return await process.wait() == code
        async def main():
            results = []
            for start in range(0, 120, 30):
                results += await asyncio.gather(*(one(1 + n % 100) for n in range(start, start + 30)))
            return results
        results = asyncio.run(main())
        results += [subprocess.run(["sh", "-c", f"exit {n}"]).returncode == n for n in range(1, 40)]
        stop.set()
        print(results.count(False), len(results))
        """
    )
    wrong, total = map(int, out.split())
    assert (wrong, total) == (0, 159)


def test_the_tree_walk_finds_what_the_full_scan_finds() -> None:
    # The suite's own long-lived peers (MCP servers shared by a whole run) are descendants
    # too: wait for the nine processes started here, not for any nine.
    table = reaper.snapshot()
    assert table is not None
    already = {info.pid for info in reaper.descendants(table, os.getpid())}
    children = [
        subprocess.Popen(["sh", "-c", "sleep 30 & sleep 30 & wait"], start_new_session=True)
        for _ in range(3)
    ]
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            table = reaper.snapshot()
            assert table is not None
            full = {info.pid for info in reaper.descendants(table, os.getpid())}
            if len(full - already) >= 9:
                break
            time.sleep(0.05)
        walked = set(reaper.tree(os.getpid()))
        assert {child.pid for child in children} <= walked
        assert walked == full
    finally:
        for child in children:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
        subprocess.run(["pkill", "-P", str(os.getpid()), "-x", "sleep"], check=False)


async def test_the_end_of_a_call_does_not_stall_the_event_loop(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A slow /proc (a desktop with thousands of processes): each scan here waits until the
    # loop has served something else meanwhile, which a scan on the loop would never let it.
    real_snapshot = reaper.snapshot
    loop = asyncio.get_running_loop()
    loop_thread = threading.get_ident()
    scanning, served = asyncio.Event(), threading.Event()
    scanned_on: set[int] = set()

    def slow_snapshot() -> dict[int, reaper.ProcessInfo] | None:
        scanned_on.add(threading.get_ident())
        loop.call_soon_threadsafe(scanning.set)
        assert served.wait(30), "the loop served nothing while /proc was scanned"
        return real_snapshot()

    async def other_session() -> None:
        await scanning.wait()
        served.set()

    monkeypatch.setattr(reaper, "snapshot", slow_snapshot)
    monkeypatch.setattr(reaper, "_tree_walk", False)
    call = CallProcesses()
    shell = await asyncio.create_subprocess_exec(
        "sh", "-c", "sleep 30", env=call.environment(dict(os.environ)), start_new_session=True
    )
    call.started(shell.pid)
    serving = asyncio.create_task(other_session())
    try:
        await call.end(grace=1.0)
        assert await asyncio.wait_for(shell.wait(), 60) is not None  # a hang guard
    finally:
        serving.cancel()
    assert served.is_set() and scanned_on and loop_thread not in scanned_on
