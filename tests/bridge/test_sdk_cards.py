"""The official ACP Python SDK client drives ``acp-sidecar --tools tests.tooling:TOOLS``.

Covers the bridge end to end with a real peer (the permission round trip against a sidecar
subprocess, the terminal cards against one in process): a diff card, a terminal card with and without
the ``terminal_output`` capability (live chunks before the result), the permission round trip
(allow once, allow always remembered, reject), a mode switch, and ``session/cancel`` in the
middle of a streaming call. Every message the sidecar writes is checked against the schema.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import ClientCapabilities

from tests.fakes import AnsweringEditor
from tests.in_process import sdk_served
from tests.sdk import new_session, sdk_sidecar

ROOT = Path(__file__).resolve().parents[2]


class Recorder:
    """Keeps every ``session/update`` the sidecar sent, as wire JSON (the :class:`Wire` that
    :func:`sdk_sidecar` puts first has checked it against the schema)."""

    def __init__(self, editor: AnsweringEditor) -> None:
        self.updates: list[dict[str, Any]] = []
        self.editor = editor

    def __call__(self, event: Any) -> None:
        message = event.message
        if message.get("method") == "session/update" and event.direction.name == "INCOMING":
            update = message["params"]["update"]
            self.updates.append(update)
            if "terminal_output" in update.get("_meta", {}):
                self.editor.streaming.set()

    def take(self) -> list[dict[str, Any]]:
        taken, self.updates = self.updates, []
        return taken


@asynccontextmanager
async def sidecar(
    editor: AnsweringEditor, *, terminal: bool, subprocess: bool = False
) -> AsyncIterator[tuple[Any, Recorder, str]]:
    recorder = Recorder(editor)
    async with (sdk_sidecar if subprocess else sdk_served)(
        editor,
        "--tools",
        "tests.tooling:TOOLS",
        capabilities=ClientCapabilities(field_meta={"terminal_output": terminal}),
        observers=[recorder],
    ) as (connection, _wire):
        yield connection, recorder, await new_session(connection, ROOT)


async def run(connection: Any, session: str, text: str) -> str:
    done = await connection.prompt(session_id=session, prompt=[acp.text_block(text)])
    return str(done.stop_reason)


def cards(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] in ("tool_call", "tool_call_update")]


@pytest.mark.process
async def test_diff_card_and_the_permission_round_trip() -> None:
    editor = AnsweringEditor("allow_once", "allow_always", "reject_once")
    async with sidecar(editor, terminal=False, subprocess=True) as (connection, recorder, session):
        recorder.take()
        diff = '/note {"path": "a.txt", "old": "one\\n", "new": "two\\n"}'
        assert await run(connection, session, diff) == "end_turn"  # allow once
        updates = cards(recorder.take())
        assert updates[0]["content"] == [
            {"type": "diff", "path": str(ROOT / "a.txt"), "oldText": "one\n", "newText": "two\n"}
        ]
        assert updates[-1]["status"] == "completed"
        assert updates[-1]["content"][0]["type"] == "diff"

        assert await run(connection, session, diff) == "end_turn"  # allow always
        assert await run(connection, session, diff) == "end_turn"  # remembered: not asked
        assert editor.asked == ["Edit a.txt", "Edit a.txt"]

        stream = '/stream {"command": "rm -rf build"}'
        assert await run(connection, session, stream) == "end_turn"  # reject once
        updates = cards(recorder.take())
        assert updates[-1]["status"] == "failed"
        assert "rejected" in updates[-1]["content"][0]["content"]["text"]
        assert len(editor.asked) == 3


async def test_terminal_card_streams_live_for_capable_clients_and_the_mode_switch() -> None:
    editor = AnsweringEditor()
    async with sidecar(editor, terminal=True) as (connection, recorder, session):
        await connection.set_session_mode(session_id=session, mode_id="auto")
        recorder.take()
        command = '/stream {"command": "make", "lines": 50, "delay_ms": 2, "exit_code": 2}'
        assert await run(connection, session, command) == "end_turn"
        updates = cards(recorder.take())
        assert editor.asked == []  # auto mode
        start, *middle, final = updates
        assert start["content"][-1] == {"type": "terminal", "terminalId": start["toolCallId"]}
        live = [u for u in middle if "terminal_output" in u.get("_meta", {})]
        assert live, "no terminal output before the result"
        data = "".join(
            u["_meta"]["terminal_output"]["data"]
            for u in [*live, final]
            if "terminal_output" in u.get("_meta", {})
        )
        assert data == "".join(f"make {i}\n" for i in range(50))
        assert "content" not in final
        assert final["_meta"]["terminal_exit"] == {
            "terminal_id": start["toolCallId"],
            "exit_code": 2,
        }


async def test_terminal_card_falls_back_to_console_text_and_cancel_mid_stream() -> None:
    editor = AnsweringEditor()
    async with sidecar(editor, terminal=False) as (connection, recorder, session):
        await connection.set_session_mode(session_id=session, mode_id="auto")
        recorder.take()
        assert await run(connection, session, '/stream {"command": "ls", "lines": 2}') == "end_turn"
        final = cards(recorder.take())[-1]
        assert final["content"][0]["content"]["text"] == "```console\nls 0\nls 1\n```\nExit code: 0"

    editor = AnsweringEditor()
    async with sidecar(editor, terminal=True) as (connection, recorder, session):
        await connection.set_session_mode(session_id=session, mode_id="auto")
        long = '/stream {"command": "tail -f log", "lines": 100000, "delay_ms": 5}'
        turn = asyncio.create_task(run(connection, session, long))
        await asyncio.wait_for(editor.streaming.wait(), 10)
        await connection.cancel(session_id=session)
        assert await asyncio.wait_for(turn, 10) == "cancelled"
