"""A session exists from ``session/new`` on, and a reloaded one keeps its slash commands.

Found with real clients: clients that create a session and then load it (without a prompt in
between) got ``-32002`` and failed or silently started over, and a reloaded session lost its
slash-command menu because ``session/load`` sent no ``available_commands_update``. Driven as
they were: the official ACP SDK client spawns ``acp-sidecar`` processes sharing one store.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
import pytest

from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.recording import SessionRecorder
from acp_sidecar.store import SessionStore
from tests.fakes import CommandsEditor
from tests.in_process import sdk_served
from tests.sdk import sdk_sidecar
from tests.server.wire import served
from tests.session_commands import CONSOLE_TOOLS, SESSION_COMMANDS


@asynccontextmanager
async def sidecar(store: Path) -> AsyncIterator[tuple[Any, CommandsEditor]]:
    client = CommandsEditor()
    async with sdk_served(client, "--store", str(store)) as (connection, _wire):
        yield connection, client


BUILTINS = [*CONSOLE_TOOLS, *SESSION_COMMANDS]


async def test_a_session_never_prompted_loads_and_stays_unlisted_until_prompted(
    tmp_path: Path,
) -> None:
    store, workspace = tmp_path / "store", str(tmp_path)
    async with sidecar(store) as (connection, client):
        created, commands = await client.commands_after(
            connection.new_session(cwd=workspace, mcp_servers=[])
        )
        assert commands == BUILTINS
        session_id = created.session_id
        # create-then-load in the same process, at once
        loaded = await connection.load_session(cwd=workspace, session_id=session_id)
        assert loaded.modes.current_mode_id == "ask"
    async with sidecar(store) as (connection, client):
        # ... and in the next process, after the first one exited
        loaded, commands = await client.commands_after(
            connection.load_session(cwd=workspace, session_id=session_id)
        )
        assert loaded.modes.current_mode_id == "ask"
        assert commands == BUILTINS  # the reloaded session keeps its slash commands
        listed = await connection.list_sessions(cwd=workspace)
        assert [s.session_id for s in listed.sessions] == []  # loadable by id, not listed
        done = await connection.prompt(
            session_id=session_id, prompt=[acp.text_block("what can you do?")]
        )
        assert done.stop_reason == "end_turn"
        listed = await connection.list_sessions(cwd=workspace)
        assert [(s.session_id, s.title) for s in listed.sessions] == [
            (session_id, "what can you do?")
        ]


@pytest.mark.process  # the official SDK's client as the peer; the process exits
async def test_every_new_session_is_stored_before_the_process_exits(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with sdk_sidecar(CommandsEditor(), "--store", str(store)) as (connection, _wire):
        ids = [
            (await connection.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
            for _ in range(5)
        ]
    assert sorted(path.stem for path in store.glob("*.jsonl")) == sorted(ids)


async def test_a_reloaded_session_keeps_its_slash_commands(tmp_path: Path) -> None:
    store, workspace = tmp_path / "store", str(tmp_path)
    async with sidecar(store) as (connection, _client):
        session_id = (await connection.new_session(cwd=workspace, mcp_servers=[])).session_id
        await connection.prompt(session_id=session_id, prompt=[acp.text_block("hello")])
    async with sidecar(store) as (connection, client):
        _loaded, commands = await client.commands_after(
            connection.load_session(cwd=workspace, session_id=session_id)
        )
        assert commands == BUILTINS


async def test_a_session_whose_log_is_still_being_created_at_the_end_of_input_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race behind the test above's rare failures: the log of a new session is created
    after the answer, and end of input came before that creation had started."""
    shutting_down = asyncio.Event()
    create_soon, close = SessionRecorder.create_soon, SessionRecorder.close

    async def late_create(self: SessionRecorder) -> None:
        await shutting_down.wait()
        await create_soon(self)

    def closing(self: SessionRecorder) -> None:
        shutting_down.set()
        close(self)

    monkeypatch.setattr(SessionRecorder, "create_soon", late_create)
    monkeypatch.setattr(SessionRecorder, "close", closing)
    store = tmp_path / "store"
    server = AcpServer(store=lambda: SessionStore(store))
    async with served(server) as (wire, _server):
        await wire.initialize()
        ids = [await wire.new_session(str(tmp_path)) for _ in range(3)]
    assert sorted(path.stem for path in store.glob("*.jsonl")) == sorted(ids)
