"""Cancelling a turn while the editor's permission dialog is open, with the official SDK client.

The client never answers the dialog (a user who walks away), then sends ``session/cancel``.
The turn must answer ``cancelled``, the card must end ``failed`` saying only that the call was
cancelled before permission was given (no internal names), and the tool must not have run.
Every message the sidecar writes is checked against the schema.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import acp
from acp.schema import ClientCapabilities, PermissionOption, RequestPermissionResponse

from tests.bridge.test_sdk_cards import Editor, Recorder, cards

ROOT = Path(__file__).resolve().parents[2]


class WalkedAway(Editor):
    """Opens the permission dialog and never answers it."""

    def __init__(self) -> None:
        super().__init__()
        self.dialog_open = asyncio.Event()

    async def request_permission(
        self,
        session_id: str,
        tool_call: Any,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        self.asked.append(tool_call.title or "")
        self.dialog_open.set()
        await asyncio.Event().wait()  # the user never clicks
        raise AssertionError("unreachable")


async def test_cancel_while_the_permission_dialog_is_open(tmp_path: Path) -> None:
    editor = WalkedAway()
    recorder = Recorder(editor)
    async with acp.spawn_agent_process(
        editor,
        sys.executable,
        "-m",
        "acp_sidecar",
        env={"PYTHONPATH": str(ROOT), "ACP_SIDECAR_STORE": os.environ["ACP_SIDECAR_STORE"]},
        cwd=ROOT,
        observers=[recorder],
    ) as (connection, process):
        await connection.initialize(
            protocol_version=acp.PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
        )
        session = (await connection.new_session(cwd=str(tmp_path), mcp_servers=[])).session_id
        recorder.take()
        command = '/write {"path": "victim.txt", "content": "overwritten\\n"}'
        turn = asyncio.create_task(
            connection.prompt(session_id=session, prompt=[acp.text_block(command)])
        )
        await asyncio.wait_for(editor.dialog_open.wait(), 10)
        await connection.cancel(session_id=session)
        done = await asyncio.wait_for(turn, 10)
        assert done.stop_reason == "cancelled"
        updates = cards(recorder.take())
        assert len(editor.asked) == 1
        final = updates[-1]
        assert final["status"] == "failed"
        said = {"type": "text", "text": "Cancelled before permission was given"}
        assert final["content"] == [{"type": "content", "content": said}]
        assert all(u.get("status") != "in_progress" for u in updates), "the tool was dispatched"
    assert process.returncode == 0
    assert not (tmp_path / "victim.txt").exists()
    assert recorder.checked > 0
