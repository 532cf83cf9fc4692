"""Kept jobs in a real sidecar (a subreaper): a double-forked daemon kept with ``background``
is reaped when its session closes; the jobs of a sidecar killed with SIGKILL are stopped by
the next sidecar started on the same store, and a recorded pid now used by another process
is left alone.
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest

from acp_sidecar.tools.builtin.shell.reaper import read_process
from acp_sidecar.tools.environment import child_environment
from tests.server.test_daemons import (
    BOUND,
    alive,
    auto_session,
    bash,
    daemon,
    gone,
    killed_afterwards,
    pid_in,
    until,
)
from tests.server.wire import initialized

pytestmark = pytest.mark.process


async def test_a_kept_daemon_outlives_its_call_and_is_reaped_when_its_session_closes(
    tmp_path: Path,
) -> None:
    with killed_afterwards(tmp_path / "d.pid"):
        store = tmp_path / "store"
        async with initialized("--store", str(store), stderr=asyncio.subprocess.DEVNULL) as (
            client,
            _process,
        ):
            session = await auto_session(client, tmp_path)
            prompt = await client.start_prompt(session, bash(daemon("d.pid"), background=True))
            response = await client.next_response(prompt, timeout=BOUND)
            assert response["result"]["stopReason"] == "end_turn"
            pid = await pid_in(tmp_path / "d.pid")
            assert alive(pid)
            [record] = list((store / ".jobs").glob("*.json"))
            processes = json.loads(record.read_text())["jobs"][0]["processes"]
            assert pid in [recorded for recorded, _started in processes]
            await client.result("session/close", {"sessionId": session})
            # Killed and reaped by the sidecar: not even a zombie is left.
            await until(lambda: gone(pid), "the kept daemon outlived its session")
            assert not record.exists()


async def test_the_jobs_of_a_killed_sidecar_are_stopped_by_the_next_one(tmp_path: Path) -> None:
    store = tmp_path / "store"
    records = store / ".jobs"
    bystander = await asyncio.create_subprocess_exec(
        "sleep", "300", env=child_environment(), start_new_session=True
    )
    try:
        with killed_afterwards(tmp_path / "d.pid"):
            async with initialized("--store", str(store), stderr=asyncio.subprocess.DEVNULL) as (
                client,
                process,
            ):
                session = await auto_session(client, tmp_path)
                prompt = await client.start_prompt(session, bash(daemon("d.pid"), background=True))
                await client.next_response(prompt, timeout=BOUND)
                pid = await pid_in(tmp_path / "d.pid")
                process.send_signal(signal.SIGKILL)  # a crash: nothing is cleaned up
                await process.wait()
            assert alive(pid)
            [record] = list(records.glob("*.json"))
            # A record of a sidecar long gone that names a pid now another process's.
            info = read_process(bystander.pid)
            assert info is not None
            stale = records / "1-1.json"
            stale.write_text(
                json.dumps(
                    {
                        "version": 1,
                        "owner": [1, 1],
                        "jobs": [
                            {
                                "session": "old",
                                "number": 1,
                                "token": "0" * 32,
                                "processes": [[bystander.pid, info.started + 1]],
                            }
                        ],
                    }
                )
            )
            async with initialized("--store", str(store), stderr=asyncio.subprocess.DEVNULL) as (
                client,
                _process,
            ):
                await until(lambda: not alive(pid), "the crashed sidecar's job was left")
                await until(lambda: not stale.exists(), "the stale record was kept")
                assert not record.exists()
                assert alive(bystander.pid)
    finally:
        bystander.kill()
        await bystander.wait()


async def test_sigterm_stops_the_kept_jobs_before_the_sidecar_exits(tmp_path: Path) -> None:
    with killed_afterwards(tmp_path / "d.pid"):
        store = tmp_path / "store"
        async with initialized("--store", str(store), stderr=asyncio.subprocess.DEVNULL) as (
            client,
            process,
        ):
            session = await auto_session(client, tmp_path)
            prompt = await client.start_prompt(session, bash(daemon("d.pid"), background=True))
            await client.next_response(prompt, timeout=BOUND)
            pid = await pid_in(tmp_path / "d.pid")
            process.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(process.wait(), BOUND) == 0
            # Dead before the sidecar exited; reaping it is then its new parent's business.
            assert not alive(pid)
            assert list((store / ".jobs").glob("*.json")) == []
