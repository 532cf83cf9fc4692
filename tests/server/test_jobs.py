"""Kept jobs over the wire, in process: a ``background`` call's card says it keeps running,
the end of the turn says what still runs, and the session's close and the connection's end
stop it. (This test process is no subreaper: the daemons here stay in the call's session.)
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.server.app import AcpServer
from acp_sidecar.tools.builtin.shell.job_commands import jobs_command, kill_command
from acp_sidecar.tools.builtin.shell.reaper import read_process
from tests.refused import refuse_stats_under
from tests.server.wire import WireClient, served

BOUND = 20.0
NOTICES = {"session": {"notices": {}}}
DAEMON = "sh -c 'echo $$ > d.tmp && mv d.tmp d.pid; exec sleep 300' & echo started"


def alive(pid: int) -> bool:
    info = read_process(pid)
    return info is not None and not info.dead


async def pid_in(path: Path) -> int:
    for _ in range(int(BOUND / 0.02)):
        if path.exists():
            return int(path.read_text())
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path.name} was never written")


def bash(command: str, **arguments: Any) -> str:
    return "/bash " + json.dumps({"command": command, **arguments})


async def auto_session(client: WireClient, cwd: Path) -> str:
    session = await client.new_session(str(cwd))
    await client.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
    return session


def of_kind(client: WireClient, kind: str) -> list[dict[str, Any]]:
    return [
        u["params"]["update"]
        for u in client.updates
        if u["params"]["update"]["sessionUpdate"] == kind
    ]


async def test_a_background_call_is_kept_told_at_the_turns_end_and_stopped_on_close(
    tmp_path: Path,
) -> None:
    async with served(AcpServer()) as (client, server):
        await client.initialize(**NOTICES)
        session = await auto_session(client, tmp_path)
        prompt = await client.start_prompt(session, bash(DAEMON, background=True))
        response = await client.next_response(prompt, timeout=BOUND)
        assert response["result"] == {"stopReason": "end_turn"}
        daemon = await pid_in(tmp_path / "d.pid")
        assert alive(daemon)
        [job] = server.sessions[session].jobs.jobs
        [closing] = [u for u in of_kind(client, "tool_call_update") if u.get("title")]
        assert closing["title"] == f"{DAEMON} (kept running as job 1)"
        assert closing["status"] == "completed"
        [notice] = of_kind(client, "notice")
        assert notice["title"] == "1 job still running:"
        assert notice["description"].splitlines()[1] == (
            f"1. pid {job.running.pid}, running, started {job.started}: `{DAEMON}`"
        )
        # Read before the answer (next_response reads up to it); a turn with nothing left
        # running says nothing.
        client.updates.clear()
        assert "Jobs of this session:" in await jobs_command("", server.sessions[session].jobs)
        await client.result("session/close", {"sessionId": session})
        assert not alive(daemon)
        again = await auto_session(client, tmp_path)
        await client.next_response(await client.start_prompt(again, "!true"), timeout=BOUND)
        assert of_kind(client, "notice") == []


async def test_without_notices_the_turns_end_says_it_as_agent_text(tmp_path: Path) -> None:
    async with served(AcpServer()) as (client, server):
        await client.initialize()
        session = await auto_session(client, tmp_path)
        prompt = await client.start_prompt(session, bash(DAEMON, background=True))
        await client.next_response(prompt, timeout=BOUND)
        daemon = await pid_in(tmp_path / "d.pid")
        texts = [
            u["content"]["text"]
            for u in of_kind(client, "agent_message_chunk")
            if "still running:" in u["content"]["text"]
        ]
        assert len(texts) == 1 and texts[0].strip().splitlines()[0] == "1 job still running:"
        answer = await kill_command("1", server.sessions[session].jobs)
        assert answer == f"Stopped job 1 (`{DAEMON}`)."
        assert not alive(daemon)


async def test_the_connections_end_stops_every_sessions_jobs(tmp_path: Path) -> None:
    daemons = []
    async with served(AcpServer()) as (client, _server):
        await client.initialize()
        for name in ("a", "b"):
            cwd = tmp_path / name
            cwd.mkdir()
            session = await auto_session(client, cwd)
            prompt = await client.start_prompt(session, bash(DAEMON, background=True))
            await client.next_response(prompt, timeout=BOUND)
            daemons.append(await pid_in(cwd / "d.pid"))
        assert all(alive(pid) for pid in daemons)
    assert not any(alive(pid) for pid in daemons)


async def test_deleting_the_session_stops_its_jobs_and_forgets_their_record(
    tmp_path: Path,
) -> None:
    from acp_sidecar.store import SessionStore

    records = tmp_path / "store" / ".jobs"
    server = AcpServer(store=lambda: SessionStore(tmp_path / "store"), job_records=lambda: records)
    async with served(server) as (client, _server):
        await client.initialize()
        session = await auto_session(client, tmp_path)
        prompt = await client.start_prompt(session, bash(DAEMON, background=True))
        await client.next_response(prompt, timeout=BOUND)
        daemon = await pid_in(tmp_path / "d.pid")
        [record] = list(records.glob("*.json"))
        assert json.loads(record.read_text())["jobs"][0]["session"] == session
        await client.result("session/delete", {"sessionId": session})
        assert not alive(daemon)
        assert not record.exists()


async def test_a_store_the_process_may_not_look_into_is_no_failed_recovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    refused = tmp_path / "unsearchable"
    refuse_stats_under(monkeypatch, refused)
    server = AcpServer(job_records=lambda: refused / "store" / ".jobs")
    with caplog.at_level(logging.WARNING):
        await server.recover_jobs()
    assert [r.getMessage() for r in caplog.records] == []
