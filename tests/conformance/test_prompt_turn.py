"""Prompt turns: every turn ends with the right stop reason, cancellation included.

Spec: https://agentclientprotocol.com/protocol/prompt-turn ("4. Check for Completion",
"Stop Reasons", "Cancellation").
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.conformance.peer import TOOLS, Agent, is_tool_update, sidecar

pytestmark = pytest.mark.asyncio(loop_scope="module")

SLOW_STREAM = '/stream {"command": "tick", "lines": 400, "delay_ms": 25}'
"""A tool call that prints a line every 25 ms for 10 s unless cancelled."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def agent() -> AsyncIterator[Agent]:
    """One agent (the console with the test tools) for the module; each test has its own
    session."""
    async with sidecar(*TOOLS) as agent:
        await agent.initialize()
        yield agent


async def answers_to(agent: Agent, msg_id: object) -> list[dict[str, object]]:
    """Every response the agent sent to request ``msg_id`` so far."""
    return [m for m in agent.wire.received if "method" not in m and m.get("id") == msg_id]


async def test_a_turn_ends_with_end_turn(agent: Agent, workspace: Path) -> None:
    """Prompt Turn, "4. Check for Completion": "If there are no pending tool calls, the turn
    ends and the Agent MUST respond to the original session/prompt request with a
    StopReason" — ``end_turn``: "The language model finishes responding without requesting
    more tools". A turn that only answers with text, and one that runs a tool call, each
    answer ``end_turn`` after their updates, and nothing of the turn follows the answer."""
    session = await agent.new_session(workspace)
    text = await agent.prompt(session, "hello")
    assert text.response["result"] == {"stopReason": "end_turn"}
    assert text.of_kind("agent_message_chunk")
    tool = await agent.prompt(session, "/look notes.txt")
    assert tool.response["result"] == {"stopReason": "end_turn"}
    (call,) = tool.of_kind("tool_call")
    assert tool.final_status(call["toolCallId"]) == "completed"
    assert await agent.later_updates(session) == []


async def test_a_failed_tool_call_is_reported_failed_and_the_turn_ends(
    agent: Agent, workspace: Path
) -> None:
    """Tool Calls, "Status": ``failed`` — "The tool call failed with an error". A tool call
    that fails (reading a file that does not exist) is reported ``failed``, and the turn
    still ends with a stop reason, not a JSON-RPC error."""
    session = await agent.new_session(workspace)
    turn = await agent.prompt(session, "/read missing.txt")
    assert turn.stop_reason == "end_turn"
    (call,) = turn.of_kind("tool_call")
    assert turn.final_status(call["toolCallId"]) == "failed"


async def test_cancel_during_a_tool_call(agent: Agent, workspace: Path) -> None:
    """Prompt Turn, "Cancellation": "When the Agent receives this notification, it SHOULD
    stop all language model requests and all tool call invocations as soon as possible.
    After all ongoing operations have been successfully aborted and pending updates have
    been sent, the Agent MUST respond to the original session/prompt request with the
    cancelled stop reason." — and "Agents MUST catch these errors and return the
    semantically meaningful cancelled stop reason". Cancelled while a tool streams output,
    the turn answers ``cancelled`` (a result, not an error) at once, and no update of it
    comes after the answer."""
    session = await agent.new_session(workspace)
    prompt = await agent.start(session, SLOW_STREAM)
    call = await agent.update_where(lambda u: u["sessionUpdate"] == "tool_call")
    await agent.update_where(lambda u: is_tool_update(call["toolCallId"])(u) and "content" in u)
    await agent.cancel(session)
    # Answered before the command would end: each read waits at most TIMEOUT, a hang guard.
    turn = await agent.finish(prompt, session)
    assert turn.response["result"] == {"stopReason": "cancelled"}
    assert await agent.later_updates(session) == []


async def test_cancel_during_a_running_command(agent: Agent, workspace: Path) -> None:
    """Prompt Turn, "Cancellation": the agent "SHOULD stop ... all tool call invocations as
    soon as possible" and "MUST respond ... with the cancelled stop reason". A shell command
    that would sleep for 30 s is stopped: the turn answers ``cancelled`` within a few
    seconds."""
    session = await agent.new_session(workspace)
    prompt = await agent.start(session, "!sleep 30")
    await agent.update_where(lambda u: u.get("status") == "in_progress")
    await agent.cancel(session)
    # Answered before the command would end: each read waits at most TIMEOUT, a hang guard.
    turn = await agent.finish(prompt, session)
    assert turn.response["result"] == {"stopReason": "cancelled"}
    assert await agent.later_updates(session) == []


async def test_cancel_right_behind_the_prompt(agent: Agent, workspace: Path) -> None:
    """Prompt Turn, "Cancellation": "Clients MAY cancel an ongoing prompt turn at any time".
    A cancel written right behind its prompt, before any tool call of the turn could start,
    still ends that turn ``cancelled``; nothing of it follows the answer."""
    session = await agent.new_session(workspace)
    prompt = await agent.start(session, SLOW_STREAM)
    await agent.cancel(session)
    turn = await agent.finish(prompt, session)
    assert turn.response["result"] == {"stopReason": "cancelled"}
    assert await agent.later_updates(session) == []


async def test_cancel_twice(agent: Agent, workspace: Path) -> None:
    """Prompt Turn, "Cancellation", with JSON-RPC 2.0 ("Notifications never receive
    responses"; one response per request): two cancels for one running turn end it once —
    exactly one answer, ``cancelled`` — and the session goes on."""
    session = await agent.new_session(workspace)
    prompt = await agent.start(session, SLOW_STREAM)
    await agent.update_where(lambda u: u["sessionUpdate"] == "tool_call")
    await agent.cancel(session)
    await agent.cancel(session)
    turn = await agent.finish(prompt, session)
    assert turn.response["result"] == {"stopReason": "cancelled"}
    assert await agent.later_updates(session) == []
    assert len(await answers_to(agent, prompt)) == 1
    assert (await agent.prompt(session, "/look notes.txt")).stop_reason == "end_turn"


async def test_cancel_after_the_turn_ended(agent: Agent, workspace: Path) -> None:
    """Prompt Turn, "Cancellation": ``session/cancel`` cancels "an ongoing prompt turn".
    Sent after the turn's tool call finished and the turn was answered, it has nothing to
    cancel: nothing is sent, and the next turn is not cancelled by it."""
    session = await agent.new_session(workspace)
    done = await agent.prompt(session, "/look notes.txt")
    assert done.stop_reason == "end_turn"
    await agent.cancel(session)
    assert await agent.later_updates(session) == []
    after = await agent.prompt(session, "/look notes.txt")
    assert after.stop_reason == "end_turn"
    (call,) = after.of_kind("tool_call")
    assert after.final_status(call["toolCallId"]) == "completed"


async def test_cancel_while_permission_is_asked(agent: Agent, workspace: Path) -> None:
    """Prompt Turn, "Cancellation": "The Client MUST respond to all pending
    session/request_permission requests with the cancelled outcome", and the agent "MUST
    respond to the original session/prompt request with the cancelled stop reason". Tool
    Calls, "Requesting Permission": the tool runs only "once permission is granted". Cancelled
    while the permission dialog is open, the turn answers ``cancelled`` and the command never
    runs."""
    session = await agent.new_session(workspace, mode=None)  # the default mode asks first
    prompt = await agent.start(session, "!touch ran.txt")
    asked = await agent.agent_request("session/request_permission")
    await agent.cancel(session)
    await agent.wire.respond(asked["id"], {"outcome": {"outcome": "cancelled"}})
    turn = await agent.finish(prompt, session)
    assert turn.response["result"] == {"stopReason": "cancelled"}
    assert await agent.later_updates(session) == []
    assert not (workspace / "ran.txt").exists()
    assert turn.final_status(asked["params"]["toolCall"]["toolCallId"]) != "completed"


async def test_a_prompt_after_a_cancelled_turn_works(agent: Agent, workspace: Path) -> None:
    """Prompt Turn: "Once a prompt turn completes, the Client may send another
    session/prompt to continue the conversation" — a cancelled turn included: the next
    prompt runs its tool call to completion and ends ``end_turn``."""
    session = await agent.new_session(workspace)
    prompt = await agent.start(session, SLOW_STREAM)
    await agent.update_where(lambda u: u["sessionUpdate"] == "tool_call")
    await agent.cancel(session)
    assert (await agent.finish(prompt, session)).stop_reason == "cancelled"
    turn = await agent.prompt(session, '/stream {"command": "tock", "lines": 3}')
    assert turn.stop_reason == "end_turn"
    (call,) = turn.of_kind("tool_call")
    assert turn.final_status(call["toolCallId"]) == "completed"


async def test_cancel_request_ends_a_running_command_as_session_cancel_does(
    agent: Agent, workspace: Path
) -> None:
    """Cancellation, "``$/cancel_request`` Notification": the agent "MUST send one of these
    responses for the original request: a valid response with appropriate data (such as
    partial results or cancellation marker)" or ``-32800``. For ``session/prompt`` the
    sidecar gives the marker Prompt Turn, "Cancellation", asks of ``session/cancel``: the
    same command cancelled either way ends the same -- the turn answers ``cancelled`` (a
    result, one answer), the running command's card ends with the same status and nothing
    of the turn follows the answer."""
    ended: dict[str, tuple[object, str | None]] = {}
    for how in ("session/cancel", "$/cancel_request"):
        session = await agent.new_session(workspace)
        prompt = await agent.start(session, "!sleep 30")
        call = await agent.update_where(lambda u: u.get("status") == "in_progress")
        if how == "session/cancel":
            await agent.cancel(session)
        else:
            await agent.notify("$/cancel_request", {"requestId": prompt})
        turn = await agent.finish(prompt, session)
        assert await agent.later_updates(session) == [], how
        assert len(await answers_to(agent, prompt)) == 1, how
        ended[how] = (turn.response.get("result"), turn.final_status(call["toolCallId"]))
    assert ended["$/cancel_request"] == ended["session/cancel"]
    assert ended["session/cancel"] == ({"stopReason": "cancelled"}, "failed")
