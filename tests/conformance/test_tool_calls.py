"""Tool calls: how they are reported, asked for, and what their paths and statuses say.

Spec: https://agentclientprotocol.com/protocol/tool-calls, and the file paths rule of
https://agentclientprotocol.com/protocol/overview ("Argument requirements").
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.conformance.peer import TOOLS, Agent, Turn, sidecar

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def agent() -> AsyncIterator[Agent]:
    """One agent (the console with the test tools) for a client with the editor's file
    system; each test has its own session."""
    async with sidecar(*TOOLS) as agent:
        await agent.initialize(fs={"readTextFile": True, "writeTextFile": True})
        yield agent


async def test_each_tool_call_is_reported_then_updated_under_one_unique_id(
    agent: Agent, workspace: Path
) -> None:
    """Tool Calls, "Creating": the agent "SHOULD report" a tool call with ``toolCallId`` — "A
    unique identifier for this tool call within the session" — and a ``title``; "Updating":
    updates carry the ``toolCallId`` of the call they change. Over several turns of one
    session every tool call is announced once, before any update of it, under an id no other
    call of the session uses, and ends ``completed``."""
    session = await agent.new_session(workspace)
    announced: list[str] = []
    for command in ("/look notes.txt", "/read notes.txt", "!echo hi", "/look notes.txt"):
        turn = await agent.prompt(session, command)
        assert turn.stop_reason == "end_turn"
        ids_this_turn: list[str] = []
        for update in turn.of_kind("tool_call", "tool_call_update"):
            call_id = update["toolCallId"]
            if update["sessionUpdate"] == "tool_call":
                assert call_id not in announced, f"{call_id} announced twice"
                assert update["title"]
                announced.append(call_id)
                ids_this_turn.append(call_id)
            else:
                assert call_id in ids_this_turn, f"update of unannounced call {call_id}"
        (call_id,) = ids_this_turn
        assert turn.final_status(call_id) == "completed"


async def test_a_permission_request_asks_about_a_reported_tool_call(
    agent: Agent, workspace: Path
) -> None:
    """Tool Calls, "Requesting Permission": the agent "MAY request permission from the user
    before executing a tool call by calling the session/request_permission method" with the
    ``sessionId``, the ``toolCall`` ("The tool call update containing details about the
    operation") and the "Available permission options"; Prompt Turn, "5. Tool Invocation":
    "Once permission is granted (if required), the Agent SHOULD invoke the tool and report a
    status update marking the tool as in_progress". The request comes after the tool call was
    reported and names it, offers options with distinct ids, and only once allowed does the
    call go ``in_progress``, run and complete."""
    session = await agent.new_session(workspace, mode=None)  # the default mode asks first
    first = len(agent.wire.received)
    turn = await agent.prompt(session, "!touch granted.txt")
    (asked,) = [r for r in turn.requests if r["method"] == "session/request_permission"]
    params = asked["params"]
    call_id = params["toolCall"]["toolCallId"]
    assert params["sessionId"] == session
    option_ids = [option["optionId"] for option in params["options"]]
    assert option_ids and len(set(option_ids)) == len(option_ids)
    assert {option["kind"] for option in params["options"]} >= {"allow_once", "reject_once"}
    messages = agent.wire.received[first:]
    reported = [i for i, m in enumerate(messages) if update_of(m, call_id, "tool_call")]
    running = [
        i
        for i, m in enumerate(messages)
        if update_of(m, call_id, "tool_call_update")
        and m["params"]["update"].get("status") == "in_progress"
    ]
    assert reported and running
    assert reported[0] < messages.index(asked) < running[0]
    assert (workspace / "granted.txt").exists()
    assert turn.final_status(call_id) == "completed"


def update_of(message: dict[str, Any], call_id: str, kind: str) -> bool:
    """Whether ``message`` is a ``session/update`` of kind ``kind`` for tool call ``call_id``."""
    if message.get("method") != "session/update":
        return False
    update = message["params"]["update"]
    return bool(update["sessionUpdate"] == kind and update["toolCallId"] == call_id)


async def test_a_rejected_tool_call_does_not_run(agent: Agent, workspace: Path) -> None:
    """Tool Calls, "Requesting Permission" and Prompt Turn, "5. Tool Invocation": the tool is
    invoked "once permission is granted". Rejected, the command does not run, the call is
    not reported ``completed``, and the turn still ends with a stop reason."""
    session = await agent.new_session(workspace, mode=None)
    agent.permission = "reject_once"
    try:
        turn = await agent.prompt(session, "!touch rejected.txt")
    finally:
        agent.permission = "allow_once"
    assert turn.stop_reason == "end_turn"
    assert "session/request_permission" in turn.methods()
    assert not (workspace / "rejected.txt").exists()
    (call,) = turn.of_kind("tool_call")
    assert turn.final_status(call["toolCallId"]) == "failed"


async def test_paths_are_absolute_and_lines_one_based(agent: Agent, workspace: Path) -> None:
    """Overview, "Argument requirements": "All file paths in the protocol MUST be absolute.
    Line numbers are 1-based." Tool Calls: a diff's ``path`` and a location's ``path`` are
    "The absolute file path". Given paths relative to the session's directory, every path
    the agent sends — tool call locations, diffs, ``fs/*`` requests — is absolute, and every
    line number is at least 1."""
    session = await agent.new_session(workspace)
    turns: list[Turn] = []
    for command in (
        "/read notes.txt",
        '/read {"path": "notes.txt", "offset": 2}',
        '/write {"path": "sub/new.txt", "content": "x\\n"}',
        '/edit {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}',
        "/look notes.txt",
    ):
        turn = await agent.prompt(session, command)
        assert turn.stop_reason == "end_turn", command
        turns.append(turn)
    paths: list[str] = []
    lines: list[Any] = []
    for turn in turns:
        for update in turn.of_kind("tool_call", "tool_call_update"):
            for location in update.get("locations") or []:
                paths.append(location["path"])
                lines.append(location.get("line"))
            paths += [c["path"] for c in update.get("content") or [] if c["type"] == "diff"]
        for request in turn.requests:
            if request["method"].startswith("fs/"):
                paths.append(request["params"]["path"])
                lines.append(request["params"].get("line"))
    assert len(paths) >= 5
    assert all(os.path.isabs(path) for path in paths), paths
    assert all(line is None or line >= 1 for line in lines), lines


async def test_a_command_that_exits_non_zero_is_not_reported_completed(
    agent: Agent, workspace: Path
) -> None:
    """Tool Calls, "Status": ``completed`` — "The tool call completed successfully";
    ``failed`` — "The tool call failed with an error". A shell command that exits with
    status 3 did not complete successfully: its call ends ``failed``."""
    session = await agent.new_session(workspace)
    turn = await agent.prompt(session, "!exit 3")
    assert turn.stop_reason == "end_turn"
    (call,) = turn.of_kind("tool_call")
    assert turn.final_status(call["toolCallId"]) == "failed"


async def test_a_null_answer_to_a_write_is_success(agent: Agent, workspace: Path) -> None:
    """File System, "Writing Files": "The Client responds with an empty result on success"
    — the page's example answer is ``"result": null``. A write the editor answers with
    ``null`` succeeded: its tool call ends ``completed``."""
    session = await agent.new_session(workspace)
    agent.write_answer = None
    try:
        turn = await agent.prompt(session, '/write {"path": "null.txt", "content": "x\\n"}')
    finally:
        agent.write_answer = {}
    assert "fs/write_text_file" in turn.methods()
    assert (workspace / "null.txt").read_text(encoding="utf-8") == "x\n"
    (call,) = turn.of_kind("tool_call")
    assert turn.final_status(call["toolCallId"]) == "completed"
