"""Cancelling a turn while the editor's permission dialog is open, with the official SDK client (the sidecar in process).

The client never answers the dialog (a user who walks away), then sends ``session/cancel``.
The turn must answer ``cancelled``, the card must end ``failed`` saying only that the call was
cancelled before permission was given (no internal names), and the tool must not have run.
Every message the sidecar writes is checked against the schema.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.fakes import WalkedAway
from tests.in_process import sdk_served
from tests.sdk import command, new_session, prompt


async def test_cancel_while_the_permission_dialog_is_open(tmp_path: Path) -> None:
    editor = WalkedAway()
    async with sdk_served(editor) as (connection, wire):
        session = await new_session(connection, tmp_path)
        wire.cards()
        write = command("write", path="victim.txt", content="overwritten\n")
        turn = asyncio.create_task(prompt(connection, session, write))
        await asyncio.wait_for(editor.dialog_open.wait(), 10)
        await connection.cancel(session_id=session)
        assert await asyncio.wait_for(turn, 10) == "cancelled"
        updates = wire.cards()
        assert editor.asked == 1
        final = updates[-1]
        assert final["status"] == "failed"
        said = {"type": "text", "text": "Cancelled before permission was given"}
        assert final["content"] == [{"type": "content", "content": said}]
        assert all(u.get("status") != "in_progress" for u in updates), "the tool was dispatched"
    assert not (tmp_path / "victim.txt").exists()
    assert wire.checked > 0
