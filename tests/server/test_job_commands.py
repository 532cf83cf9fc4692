"""``/jobs``, ``/kill N`` and ``/keep`` over the wire, in process: as turns of their own when
the session is idle, and beside the running turn (``session/prompt`` or a steer) when one runs,
which is what ``/keep`` is for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from acp_sidecar.store.reader import SessionLog
from acp_sidecar.store.records import NoticeRecord, UserMessageRecord
from tests.server.test_jobs import BOUND, DAEMON, alive, auto_session, bash, pid_in
from tests.server.wire import WireClient, served

FOREGROUND = "sh -c 'echo $$ > d.tmp && mv d.tmp d.pid; exec sleep 300'"


def prompt(session: str, text: str) -> dict[str, Any]:
    return {"sessionId": session, "prompt": [{"type": "text", "text": text}]}


async def answers(client: WireClient, *ids: int) -> dict[int, dict[str, Any]]:
    """Read until every request in ``ids`` is answered, in whatever order; updates kept."""
    got: dict[int, dict[str, Any]] = {}
    while len(got) < len(ids):
        message = await client.receive(BOUND)
        if message.get("method") == "session/update":
            client.updates.append(message)
        else:
            assert message.get("id") in ids, message
            got[message["id"]] = message
    return got


def said(client: WireClient, session: str) -> str:
    return "".join(
        u["params"]["update"]["content"]["text"]
        for u in client.updates
        if u["params"]["sessionId"] == session
        and u["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )


async def test_jobs_lists_and_kill_stops_a_background_job_as_turns_of_their_own(
    tmp_path: Path,
) -> None:
    async with served(AcpServer()) as (client, _server):
        await client.initialize()
        session = await auto_session(client, tmp_path)
        started = await client.start_prompt(session, bash(DAEMON, background=True))
        await client.next_response(started, timeout=BOUND)
        daemon = await pid_in(tmp_path / "d.pid")
        client.updates.clear()
        listed = await client.next_response(await client.start_prompt(session, "/jobs"))
        assert listed["result"] == {"stopReason": "end_turn"}
        assert said(client, session).startswith("Jobs of this session:\n1. pid ")
        client.updates.clear()
        await client.next_response(await client.start_prompt(session, "/kill 1"))
        assert said(client, session) == f"Stopped job 1 (`{DAEMON}`)."
        assert not alive(daemon)
        client.updates.clear()
        await client.next_response(await client.start_prompt(session, "/kill 1"))
        assert said(client, session) == "There is no job 1 (`/jobs` lists them)."


async def test_keep_sent_while_a_command_runs_lets_its_call_return_and_keeps_it(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    work = tmp_path / "work"
    work.mkdir()
    server = AcpServer(store=lambda: SessionStore(store))
    async with served(server) as (client, served_server):
        await client.initialize()
        session = await auto_session(client, work)
        running = await client.start_prompt(session, bash(FOREGROUND))
        daemon = await pid_in(work / "d.pid")
        keep = await client.send_request("session/prompt", prompt(session, "/keep"))
        got = await answers(client, running, keep)
        assert got[keep]["result"] == {"stopReason": "end_turn"}
        assert got[running]["result"] == {"stopReason": "end_turn"}
        assert f"`/keep`: `{FOREGROUND}` keeps running as a job of this session" in said(
            client, session
        )
        [closing] = [
            u["params"]["update"]
            for u in client.updates
            if u["params"]["update"]["sessionUpdate"] == "tool_call_update"
            and u["params"]["update"].get("status") == "completed"
        ]
        assert closing["title"] == f"{FOREGROUND} (kept running as job 1)"
        assert alive(daemon)
        [job] = served_server.sessions[session].jobs.jobs
        assert job.running.pid is not None
        await client.result("session/close", {"sessionId": session})
        assert not alive(daemon)
    # Beside the turn, the command is a notice of that turn, not a prompt: the model's
    # history of the turn stays whole (its bash call and result).
    with SessionLog(SessionStore(store).path_of(session)) as log:
        records = list(log)
    prompts = [r for r in records if isinstance(r, UserMessageRecord)]
    assert len(prompts) == 1 and prompts[0].command is None
    notices = [r.text for r in records if isinstance(r, NoticeRecord)]
    assert any(text.startswith("`/keep`: ") for text in notices)


async def test_keep_steered_into_a_running_turn_is_injected_at_once(tmp_path: Path) -> None:
    async with served(AcpServer()) as (client, _server):
        await client.initialize()
        session = await auto_session(client, tmp_path)
        running = await client.start_prompt(session, bash(FOREGROUND))
        daemon = await pid_in(tmp_path / "d.pid")
        steer = await client.send_request("_session/steering", prompt(session, "/keep"))
        got = await answers(client, running, steer)
        assert got[steer]["result"] == {"outcome": "injected"}
        assert got[running]["result"] == {"stopReason": "end_turn"}
        assert alive(daemon)
        await client.result("session/close", {"sessionId": session})
        assert not alive(daemon)


async def test_keep_with_nothing_running_says_so_and_jobs_says_there_are_none(
    tmp_path: Path,
) -> None:
    async with served(AcpServer()) as (client, _server):
        await client.initialize()
        session = await auto_session(client, tmp_path)
        await client.next_response(await client.start_prompt(session, "/keep"))
        assert said(client, session) == "No command is running that could be kept."
        client.updates.clear()
        await client.next_response(await client.start_prompt(session, "/jobs"))
        assert said(client, session).startswith("No jobs")


async def test_a_command_that_is_not_immediate_still_refuses_a_running_turn(
    tmp_path: Path,
) -> None:
    async with served(AcpServer()) as (client, _server):
        await client.initialize()
        session = await auto_session(client, tmp_path)
        running = await client.start_prompt(session, bash(FOREGROUND))
        await pid_in(tmp_path / "d.pid")
        export = await client.send_request("session/prompt", prompt(session, "/export"))
        got = await answers(client, export)
        assert got[export]["error"]["code"] == -32600
        await client.notify("session/cancel", {"sessionId": session})
        assert (await answers(client, running))[running]["result"] == {"stopReason": "cancelled"}


async def test_the_job_commands_are_advertised_in_the_sessions_commands(tmp_path: Path) -> None:
    async with served(AcpServer()) as (client, _server):
        await client.initialize()
        session = await client.new_session(str(tmp_path))
        await client.next_response(await client.start_prompt(session, "/jobs"))
        [*_, update] = [
            u["params"]["update"]
            for u in client.updates
            if u["params"]["update"]["sessionUpdate"] == "available_commands_update"
        ]
        names = [command["name"] for command in update["availableCommands"]]
        assert names[-9:-5] == ["export", "jobs", "kill", "keep"]
