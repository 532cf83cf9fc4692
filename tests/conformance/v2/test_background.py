"""Background work over v2, in process with the console driver: a ``bash`` call kept as a job
is listed in every ``state_update``'s ``background`` as its terminal, announced as cancellable
first; its output after the call returned arrives as ``terminal_output_chunk``; its exit (by
itself, also while the session is idle, or by ``terminal/cancel``) is its ``exitStatus`` with
the capabilities cleared, then a snapshot without it. ``tool_call/cancel`` stops one running
call: its card ends ``cancelled`` and the turn goes on to its normal end. Bad ids are
``-32602``. Every message is judged by the v2 schema (``WireClient.version = 2``).

Spec: the vendored ``tests/fixtures/acp/v2/schema.json`` (``BackgroundWork``,
``TerminalUpdate``, ``TerminalCapabilities``, ``ToolCallCapabilities``,
``CancelTerminalRequest``, ``CancelToolCallRequest``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.conformance.v2.recorded import resume_params, v2_client
from tests.conformance.v2.test_prompt_lifecycle import prompt, until, until_idle, v2_session
from tests.conformance.v2.test_tool_calls import auto, folded
from tests.server.wire import WireClient

Update = dict[str, Any]

WAITS = "while [ ! -e {0} ]; do sleep 0.02; done"
"""A shell loop that ends once the test creates file ``{0}`` (no clock in the test)."""


def bash(command: str, *, background: bool = False) -> str:
    return "/bash " + json.dumps({"command": command, "background": background})


def states(updates: list[Update]) -> list[Update]:
    return [u for u in updates if u["sessionUpdate"] == "state_update"]


def listed(state: Update) -> list[str]:
    assert all(item["type"] == "terminal" for item in state["background"]), state
    return [item["terminalId"] for item in state["background"]]


def output(updates: list[Update], terminal_id: str) -> str:
    return b"".join(
        base64.b64decode(u["data"])
        for u in updates
        if u["sessionUpdate"] == "terminal_output_chunk" and u["terminalId"] == terminal_id
    ).decode()


def exited(terminal_id: str) -> Callable[[Update], bool]:
    return lambda u: (
        u["sessionUpdate"] == "terminal_update"
        and u["terminalId"] == terminal_id
        and "exitStatus" in u
    )


def idle_snapshot(update: Update) -> bool:
    return update["sessionUpdate"] == "state_update" and update["state"] == "idle"


async def keep_job(client: WireClient, session_id: str, command: str) -> tuple[str, list[Update]]:
    """Run ``command`` with ``background`` to the turn's end; its terminal and the updates."""
    await auto(client, session_id)
    await client.result("session/prompt", prompt(session_id, bash(command, background=True)))
    updates = await until_idle(client, session_id)
    assert updates[-1]["stopReason"] == "end_turn", updates[-1]
    (terminal_id,) = listed(updates[-1])
    return terminal_id, updates


async def test_a_kept_job_is_listed_announced_first_and_its_later_output_arrives(
    tmp_path: Path,
) -> None:
    command = f"echo started; {WAITS.format('go')}; echo later; {WAITS.format('stop')}; exit 4"
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        terminal_id, updates = await keep_job(client, session_id, command)
        card = folded(updates)
        assert card["toolCallId"] == terminal_id  # the job's terminal is its call's card's
        assert {"type": "terminal", "terminalId": terminal_id} in card["content"]
        announced = [
            i
            for i, u in enumerate(updates)
            if u["sessionUpdate"] == "terminal_update" and "capabilities" in u
        ]
        assert [updates[i]["capabilities"] for i in announced] == [{"cancel": {}}]
        snapshots = states(updates)
        assert listed(snapshots[0]) == []  # running, before the call
        first = next(i for i, u in enumerate(updates) if u in snapshots and listed(u))
        assert announced[0] < first
        assert all(listed(u) == [terminal_id] for u in updates[first:] if u in snapshots)
        assert output(updates, terminal_id).startswith("started\n")

        (tmp_path / "go").touch()
        later = await until(client, session_id, lambda u: "later" in output([u], terminal_id))
        assert not states(later)  # output alone changes no state
        (tmp_path / "stop").touch()
        ended = await until(client, session_id, exited(terminal_id))
        assert ended[-1]["exitStatus"] == {"exitCode": 4}
        assert ended[-1]["capabilities"] is None
        (snapshot,) = await until(client, session_id, idle_snapshot)
        assert listed(snapshot) == []  # idle: it ended while no turn ran
        assert "stopReason" not in snapshot  # a repeated snapshot ends no turn


async def test_terminal_cancel_kills_the_job_then_a_list_without_it(tmp_path: Path) -> None:
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        terminal_id, _ = await keep_job(client, session_id, "echo up; exec sleep 300")
        params = {"sessionId": session_id, "terminalId": terminal_id}
        assert await client.result("terminal/cancel", params) == {}
        ended = await until(client, session_id, exited(terminal_id))
        assert ended[-1]["exitStatus"] == {"signal": "SIGTERM"}
        assert ended[-1]["capabilities"] is None
        (snapshot,) = await until(client, session_id, idle_snapshot)
        assert listed(snapshot) == []
        error = await client.error("terminal/cancel", params)
    assert error["code"] == -32602
    assert error["message"] == (
        f"Invalid params: terminalId: terminal {terminal_id} is not running in session "
        f"{session_id} (unknown, or it exited)"
    )


async def test_terminal_cancel_of_an_unknown_terminal_is_invalid_params(tmp_path: Path) -> None:
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        params = {"sessionId": session_id, "terminalId": "no-such-terminal"}
        error = await client.error("terminal/cancel", params)
    assert error == {
        "code": -32602,
        "message": (
            f"Invalid params: terminalId: terminal no-such-terminal is not running in session "
            f"{session_id} (unknown, or it exited)"
        ),
    }


async def test_every_state_update_carries_the_list_even_empty(tmp_path: Path) -> None:
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        await auto(client, session_id)
        await client.result("session/prompt", prompt(session_id, bash("echo hi")))
        updates = await until_idle(client, session_id)
    assert [listed(s) for s in states(updates)] == [[], []]
    assert not [
        u for u in updates if "capabilities" in u and u["sessionUpdate"] == "terminal_update"
    ]


def advertised(call_id: str) -> Callable[[Update], bool]:
    return lambda u: (
        u["sessionUpdate"] == "tool_call_update"
        and u["toolCallId"] == call_id
        and u.get("capabilities") == {"cancel": {}}
    )


async def test_tool_call_cancel_stops_one_call_and_the_turn_ends_normally(tmp_path: Path) -> None:
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        await auto(client, session_id)
        command = f"echo running; {WAITS.format('never')}"
        await client.result("session/prompt", prompt(session_id, bash(command)))
        opened = await until(client, session_id, lambda u: u["sessionUpdate"] == "tool_call_update")
        call_id = opened[-1]["toolCallId"]
        before = await until(client, session_id, advertised(call_id))
        assert [u["state"] for u in states(opened + before)] == ["running"]
        params = {"sessionId": session_id, "toolCallId": call_id}
        assert await client.result("tool_call/cancel", params) == {}
        rest = await until_idle(client, session_id)
        assert rest[-1]["stopReason"] == "end_turn"  # the turn went on to its end
        card = folded(opened + before + rest)
        assert card["status"] == "cancelled"
        final = [u for u in rest if u["sessionUpdate"] == "tool_call_update"][-1]
        assert final["status"] == "cancelled" and final["capabilities"] is None
        assert [u["state"] for u in states(rest)] == ["idle"]  # cancelling changed no state
        ended = [u for u in rest if exited(call_id)(u)]
        assert [u["exitStatus"] for u in ended] == [{"signal": "SIGTERM"}]
        error = await client.error("tool_call/cancel", params)
    assert error == {
        "code": -32602,
        "message": (
            f"Invalid params: toolCallId: tool call {call_id} is not running in session "
            f"{session_id} (unknown, or final)"
        ),
    }


async def test_tool_call_cancel_of_an_unknown_call_is_invalid_params(tmp_path: Path) -> None:
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        params = {"sessionId": session_id, "toolCallId": "no-such-call"}
        error = await client.error("tool_call/cancel", params)
    assert error == {
        "code": -32602,
        "message": (
            f"Invalid params: toolCallId: tool call no-such-call is not running in session "
            f"{session_id} (unknown, or final)"
        ),
    }


async def test_a_call_is_cancellable_while_it_runs_and_not_once_final(tmp_path: Path) -> None:
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        await auto(client, session_id)
        await client.result("session/prompt", prompt(session_id, bash("echo hi")))
        updates = await until_idle(client, session_id)
    patches = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    controls = [u["capabilities"] for u in patches if "capabilities" in u]
    assert controls == [{"cancel": {}}, None]
    assert patches[-1]["status"] == "completed" and patches[-1]["capabilities"] is None
    assert "capabilities" not in patches[0]  # pending: not yet running


async def test_a_job_ending_during_a_turn_is_dropped_by_a_running_snapshot(tmp_path: Path) -> None:
    async with v2_session(tmp_path, driver=None) as (client, session_id):
        terminal_id, _ = await keep_job(client, session_id, f"{WAITS.format('stop')}; exit 0")
        command = f"touch stop; {WAITS.format('done')}"  # ends the job, then runs on
        await client.result("session/prompt", prompt(session_id, bash(command)))
        ended = await until(client, session_id, exited(terminal_id))
        assert ended[-1]["exitStatus"] == {"exitCode": 0}
        assert [listed(s) for s in states(ended)] == [[terminal_id]]  # the turn's running
        snapshot = await until(client, session_id, lambda u: u in states([u]))
        assert snapshot[-1]["state"] == "running" and listed(snapshot[-1]) == []
        (tmp_path / "done").touch()
        rest = await until_idle(client, session_id)
    assert rest[-1]["stopReason"] == "end_turn" and listed(rest[-1]) == []


async def test_a_session_closed_and_resumed_on_one_connection_keeps_jobs_and_cancels(
    tmp_path: Path,
) -> None:
    async with v2_client(tmp_path / "store") as (client, _):
        created = await client.result("session/new", {"cwd": str(tmp_path)})
        session_id = created["sessionId"]
        first, _ = await keep_job(client, session_id, "echo up; exec sleep 300")
        assert await client.result("session/close", {"sessionId": session_id}) == {}
        await until(client, session_id, exited(first))  # its job stopped with it (before)
        (closed,) = await until(client, session_id, idle_snapshot)
        assert listed(closed) == []
        await client.result("session/resume", resume_params(session_id, tmp_path))
        (snapshot,) = await until(client, session_id, idle_snapshot)
        assert listed(snapshot) == []
        terminal_id, updates = await keep_job(client, session_id, "echo again; exec sleep 300")
        assert terminal_id != first
        patches = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
        assert [u["capabilities"] for u in patches if "capabilities" in u] == [{"cancel": {}}, None]
        announced = [u for u in updates if u["sessionUpdate"] == "terminal_update"]
        assert {"terminalId": terminal_id, "capabilities": {"cancel": {}}} in [
            {k: u[k] for k in ("terminalId", "capabilities") if k in u} for u in announced
        ]
        params = {"sessionId": session_id, "terminalId": terminal_id}
        assert await client.result("terminal/cancel", params) == {}
        ended = await until(client, session_id, exited(terminal_id))
        assert ended[-1]["exitStatus"] == {"signal": "SIGTERM"}
        (snapshot,) = await until(client, session_id, idle_snapshot)
        assert listed(snapshot) == []
