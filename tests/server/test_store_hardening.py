"""The store under adversity, over the wire: descriptor limits, writes that fail, logs that
lie, loads that fail half-way or race. A sidecar under a limit (descriptors, file size, another
user) is a subprocess, the limit set in it; the rest are served in process."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import resource
import shutil
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.protocol.errors import INTERNAL_ERROR
from acp_sidecar.store import LOCK_FILE, SessionStore
from tests import unprivileged
from tests.cards import tool_cards
from tests.server.wire import WireClient, cli_served, spawned

GAP = "Some of this session was not recorded"
NOT_RECORDED = "this session is not being recorded"


def sidecar(
    *args: str, preexec: Callable[[], None] | None = None
) -> AbstractAsyncContextManager[tuple[WireClient, asyncio.subprocess.Process]]:
    """``python -m acp_sidecar ARGS`` with ``preexec`` run in the child."""
    return spawned(*args, stderr=asyncio.subprocess.DEVNULL, preexec_fn=preexec)


def nobodys_sidecar(
    store: Path,
) -> AbstractAsyncContextManager[tuple[WireClient, asyncio.subprocess.Process]]:
    """The sidecar on ``store`` as ``nobody`` (see :mod:`tests.unprivileged`)."""
    return spawned(
        argv=unprivileged.command("--store", str(store)),
        env=unprivileged.environment(),
        inherit_env=False,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def finish(wire: WireClient, process: asyncio.subprocess.Process) -> None:
    """Close the sidecar's input; it must exit cleanly."""
    wire.close()
    assert await asyncio.wait_for(process.wait(), 10) == 0


def limit(kind: int, value: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(kind, (value, value))

    return apply


async def prompt(wire: WireClient, session: str, text: str) -> dict[str, Any]:
    response = await wire.next_response(await wire.start_prompt(session, text), timeout=20)
    assert "result" in response, response
    return response


async def load(wire: WireClient, session: str, cwd: str) -> dict[str, Any]:
    params = {"sessionId": session, "cwd": cwd, "mcpServers": []}
    return await wire.request("session/load", params)


def session_updates(wire: WireClient, session: str) -> list[dict[str, Any]]:
    return [u for u in wire.updates if u["params"]["sessionId"] == session]


def texts_of(updates: list[dict[str, Any]]) -> str:
    return "".join(
        u["params"]["update"]["content"]["text"]
        for u in updates
        if u["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    )


def message_ids(updates: list[dict[str, Any]]) -> set[str]:
    """The ids of the agent messages among ``updates``."""
    return {
        u["params"]["update"]["messageId"]
        for u in updates
        if u["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
    }


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


async def recorded_session(store: Path, cwd: Path) -> str:
    """A stored session of two turns, each reading a file (one card each)."""
    (cwd / "a.txt").write_text("alpha\n")
    (cwd / "b.txt").write_text("beta\n")
    async with cli_served("--store", str(store)) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(cwd))
        await prompt(wire, session, "/read a.txt")
        await prompt(wire, session, "/read b.txt")
    return session


# ---- 9: a bounded number of held logs ------------------------------------------------------


async def all_results(wire: WireClient, pending: set[Any], timeout: float) -> None:
    """Read until every request in ``pending`` is answered with a result (updates are kept;
    ``timeout`` is for each message)."""
    while pending:
        message = await wire.receive(timeout)
        if message.get("method") == "session/update":
            wire.updates.append(message)
        elif message.get("id") in pending:
            assert "result" in message, message
            pending.discard(message["id"])


@pytest.mark.process  # a limit set in the sidecar process
@pytest.mark.timeout(180)  # 200 sessions and 200 loads: about a minute under coverage
async def test_sessions_past_the_descriptor_limit_are_all_recorded_and_loadable(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    (tmp_path / "f.txt").write_text("hello\n")
    cwd = str(tmp_path)
    nofile = limit(resource.RLIMIT_NOFILE, 64)
    async with sidecar("--store", str(store), preexec=nofile) as (wire, process):
        await wire.initialize()
        sessions = [await wire.new_session(cwd) for _ in range(200)]
        for session in sessions:
            response = await prompt(wire, session, "/read f.txt")
            assert response["result"]["stopReason"] == "end_turn"
        assert NOT_RECORDED not in texts_of(wire.updates)
        # A command still runs (it needs descriptors of its own), in the oldest session.
        await wire.result("session/set_mode", {"sessionId": sessions[0], "modeId": "auto"})
        wire.updates.clear()
        await prompt(wire, sessions[0], "!echo still-works")
        cards = tool_cards(wire.updates)
        assert cards[-1]["status"] == "completed", cards[-1]
        assert "still-works" in json.dumps(cards[-1])
        await finish(wire, process)

    for session in sessions:
        kinds = [r["type"] for r in records(store / f"{session}.jsonl")]
        assert kinds[0] == "header" and "tool_result" in kinds and kinds[-1] == "turn_end"

    async with sidecar("--store", str(store), preexec=nofile) as (wire, process):
        await wire.initialize()
        for session in sessions:
            assert "result" in await load(wire, session, cwd)
        for session in sessions[:3]:  # loaded sessions go on, re-opening their logs
            await prompt(wire, session, "/read f.txt")
        await finish(wire, process)
    cards = [r for r in records(store / f"{sessions[0]}.jsonl") if r["type"] == "tool_call"]
    assert len(cards) == 3  # /read, !echo, /read after the load


@pytest.mark.process  # a limit set in the sidecar process
async def test_a_released_log_locked_by_another_process_meanwhile_is_told(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    (tmp_path / "f.txt").write_text("hello\n")
    cwd = str(tmp_path)
    nofile = limit(resource.RLIMIT_NOFILE, 32)  # 8 logs held at most
    async with sidecar("--store", str(store), preexec=nofile) as (wire, process):
        await wire.initialize()
        first = await wire.new_session(cwd)
        await prompt(wire, first, "/read f.txt")
        for _ in range(10):  # the first session's log is released, and its lock with it
            await prompt(wire, await wire.new_session(cwd), "/read f.txt")
        taker = os.open(store / f"{first}.jsonl", os.O_RDONLY)
        try:
            fcntl.flock(taker, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another process takes it
            wire.updates.clear()
            await prompt(wire, first, "/read f.txt")
            told = texts_of(wire.updates)
            assert NOT_RECORDED in told and "open for writing in another" in told, told
        finally:
            os.close(taker)
        await prompt(wire, first, "/read f.txt")
        assert "Recording of this session resumed" in texts_of(wire.updates)
        await finish(wire, process)
    kinds = [r["type"] for r in records(store / f"{first}.jsonl")]
    assert kinds[-5:] == ["gap", "user_message", "tool_call", "tool_result", "turn_end"]
    assert kinds.count("user_message") == 2  # the turn taken from it is missing, and marked


# ---- 16: a failed write is told, retried and marked ----------------------------------------


@pytest.mark.process  # a limit set in the sidecar process
async def test_a_write_past_the_file_size_limit_is_told_and_marked_as_a_gap(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    (tmp_path / "small.txt").write_text("small\n")
    (tmp_path / "big.txt").write_text(
        "".join(f"line {n:04d} " + "x" * 90 + "\n" for n in range(80))
    )
    cwd = str(tmp_path)
    # Python ignores SIGXFSZ from start-up, so a write past the limit fails with EFBIG.
    fsize = limit(resource.RLIMIT_FSIZE, 4096)
    async with sidecar("--store", str(store), preexec=fsize) as (wire, process):
        await wire.initialize()
        session = await wire.new_session(cwd)
        await prompt(wire, session, "/read small.txt")
        assert NOT_RECORDED not in texts_of(wire.updates)
        await prompt(wire, session, "/read big.txt")  # its result cannot fit under the limit
        told = texts_of(wire.updates)
        assert NOT_RECORDED in told and "File too large" in told
        assert "Recording of this session resumed" in told  # the gap and turn end fit
        await prompt(wire, session, "/read small.txt")
        await finish(wire, process)

    kinds = [r["type"] for r in records(store / f"{session}.jsonl")]
    second = kinds.index("user_message", kinds.index("user_message") + 1)
    # The second turn: its call, no result, the gap marked before its end.
    assert kinds[second : second + 4] == ["user_message", "tool_call", "gap", "turn_end"]
    assert kinds[-1] == "turn_end" and kinds.count("tool_result") == 2

    async with cli_served("--store", str(store)) as (wire, _server):
        await wire.initialize()
        assert "result" in await load(wire, session, cwd)
        replayed = texts_of(session_updates(wire, session))
        assert GAP in replayed and "File too large" in replayed
        statuses = [
            u["params"]["update"].get("status")
            for u in session_updates(wire, session)
            if u["params"]["update"]["sessionUpdate"] == "tool_call_update"
        ]
        assert statuses == ["completed", "failed", "completed"]  # the lost result: interrupted


@pytest.mark.process  # a limit set in the sidecar process
async def test_a_log_that_could_not_be_created_is_created_once_it_can_be(tmp_path: Path) -> None:
    unprivileged.require()
    with unprivileged.shared_directory() as shared:
        store = shared / "store"
        store.mkdir(mode=0o755)  # root's: nobody cannot create a log in it yet
        (shared / "a.txt").write_text("alpha\n")
        async with nobodys_sidecar(store) as (wire, process):
            await wire.initialize()
            session = await wire.new_session(str(shared))
            while NOT_RECORDED not in texts_of(wire.updates):  # told, with no prompt
                await wire.next_update()
            assert "Permission denied" in texts_of(wire.updates)
            await prompt(wire, session, "/read a.txt")  # lost, the turn goes on
            os.chown(store, unprivileged.NOBODY, unprivileged.NOBODY)  # the cause goes away
            wire.updates.clear()
            await prompt(wire, session, "/read a.txt")
            assert "Recording of this session resumed" in texts_of(wire.updates)
            await finish(wire, process)
        kinds = [r["type"] for r in records(store / f"{session}.jsonl")]
        assert kinds == ["header", "gap", "user_message", "tool_call", "tool_result", "turn_end"]
        async with cli_served("--store", str(store)) as (wire, _server):
            await wire.initialize()
            assert "result" in await load(wire, session, str(shared))
            assert GAP in texts_of(session_updates(wire, session))


# ---- 17: a load that fails sends nothing and keeps nothing; two loads at once ---------------


async def test_a_newer_record_mid_log_fails_the_load_before_any_update_and_frees_the_lock(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    session = await recorded_session(store, tmp_path)
    path = store / f"{session}.jsonl"
    original = path.read_bytes()
    lines = original.splitlines(keepends=True)
    newer = b'{"v":3,"type":"agent_message","text":"from the future"}\n'
    path.write_bytes(b"".join([*lines[:4], newer, *lines[4:]]))
    async with cli_served("--store", str(store)) as (wire, _server):
        await wire.initialize()
        for _ in range(2):  # the second load must fail the same way: the lock was released
            error = (await load(wire, session, str(tmp_path)))["error"]
            assert error["code"] == INTERNAL_ERROR
            assert "schema version 3" in error["message"], error
            assert error["data"] == {"found": 3, "supported": 2}
            assert session_updates(wire, session) == []  # nothing was replayed
        path.write_bytes(original)
        assert "result" in await load(wire, session, str(tmp_path))
        await prompt(wire, session, "/read a.txt")


async def test_two_loads_of_one_session_at_once_both_succeed(tmp_path: Path) -> None:
    store = tmp_path / "store"
    session = "f" * 32
    with SessionStore(store).create(session, str(tmp_path)) as log:
        log.user_message([{"type": "text", "text": "talk"}])
        for n in range(600):  # more updates than the wire sends before it lets others run
            log.agent_text(f"message {n}")
            log.end_message()
        log.end_turn("end_turn")
    params = {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
    async with cli_served("--store", str(store)) as (wire, _server):
        await wire.initialize()
        first = await wire.send_request("session/load", params)
        second = await wire.send_request("session/load", params)
        assert "result" in await wire.next_response(first)
        assert "result" in await wire.next_response(second), wire.received[-1]
        texts = [
            u["params"]["update"]["content"]["text"]
            for u in session_updates(wire, session)
            if u["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        ]
        assert texts == [f"message {n}" for n in range(600)] * 2  # one whole replay each
        await prompt(wire, session, "hello")  # the session goes on


# ---- 21: the store trusts nothing it finds ----------------------------------------------


async def test_a_log_that_is_a_symlink_outside_the_store_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    session = await recorded_session(store, tmp_path)
    outside = tmp_path / "outside.jsonl"
    path = store / f"{session}.jsonl"
    shutil.move(path, outside)
    path.symlink_to(outside)
    before = outside.read_bytes()
    async with cli_served("--store", str(store)) as (wire, _server):
        await wire.initialize()
        error = (await load(wire, session, str(tmp_path)))["error"]
        assert error["code"] == INTERNAL_ERROR
        assert "is a symbolic link" in error["message"], error
        assert session_updates(wire, session) == []
        listed = await wire.result("session/list", {})
        assert listed["sessions"] == []
    assert outside.read_bytes() == before  # never appended to


async def test_a_log_whose_header_names_another_session_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    session = await recorded_session(store, tmp_path)
    other = "0" * 32
    shutil.copy(store / f"{session}.jsonl", store / f"{other}.jsonl")
    async with cli_served("--store", str(store)) as (wire, _server):
        await wire.initialize()
        error = (await load(wire, other, str(tmp_path)))["error"]
        assert error["code"] == INTERNAL_ERROR
        assert f"holds session {session!r}, not {other!r}" in error["message"], error
        assert session_updates(wire, other) == []
        listed = await wire.result("session/list", {})
        assert [s["sessionId"] for s in listed["sessions"]] == [session]


async def test_copied_tool_lines_replay_each_card_once(tmp_path: Path) -> None:
    store = tmp_path / "store"
    session = await recorded_session(store, tmp_path)
    path = store / f"{session}.jsonl"
    async with cli_served("--store", str(store)) as (wire, _server):
        await wire.initialize()
        assert "result" in await load(wire, session, str(tmp_path))
        expected = session_updates(wire, session)
    assert len(tool_cards(expected)) == 4
    lines = path.read_bytes().splitlines(keepends=True)
    kinds = [json.loads(line)["type"] for line in lines]
    call, result = kinds.index("tool_call"), kinds.index("tool_result")
    # Each call and result doubled in place, and the first call and result copied at the end.
    tools = ("tool_call", "tool_result")
    doubled = [
        copy
        for line, kind in zip(lines, kinds, strict=True)
        for copy in [line] * (2 if kind in tools else 1)
    ] + [lines[call], lines[result]]
    written = path.stat()
    path.write_bytes(b"".join(doubled))
    # The same session, copied lines and all: its last activity (updatedAt) is unchanged.
    os.utime(path, ns=(written.st_atime_ns, written.st_mtime_ns))
    async with cli_served("--store", str(store)) as (wire, _server):
        await wire.initialize()
        assert "result" in await load(wire, session, str(tmp_path))
        assert session_updates(wire, session) == expected


@pytest.mark.process  # a limit set in the sidecar process
async def test_a_message_streamed_while_logs_are_released_replays_whole(tmp_path: Path) -> None:
    # More sessions stream at once than logs are held: each release writes the pending text,
    # so one message is stored in several identical pieces; every piece must come back.
    store = tmp_path / "store"
    nofile = limit(resource.RLIMIT_NOFILE, 32)  # 8 logs held at most
    script = ("--driver", "tests.drivers:ScriptDriver")
    async with sidecar(*script, "--store", str(store), preexec=nofile) as (wire, process):
        await wire.initialize()
        sessions = [await wire.new_session(str(tmp_path)) for _ in range(10)]
        pending = {
            await wire.start_prompt(session, "flood 2000", echoed=False) for session in sessions
        }
        await all_results(wire, pending, timeout=60)
        live = texts_of(session_updates(wire, sessions[0]))
        assert live.count("chunk") == 2000
        live_ids = {s: message_ids(session_updates(wire, s)) for s in sessions}
        assert all(len(ids) == 1 for ids in live_ids.values())  # one message each
        await finish(wire, process)
    async with cli_served(*script, "--store", str(store)) as (wire, _server):
        await wire.initialize()
        for session in sessions:
            wire.updates.clear()
            assert "result" in await load(wire, session, str(tmp_path))
            assert texts_of(session_updates(wire, session)) == live, session
            # Every piece comes back under the message's one id.
            assert message_ids(session_updates(wire, session)) == live_ids[session], session


@pytest.mark.process  # a limit set in the sidecar process
async def test_a_log_this_process_cannot_write_is_refused_clearly(tmp_path: Path) -> None:
    unprivileged.require()
    with unprivileged.shared_directory() as shared:
        store = shared / "store"
        session = await recorded_session(store, shared)
        for path in (store, store / LOCK_FILE):  # nobody's store, with root's log in it
            os.chown(path, unprivileged.NOBODY, unprivileged.NOBODY)
        (store / f"{session}.jsonl").chmod(0o644)  # root's, readable by nobody, not writable
        async with nobodys_sidecar(store) as (wire, process):
            await wire.initialize()
            error = (await load(wire, session, str(shared)))["error"]
            assert error["code"] == INTERNAL_ERROR
            assert "cannot be opened to write it by this process" in error["message"], error
            assert "Errno" not in error["message"] and "Traceback" not in json.dumps(error)
            assert session_updates(wire, session) == []
            await finish(wire, process)


@pytest.fixture(autouse=True)
def _no_store_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACP_SIDECAR_STORE", raising=False)


@pytest.mark.process  # a limit set in the sidecar process
async def test_many_loads_at_once_stay_within_the_descriptor_limit(tmp_path: Path) -> None:
    # Each load holds a writer's and a reader's descriptor until it answers; 20 loads held
    # back by a client not yet reading would need 40 at once, over the limit of 32.
    store = SessionStore(tmp_path / "store")
    sessions = [f"{n + 1:032x}" for n in range(20)]
    for session in sessions:
        with store.create(session, str(tmp_path)) as log:
            log.user_message([{"type": "text", "text": "hi"}])
            for n in range(40):  # over the pipe's buffer: the replay waits for the client
                log.agent_text(f"{n:04d}" + "x" * 8188)
                log.end_message()
            log.end_turn("end_turn")
    nofile = limit(resource.RLIMIT_NOFILE, 32)
    async with sidecar("--store", str(store.directory), preexec=nofile) as (wire, process):
        await wire.initialize()
        params = [{"sessionId": s, "cwd": str(tmp_path), "mcpServers": []} for s in sessions]
        pending = {await wire.send_request("session/load", p) for p in params}
        await asyncio.sleep(1)  # every load has started and is held back by the full pipe
        await all_results(wire, pending, timeout=30)
        expected = "".join(f"{n:04d}" + "x" * 8188 for n in range(40))
        for session in sessions:
            assert texts_of(session_updates(wire, session)) == expected, session
        await finish(wire, process)
