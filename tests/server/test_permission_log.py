"""Permission decisions made over the wire are in the session's log, with the time of each
record, and a later load replays the session without sending anything for them.

The official ACP SDK client drives ``acp-sidecar`` (console driver, built-in tools, ``ask``
mode) and answers the dialog "always allow": the first ``write`` is asked and answered, the
second is decided by the remembered answer without a dialog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.schema import AllowedOutcome, RequestPermissionResponse

from acp_sidecar.store import (
    PermissionAnswerRecord,
    PermissionAskedRecord,
    PermissionRuleRecord,
    SessionStore,
    ToolCallRecord,
    permission_records,
)
from tests.fakes import AllowingEditor
from tests.in_process import sdk_served
from tests.sdk import command, new_session, prompt


class AlwaysAllowing(AllowingEditor):
    def __init__(self) -> None:
        self.asked = 0

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        self.asked += 1
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="allow_always")
        )


async def test_decisions_are_logged_with_times_and_not_replayed(tmp_path: Path) -> None:
    store_dir = tmp_path / "store"
    editor = AlwaysAllowing()
    async with sdk_served(editor, store=store_dir) as (connection, wire):
        session = await new_session(connection, tmp_path)
        for name in ("a.txt", "b.txt"):
            done = await prompt(connection, session, command("write", path=name, content="x\n"))
            assert done == "end_turn"
        live = list(wire.updates)
    assert editor.asked == 1
    assert (tmp_path / "b.txt").read_text() == "x\n"

    store = SessionStore(store_dir)
    with store.open_log(session) as log:
        records = list(log)
    calls = [r.call_id for r in records if isinstance(r, ToolCallRecord)]
    decisions = list(permission_records(records))
    assert decisions == [
        PermissionAskedRecord(
            call_id=calls[0],
            tool="write",
            options=(
                "allow_once",
                "allow_always",
                "allow_always_project",
                "allow_always_user",
                "reject_once",
                "reject_always",
                "reject_always_project",
                "reject_always_user",
            ),
        ),
        PermissionAnswerRecord(call_id=calls[0], tool="write", answer="allow_always"),
        PermissionRuleRecord(
            call_id=calls[1], tool="write", verdict="allow", rule="allow write", source="session"
        ),
    ]
    assert all(record.at is not None for record in records)
    stamped = [record.at for record in records if record.at is not None]
    assert stamped == sorted(stamped)

    async with sdk_served(AllowingEditor(), store=store_dir) as (connection, wire):
        await connection.load_session(cwd=str(tmp_path), session_id=session, mcp_servers=[])
        replayed = list(wire.updates)
    kinds = [u["sessionUpdate"] for u in replayed]
    # The same cards and messages as live; nothing stands for the decisions.
    assert kinds.count("tool_call") == 2 == [u["sessionUpdate"] for u in live].count("tool_call")
    assert set(kinds) <= {
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
        "current_mode_update",
        "available_commands_update",
        "session_info_update",
    }
