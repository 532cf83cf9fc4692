"""session/resume, session/close, session/delete and additionalDirectories over the wire (every
message the sidecar writes is checked against the ACP schema by the wire client)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import LOCK_FILE, SCHEMA_VERSION, SessionStore, UsageRecord
from tests.server.test_sessions import record_a_session, server
from tests.server.wire import WireClient, served

SLOW_STREAM = '/stream {"command": "tick", "lines": 400, "delay_ms": 25}'
"""A tool call that prints a line every 25 ms for 10 s unless cancelled."""


@pytest.fixture
def cwd(tmp_path: Path) -> str:
    (tmp_path / "ws").mkdir()  # session/new takes an existing directory only
    return str(tmp_path / "ws")


def attach_params(session: str, cwd: str, **more: Any) -> dict[str, Any]:
    return {"sessionId": session, "cwd": cwd, "mcpServers": [], **more}


async def answers(wire: WireClient, *ids: Any) -> dict[Any, dict[str, Any]]:
    """Read until every request of ``ids`` is answered (in any order); updates are kept."""
    got: dict[Any, dict[str, Any]] = {}
    while len(got) < len(ids):
        message = await wire.receive()
        if message.get("method") == "session/update":
            wire.updates.append(message)
            continue
        assert "method" not in message and message.get("id") in ids, message
        got[message["id"]] = message
    return got


async def update_of_kind(wire: WireClient, kind: str) -> dict[str, Any]:
    """Read updates until one of ``kind``; its ``update``."""
    while True:
        update: dict[str, Any] = (await wire.next_update())["params"]["update"]
        if update["sessionUpdate"] == kind:
            return update


def log_lines(store: Path, session: str) -> list[dict[str, Any]]:
    """The log's records as JSON, without their times (tests/store checks those)."""
    lines = (store / f"{session}.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k != "t"} for line in lines]


def prompts_of(updates: list[dict[str, Any]]) -> list[str]:
    return [
        m["params"]["update"]["content"]["text"]
        for m in updates
        if m["params"]["update"]["sessionUpdate"] == "user_message_chunk"
    ]


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Any]:
    """Holds a stored session's log from another process, as a sidecar writing it would."""
    holders: list[subprocess.Popen[str]] = []

    def hold(session: str) -> None:
        code = (
            "import time; from acp_sidecar.store import SessionStore; "
            f"w = SessionStore({str(tmp_path)!r}).reopen({session!r}); "
            "print('locked', flush=True); time.sleep(30)"
        )
        holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        holders.append(holder)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"

    yield hold
    for holder in holders:
        holder.kill()
        holder.wait()


# ---- capabilities --------------------------------------------------------------------------


async def test_capabilities_with_a_store(tmp_path: Path) -> None:
    async with served(server(tmp_path)) as (wire, _server):
        capabilities = (await wire.initialize())["agentCapabilities"]["sessionCapabilities"]
    assert capabilities == {
        "list": {},
        "resume": {},
        "close": {},
        "delete": {},
        "additionalDirectories": {},
        "fork": {},  # unstable schema (tests/server/test_fork.py)
    }


async def test_without_a_store_only_close_and_extra_roots_are_offered(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    bare = AcpServer(tools=ToolsProvider(builtins=False, entry_points=False))
    async with served(bare) as (wire, _server):
        capabilities = (await wire.initialize())["agentCapabilities"]["sessionCapabilities"]
        assert capabilities == {"close": {}, "additionalDirectories": {}}
        session = await wire.result(
            "session/new",
            {
                "cwd": str(tmp_path),
                "mcpServers": [],
                "additionalDirectories": [str(tmp_path / "lib")],
            },
        )
        session_id = session["sessionId"]
        resume = await wire.error("session/resume", attach_params(session_id, str(tmp_path)))
        assert resume["code"] == -32601
        assert (await wire.error("session/delete", {"sessionId": session_id}))["code"] == -32601
        assert await wire.result("session/close", {"sessionId": session_id}) == {}
        # Closed, and nothing stored: it is gone.
        again = await wire.error("session/close", {"sessionId": session_id})
        assert again["code"] == RESOURCE_NOT_FOUND


# ---- resume --------------------------------------------------------------------------------


async def test_resume_reattaches_without_replaying_and_the_log_goes_on(
    tmp_path: Path, cwd: str
) -> None:
    async with served(server(tmp_path)) as (wire, _server):
        session, _live = await record_a_session(wire, cwd)
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        result = await wire.result("session/resume", attach_params(session, cwd))
        assert wire.updates == []  # nothing of the history came before the answer
        assert result["modes"]["currentModeId"] == "auto"
        # After the answer: the commands and the mode state, as after a load.
        commands = await update_of_kind(wire, "available_commands_update")
        assert {c["name"] for c in commands["availableCommands"]} >= {"look", "stream"}
        mode = await update_of_kind(wire, "current_mode_update")
        assert mode["currentModeId"] == "auto"
        assert prompts_of(wire.updates) == []
        wire.updates.clear()
        done = await wire.next_response(await wire.start_prompt(session, "/look after.md"))
        assert done["result"] == {"stopReason": "end_turn"}
    lines = log_lines(tmp_path, session)
    assert sum(line["type"] == "header" for line in lines) == 1  # the same log, appended to
    assert [line["type"] for line in lines[-3:]] == ["tool_call", "tool_result", "turn_end"]
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        await wire.result("session/load", attach_params(session, cwd))
        assert prompts_of(wire.updates)[-1] == "/look after.md"
        assert len(prompts_of(wire.updates)) == 5


def meters(wire: WireClient) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]
        for m in wire.updates
        if m["params"]["update"]["sessionUpdate"] == "usage_update"
    ]


def stored_with_usage(store: Path, cwd: str, *usage: UsageRecord) -> str:
    """A stored session whose one turn recorded ``usage`` (as a model turn keeps it)."""
    with SessionStore(store, fsync="never").create("metered", cwd, mode="auto") as writer:
        writer.user_message([{"type": "text", "text": "hi"}])
        writer.agent_text("Hello.")
        writer.end_message()
        for record in usage:
            writer.append(record)
        writer.end_turn("end_turn")
    return "metered"


async def test_resume_sends_the_context_meter_the_log_left_as_a_load_ends_with(
    tmp_path: Path, cwd: str
) -> None:
    session = stored_with_usage(
        tmp_path,
        cwd,
        UsageRecord("m", 1000, 100, context_window=8000, cost=0.003, currency="USD"),
        UsageRecord("m", 2000, 200, context_window=8000, cost=0.009, currency="USD"),
        # a summary's request: it counts toward the cost, but is no reading of the meter
        UsageRecord("m", 500, 50, cost=0.01, currency="USD"),
    )
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        await wire.result("session/load", attach_params(session, cwd))
        loaded = meters(wire)[-1]
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        await wire.result("session/resume", attach_params(session, cwd))
        assert wire.updates == []  # nothing before the answer
        meter = await update_of_kind(wire, "usage_update")  # validated by the wire client
        kinds = [m["params"]["update"]["sessionUpdate"] for m in wire.updates]
    expected = {
        "sessionUpdate": "usage_update",
        "used": 2200,
        "size": 8000,
        "cost": {"amount": 0.009, "currency": "USD"},
    }
    assert meter == loaded == expected
    assert kinds == ["available_commands_update", "current_mode_update", "usage_update"]


async def test_resume_sends_no_meter_when_no_response_read_one(tmp_path: Path, cwd: str) -> None:
    # a model without a known window: usage kept, no meter live, none on resume either
    session = stored_with_usage(tmp_path, cwd, UsageRecord("m", 100, 5))
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        await wire.result("session/resume", attach_params(session, cwd))
        await update_of_kind(wire, "current_mode_update")
        # the next message is the prompt's own traffic: no meter came in between
        done = await wire.next_response(await wire.start_prompt(session, "/look x"))
        assert done["result"] == {"stopReason": "end_turn"}
        assert meters(wire) == []


@pytest.mark.process  # a log held by another process
async def test_resume_errors_are_loads_errors(tmp_path: Path, cwd: str, held: Any) -> None:
    async with served(server(tmp_path)) as (wire, _server):
        session, _live = await record_a_session(wire, cwd)
    header = log_lines(tmp_path, session)[0]
    (tmp_path / "newer.jsonl").write_text(
        json.dumps({**header, "v": 99, "sessionId": "newer"}) + "\n"
    )
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        missing = await wire.error("session/resume", attach_params("nope", cwd))
        assert missing["code"] == RESOURCE_NOT_FOUND and "nope" in missing["message"]
        wrong = await wire.error("session/resume", attach_params(session, "/elsewhere"))
        assert wrong["code"] == INVALID_PARAMS
        assert cwd in wrong["message"] and "/elsewhere" in wrong["message"]
        version = await wire.error("session/resume", attach_params("newer", cwd))
        assert version["code"] == INTERNAL_ERROR and "99" in version["message"]
        relative = await wire.error(
            "session/resume", attach_params(session, cwd, additionalDirectories=[cwd, "lib"])
        )
        assert relative["code"] == INVALID_PARAMS
        assert relative["message"].startswith("Invalid params: additionalDirectories/1:")
        assert wire.updates == []  # nothing was sent before these errors
        held(session)
        locked = await wire.error("session/resume", attach_params(session, cwd))
        assert locked["code"] == INTERNAL_ERROR and "another" in locked["message"]
        assert wire.updates == []


# ---- close ---------------------------------------------------------------------------------


async def test_close_cancels_the_turn_stops_its_tool_and_releases_the_log(
    tmp_path: Path, cwd: str
) -> None:
    async with served(server(tmp_path)) as (wire, srv):
        await wire.initialize(_meta={"terminal_output": True})
        session = await wire.new_session(cwd)
        await wire.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
        prompt = await wire.start_prompt(session, SLOW_STREAM)
        call = await update_of_kind(wire, "tool_call")
        close = await wire.send_request("session/close", {"sessionId": session})
        got = await answers(wire, prompt, close)
        assert got[prompt]["result"] == {"stopReason": "cancelled"}
        assert got[close]["result"] == {}
        statuses = [
            m["params"]["update"].get("status")
            for m in wire.updates
            if m["params"]["update"].get("toolCallId") == call["toolCallId"]
        ]
        assert [s for s in statuses if s is not None][-1] == "failed"
        assert session not in srv.sessions
        # The log is whole and unlocked: another writer (another process) could take it now.
        lines = log_lines(tmp_path, session)
        assert lines[-1] == {"v": SCHEMA_VERSION, "type": "turn_end", "stopReason": "cancelled"}
        SessionStore(tmp_path).reopen(session).close()
        gone = await wire.error(
            "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}
        )
        assert gone["code"] == RESOURCE_NOT_FOUND
        # Closed sessions come back: by resume here (or load, or another process).
        await wire.result("session/resume", attach_params(session, cwd))
        again = await wire.next_response(await wire.start_prompt(session, "/look x"))
        assert again["result"] == {"stopReason": "end_turn"}


async def test_close_of_a_session_not_open_here(tmp_path: Path, cwd: str) -> None:
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(cwd)  # never prompted: still stored, resumable
        assert await wire.result("session/close", {"sessionId": session}) == {}
        # Stored but not open here: closing it again is a success that does nothing.
        assert await wire.result("session/close", {"sessionId": session}) == {}
        unknown = await wire.error("session/close", {"sessionId": "never-was"})
        assert unknown["code"] == RESOURCE_NOT_FOUND and "never-was" in unknown["message"]
        await wire.result("session/resume", attach_params(session, cwd))


# ---- delete --------------------------------------------------------------------------------


async def test_delete_removes_the_session_from_list_and_store(tmp_path: Path, cwd: str) -> None:
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        kept = await wire.new_session(cwd)
        await wire.next_response(await wire.start_prompt(kept, "keep me"))
        session = await wire.new_session(cwd)
        await wire.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
        await wire.next_response(await wire.start_prompt(session, "delete me"))
        # Open here and running a turn: it is closed first (the turn answers cancelled).
        prompt = await wire.start_prompt(session, SLOW_STREAM)
        await update_of_kind(wire, "tool_call")
        delete = await wire.send_request("session/delete", {"sessionId": session})
        got = await answers(wire, prompt, delete)
        assert got[prompt]["result"] == {"stopReason": "cancelled"}
        assert got[delete]["result"] == {}
        listed = await wire.result("session/list", {})
        assert [s["sessionId"] for s in listed["sessions"]] == [kept]
        # No debris: the lock file holds no session's data.
        assert sorted(os.listdir(tmp_path)) == sorted(["ws", f"{kept}.jsonl", LOCK_FILE])
        for method, params in (
            ("session/load", attach_params(session, cwd)),
            ("session/resume", attach_params(session, cwd)),
            ("session/delete", {"sessionId": session}),
        ):
            error = await wire.error(method, params)
            assert error["code"] == RESOURCE_NOT_FOUND, method


@pytest.mark.process
async def test_delete_refuses_a_session_open_in_another_process(
    tmp_path: Path, cwd: str, held: Any
) -> None:
    async with served(server(tmp_path)) as (wire, _server):
        session, _live = await record_a_session(wire, cwd)
    before = (tmp_path / f"{session}.jsonl").read_bytes()
    held(session)
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        error = await wire.error("session/delete", {"sessionId": session})
        assert error["code"] == INTERNAL_ERROR
        assert session in error["message"] and "another" in error["message"]
        assert (tmp_path / f"{session}.jsonl").read_bytes() == before
        listed = await wire.result("session/list", {})
        assert [s["sessionId"] for s in listed["sessions"]] == [session]


async def test_delete_refuses_a_link_and_leaves_it(tmp_path: Path, cwd: str) -> None:
    async with served(server(tmp_path)) as (wire, _server):
        session, _live = await record_a_session(wire, cwd)
    target = tmp_path / "ws" / "precious.jsonl"
    target.write_bytes((tmp_path / f"{session}.jsonl").read_bytes())
    (tmp_path / "linked.jsonl").symlink_to(target)
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        error = await wire.error("session/delete", {"sessionId": "linked"})
        assert error["code"] == INTERNAL_ERROR and "symbolic link" in error["message"]
    assert (tmp_path / "linked.jsonl").is_symlink() and target.exists()


# ---- additionalDirectories -----------------------------------------------------------------


async def test_extra_roots_are_checked_stored_listed_and_restored(tmp_path: Path, cwd: str) -> None:
    lib, docs = tmp_path / "lib", tmp_path / "docs"
    lib.mkdir()
    docs.mkdir()
    (tmp_path / "file.txt").write_text("x")
    async with served(server(tmp_path)) as (wire, srv):
        await wire.initialize()
        for bad, reason in (
            ("relative/dir", "must be an absolute path"),
            (str(tmp_path / "missing"), "no such directory"),
            (str(tmp_path / "file.txt"), "not a directory"),
        ):
            error = await wire.error(
                "session/new",
                {"cwd": cwd, "mcpServers": [], "additionalDirectories": [str(lib), bad]},
            )
            assert error["code"] == INVALID_PARAMS
            assert error["message"].startswith("Invalid params: additionalDirectories/1: ")
            assert reason in error["message"]
        new = await wire.result(
            "session/new", {"cwd": cwd, "mcpServers": [], "additionalDirectories": [str(lib)]}
        )
        session = new["sessionId"]
        assert srv.sessions[session].additional_directories == (str(lib),)
        await wire.next_response(await wire.start_prompt(session, "with a library"))
        listed = await wire.result("session/list", {})
        assert listed["sessions"][0]["additionalDirectories"] == [str(lib)]
        assert log_lines(tmp_path, session)[0]["additionalDirectories"] == [str(lib)]
        await wire.result("session/close", {"sessionId": session})
        # A non-empty list replaces the stored one, and the change is in the log.
        await wire.result(
            "session/resume", attach_params(session, cwd, additionalDirectories=[str(docs)])
        )
        assert srv.sessions[session].additional_directories == (str(docs),)
        listed = await wire.result("session/list", {})
        assert listed["sessions"][0]["additionalDirectories"] == [str(docs)]
        assert log_lines(tmp_path, session)[-1] == {
            "v": SCHEMA_VERSION,
            "type": "directories",
            "additionalDirectories": [str(docs)],
        }
        await wire.result("session/close", {"sessionId": session})
    async with served(server(tmp_path)) as (wire, srv):
        await wire.initialize()
        # None named: the stored ones are restored, by load as by resume.
        await wire.result("session/load", attach_params(session, cwd))
        assert srv.sessions[session].additional_directories == (str(docs),)
        assert prompts_of(wire.updates) == ["with a library"]


async def test_a_tool_reaches_an_extra_root_and_nothing_beside_it(tmp_path: Path, cwd: str) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "api.txt").write_text("the library\n")
    (tmp_path / "secret.txt").write_text("top secret\n")
    builtins = AcpServer(
        tools=ToolsProvider(entry_points=False), store=lambda: SessionStore(tmp_path / "store")
    )
    async with served(builtins) as (wire, _server):
        await wire.initialize()
        outcomes = {}
        for roots in ([str(lib)], []):
            new = await wire.result(
                "session/new", {"cwd": cwd, "mcpServers": [], "additionalDirectories": roots}
            )
            session = new["sessionId"]
            for path in (lib / "api.txt", tmp_path / "secret.txt"):
                wire.updates.clear()
                await wire.next_response(await wire.start_prompt(session, f"/read {path}"))
                statuses = [m["params"]["update"].get("status") for m in wire.updates]
                outcomes[(bool(roots), path.name)] = [s for s in statuses if s][-1]
    assert outcomes == {
        (True, "api.txt"): "completed",
        (True, "secret.txt"): "failed",
        (False, "api.txt"): "failed",
        (False, "secret.txt"): "failed",
    }
