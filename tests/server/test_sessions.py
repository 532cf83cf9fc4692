"""Stored sessions over the wire: session/load replays, session/list pages, errors are clear."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionLog, SessionStore
from tests.cards import tool_cards
from tests.server.wire import WireClient, served
from tests.tooling import TOOLS


def server(store_dir: Path) -> AcpServer:
    return AcpServer(
        tools=ToolsProvider(builtins=False, entry_points=False, extra=TOOLS),
        store=lambda: SessionStore(store_dir),
    )


@pytest.fixture
async def first(tmp_path: Path) -> AsyncIterator[WireClient]:
    async with served(server(tmp_path)) as (wire, _server):
        yield wire


def messages_of(updates: list[dict[str, Any]], kind: str) -> list[str]:
    return [
        m["params"]["update"]["content"]["text"]
        for m in updates
        if m["params"]["update"]["sessionUpdate"] == kind
    ]


async def record_a_session(wire: WireClient, cwd: str) -> tuple[str, list[dict[str, Any]]]:
    await wire.initialize(_meta={"terminal_output": True})
    session = await wire.new_session(cwd)
    await wire.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
    wire.updates.clear()
    for text in (
        "hello",
        '/note {"path": "a.txt", "old": "1", "new": "2"}',
        '/stream {"command": "make", "lines": 20, "delay_ms": 1}',
        "/look README.md",
    ):
        await wire.next_response(await wire.start_prompt(session, text))
    return session, list(wire.updates)


async def test_load_replays_every_card_as_it_was_shown_live(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()  # session/new takes an existing directory only
    cwd = str(tmp_path / "ws")
    async with served(server(tmp_path)) as (wire, _server):
        session, live = await record_a_session(wire, cwd)
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize(_meta={"terminal_output": True})
        response = await wire.request(
            "session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []}
        )
        assert response["result"]["modes"]["currentModeId"] == "auto"
        replayed = list(wire.updates)
        assert tool_cards(replayed) == tool_cards(live)
        assert messages_of(replayed, "agent_message_chunk") == [
            "".join(messages_of(live, "agent_message_chunk")[:1])
        ]
        prompts = [
            m["params"]["update"]["content"]["text"]
            for m in replayed
            if m["params"]["update"]["sessionUpdate"] == "user_message_chunk"
        ]
        assert prompts[0] == "hello" and len(prompts) == 4
        assert replayed[-2]["params"]["update"] == {
            "sessionUpdate": "current_mode_update",
            "currentModeId": "auto",
        }
        info = replayed[-1]["params"]["update"]
        assert info["sessionUpdate"] == "session_info_update" and info["title"] == "hello"
        # The session goes on, appending to the same log.
        wire.updates.clear()
        await wire.next_response(await wire.start_prompt(session, "/look more.md"))
        assert tool_cards(wire.updates)[-1]["status"] == "completed"
    lines = (tmp_path / f"{session}.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["type"] == "turn_end"
    assert sum(json.loads(line)["type"] == "user_message" for line in lines) == 5


async def test_list_pages_newest_first_with_titles(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()  # session/new takes an existing directory only
    cwd = str(tmp_path / "ws")
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        ids = []
        for index in range(3):
            session = await wire.new_session(cwd)
            await wire.next_response(await wire.start_prompt(session, f"prompt number {index}"))
            ids.append(session)
            os.utime(tmp_path / f"{session}.jsonl", (1_000_000 + index, 1_000_000 + index))
        other = await wire.new_session(str(tmp_path))
        await wire.next_response(await wire.start_prompt(other, "elsewhere"))
        everything = await wire.result("session/list", {"cwd": cwd})
        assert [s["sessionId"] for s in everything["sessions"]] == ids[::-1]
        assert everything["sessions"][0]["title"] == "prompt number 2"
        assert everything["sessions"][0]["cwd"] == cwd
        assert everything["sessions"][0]["updatedAt"].endswith("Z")
        assert "nextCursor" not in everything
        error = await wire.error("session/list", {"cursor": "not a cursor"})
        assert error["code"] == INVALID_PARAMS


async def test_load_errors(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()  # session/new takes an existing directory only
    cwd = str(tmp_path / "ws")
    async with served(server(tmp_path)) as (wire, _server):
        session, _live = await record_a_session(wire, cwd)
    newer = tmp_path / "newer.jsonl"
    header = json.loads((tmp_path / f"{session}.jsonl").read_text().splitlines()[0])
    newer.write_text(json.dumps({**header, "v": 99, "sessionId": "newer"}) + "\n")
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        missing = await wire.error(
            "session/load", {"sessionId": "nope", "cwd": cwd, "mcpServers": []}
        )
        assert missing["code"] == RESOURCE_NOT_FOUND
        assert "nope" in missing["message"]
        wrong = await wire.error(
            "session/load", {"sessionId": session, "cwd": "/elsewhere", "mcpServers": []}
        )
        assert wrong["code"] == INVALID_PARAMS
        assert cwd in wrong["message"] and "/elsewhere" in wrong["message"]
        version = await wire.error(
            "session/load", {"sessionId": "newer", "cwd": cwd, "mcpServers": []}
        )
        assert version["code"] == INTERNAL_ERROR
        assert "99" in version["message"] and "1" in version["message"]
        assert wire.updates == []  # nothing was replayed before these errors
        # The failed loads gave the lock back: a real load still works.
        await wire.result("session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []})


@pytest.mark.process
async def test_a_session_open_in_another_process_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()  # session/new takes an existing directory only
    cwd = str(tmp_path / "ws")
    async with served(server(tmp_path)) as (wire, _server):
        session, _live = await record_a_session(wire, cwd)
    import subprocess
    import sys

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; from acp_sidecar.store import SessionStore; "
                f"w = SessionStore({str(tmp_path)!r}).reopen({session!r}); print('locked', flush=True); time.sleep(30)"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        async with served(server(tmp_path)) as (wire, _server):
            await wire.initialize()
            error = await wire.error(
                "session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []}
            )
            assert error["code"] == INTERNAL_ERROR
            assert session in error["message"]
            assert wire.updates == []
    finally:
        holder.kill()
        holder.wait()


async def test_without_a_store_load_and_list_are_not_offered() -> None:
    async with served(AcpServer(tools=ToolsProvider(builtins=False, entry_points=False))) as (
        wire,
        _s,
    ):
        result = await wire.initialize()
        assert result["agentCapabilities"]["loadSession"] is False
        assert "list" not in result["agentCapabilities"].get("sessionCapabilities", {})
        error = await wire.error("session/list", {})
        assert error["code"] == -32601


async def test_capabilities_with_a_store(first: WireClient) -> None:
    result = await first.initialize()
    assert result["agentCapabilities"]["loadSession"] is True
    assert result["agentCapabilities"]["sessionCapabilities"]["list"] == {}


async def test_a_mode_chosen_before_the_first_prompt_is_stored(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()  # session/new takes an existing directory only
    cwd = str(tmp_path / "ws")
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(cwd)
        await wire.result("session/set_mode", {"sessionId": session, "modeId": "read-only"})
        await wire.next_response(await wire.start_prompt(session, "hi"))
    records = [
        json.loads(line) for line in (tmp_path / f"{session}.jsonl").read_text().splitlines()
    ]
    # The log exists from session/new on: the header has the mode the session started in
    # (unless the switch came before the log was made), and the switch is stored.
    modes = [r["mode"] for r in records if r["type"] in ("header", "mode_change")]
    assert records[0]["type"] == "header" and modes[-1] == "read-only"
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        loaded = await wire.result(
            "session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []}
        )
        assert loaded["modes"]["currentModeId"] == "read-only"


async def test_a_listing_does_not_hold_up_other_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A listing stuck reading logs (a huge one, a slow disk) is held here until the other
    # session's prompt is answered: off the event loop, it does not hold that prompt up.
    (tmp_path / "ws").mkdir()
    may_finish = threading.Event()
    real_list = SessionStore.list

    def stuck_list(store: SessionStore, **kwargs: Any) -> Any:
        may_finish.wait(10)  # on the event loop this would hold everything for 10 s
        return real_list(store, **kwargs)

    monkeypatch.setattr(SessionStore, "list", stuck_list)
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path / "ws"))
        listing = await wire.send_request("session/list", {})
        prompt = await wire.start_prompt(session, "hello")
        answered: list[Any] = []
        while len(answered) < 2:
            message = await wire.receive(timeout=20)
            if "method" not in message:
                answered.append(message["id"])
                assert "result" in message, message
                may_finish.set()
        assert answered == [prompt, listing]


@pytest.mark.parametrize("method", ["session/load", "session/resume"])
async def test_reading_a_big_log_back_does_not_hold_up_other_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    # The whole log is read before anything is sent (its versions checked; for a resume, its
    # state): held here until another session's prompt is answered, it must not hold that up.
    (tmp_path / "ws").mkdir()
    cwd = str(tmp_path / "ws")
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        stored = await wire.new_session(cwd)
        await wire.next_response(await wire.start_prompt(stored, "hello"))
        await wire.result("session/close", {"sessionId": stored})
    may_finish = threading.Event()
    real_check = SessionLog.check_versions

    def stuck_check(log: SessionLog) -> None:
        may_finish.wait(10)  # on the event loop this would hold everything for 10 s
        real_check(log)

    monkeypatch.setattr(SessionLog, "check_versions", stuck_check)
    async with served(server(tmp_path)) as (wire, _server):
        await wire.initialize()
        other = await wire.new_session(cwd)
        attach = await wire.send_request(
            method, {"sessionId": stored, "cwd": cwd, "mcpServers": []}
        )
        prompt = await wire.start_prompt(other, "hello")
        answered: list[Any] = []
        while len(answered) < 2:
            message = await wire.receive(timeout=20)
            if "method" not in message:
                answered.append(message["id"])
                assert "result" in message, message
                may_finish.set()
        assert answered == [prompt, attach]
