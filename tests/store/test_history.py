"""The model's view of a session: messages, calls and results, every call answered."""

from __future__ import annotations

import logging

import pytest

from acp_sidecar.store import (
    AgentMessageRecord,
    AgentThoughtRecord,
    History,
    NoticeRecord,
    Record,
    SessionStore,
    ToolCallRecord,
    ToolResultRecord,
    UserMessageRecord,
    interrupted_result,
)
from acp_sidecar.tools.json_values import FrozenDict, freeze_json
from tests.store.samples import CWD, ok_result

PROMPT = UserMessageRecord(content=(FrozenDict({"type": "text", "text": "go"}),))


def _call(call_id: str) -> ToolCallRecord:
    return ToolCallRecord(call_id=call_id, name="run", arguments=freeze_json({"x": 1}))


def test_history_yields_messages_calls_and_results_in_order(
    store: SessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    with store.create("s1", CWD, mode="default") as writer:
        writer.user_message([{"type": "text", "text": "go"}])
        writer.agent_thought("hmm")
        writer.agent_text("calling")
        writer.tool_call("c1", "run", {"x": 1})
        writer.tool_result(ok_result("c1"))
        writer.tool_call("c2", "run", {"x": 1})  # the process died before its result
        writer.mode_change("other")
        writer.end_turn("cancelled")
        writer.tool_result(ok_result("stray"))
        writer.user_message([{"type": "text", "text": "go"}])
        writer.tool_call("c3", "run", {"x": 1})
    with caplog.at_level(logging.WARNING), store.open_log("s1") as log:
        items = list(History(log))
    assert items == [
        PROMPT,
        AgentThoughtRecord(text="hmm"),  # kept: some providers need reasoning sent back
        AgentMessageRecord(text="calling"),
        _call("c1"),
        ToolResultRecord(ok_result("c1")),
        _call("c2"),
        ToolResultRecord(interrupted_result("c2")),
        PROMPT,
        _call("c3"),
        ToolResultRecord(interrupted_result("c3")),
    ]
    assert "dropped a result for call 'stray'" in caplog.text


def test_notices_are_shown_to_the_user_but_never_part_of_the_history(
    store: SessionStore,
) -> None:
    with store.create("s1", CWD, mode="default") as writer:
        writer.user_message([{"type": "text", "text": "go"}])
        writer.agent_text("Half")
        writer.notice("\n\nThe model endpoint failed with HTTP 500.")
        writer.end_turn("end_turn")
    with store.open_log("s1") as log:
        records = list(log)
    # The message being streamed is written before the notice, in the order they were shown.
    assert records[1:3] == [
        AgentMessageRecord(text="Half"),
        NoticeRecord(text="\n\nThe model endpoint failed with HTTP 500."),
    ]
    assert list(History(records)) == [PROMPT, AgentMessageRecord(text="Half")]


def test_an_unanswered_call_is_closed_before_the_next_prompt() -> None:
    records: list[Record] = [_call("c1"), PROMPT, _call("c1")]
    items = list(History(records))
    assert items[1] == ToolResultRecord(interrupted_result("c1"))
    assert isinstance(items[2], UserMessageRecord)
    assert items[-1] == ToolResultRecord(interrupted_result("c1"))


def test_a_reused_open_call_id_closes_the_first_call() -> None:
    items = list(History([_call("c1"), _call("c1"), ToolResultRecord(ok_result("c1"))]))
    assert items == [
        _call("c1"),
        ToolResultRecord(interrupted_result("c1")),
        _call("c1"),
        ToolResultRecord(ok_result("c1")),
    ]


def test_the_interrupted_result_is_an_error_the_model_can_read() -> None:
    result = interrupted_result("c9")
    assert result.is_error and result.error is not None
    assert result.error.code == "INTERRUPTED"
    assert "interrupted" in result.content[0].text  # type: ignore[union-attr]


def test_a_session_command_s_turn_is_never_part_of_the_history(store: SessionStore) -> None:
    link = {"type": "resource_link", "name": "s1.html", "uri": "file:///store/s1.html"}
    with store.create("s1", CWD, mode="default") as writer:
        writer.user_message([{"type": "text", "text": "go"}])
        writer.agent_text("Going.")
        writer.end_turn("end_turn")
        writer.user_message([{"type": "text", "text": "/export"}], "p2", command="export")
        writer.tool_call("c1", "run", {"x": 1})  # a command may draw cards: not the model's
        writer.tool_result(ok_result("c1"))
        writer.notice("Exported.", message_id="a2", content=[link])
        writer.end_turn("end_turn")
        writer.user_message([{"type": "text", "text": "/export md"}], command="export")
        writer.agent_text("torn: this command's turn never ended")
        writer.user_message([{"type": "text", "text": "go"}])
    with store.open_log("s1") as log:
        records = list(log)
    assert list(History(records)) == [PROMPT, AgentMessageRecord(text="Going."), PROMPT]
    # Both members are kept by the log as written (and ignored by readers that do not know them).
    command = records[3]
    assert isinstance(command, UserMessageRecord) and command.command == "export"
    notice = records[6]
    assert isinstance(notice, NoticeRecord) and [dict(b) for b in notice.content] == [link]
    assert command.message_id == "p2" and notice.message_id == "a2"
