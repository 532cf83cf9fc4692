"""Session setup: new sessions, modes, and loading a session back.

Spec: https://agentclientprotocol.com/protocol/session-setup,
https://agentclientprotocol.com/protocol/session-modes
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.conformance.peer import TOOLS, Agent, sidecar

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def agent() -> AsyncIterator[Agent]:
    """One agent (the console with the test tools) for the module."""
    async with sidecar(*TOOLS) as agent:
        await agent.initialize()
        yield agent


async def test_each_new_session_gets_a_unique_id(agent: Agent, workspace: Path) -> None:
    """Session Setup, "Creating a Session": "The Agent MUST respond with a unique Session ID
    that identifies this conversation." Three sessions in one directory get three ids."""
    ids = [await agent.new_session(workspace, mode=None) for _ in range(3)]
    assert all(isinstance(i, str) and i for i in ids)
    assert len(set(ids)) == 3


async def test_commands_are_advertised_after_the_session_exists_and_can_be_run(
    agent: Agent, workspace: Path
) -> None:
    """Slash Commands, "Advertising commands": "After creating a session, the Agent MAY send
    a list of available commands via the available_commands_update session notification";
    "Commands are run as part of regular prompt requests where the Client includes the
    command text in the prompt." The list names the session only after ``session/new`` has
    answered with it, and every command it lists is one the agent knows when the user runs
    it: ``/NAME`` gets a stop reason, never "unknown command"."""
    msg_id = await agent.wire.send_request("session/new", {"cwd": str(workspace), "mcpServers": []})
    session = (await agent.response_to(msg_id))["result"]["sessionId"]
    answered = len(agent.wire.received)
    update = await agent.update_where(lambda u: u["sessionUpdate"] == "available_commands_update")
    earlier = agent.wire.received[: answered - 1]
    assert all(m.get("params", {}).get("sessionId") != session for m in earlier)
    assert agent.updates[-1]["sessionId"] == session
    names = [command["name"] for command in update["availableCommands"]]
    assert names
    await agent.result("session/set_mode", {"sessionId": session, "modeId": "read-only"})
    for name in names:
        turn = await agent.prompt(session, f"/{name}")
        assert turn.stop_reason == "end_turn", name
        chunks = turn.of_kind("agent_message_chunk")  # text, or a link (``/export``'s file)
        said = " ".join(u["content"].get("text", "") for u in chunks)
        assert "Unknown command" not in said, said


async def test_every_advertised_mode_can_be_set(agent: Agent, workspace: Path) -> None:
    """Session Modes, "Initial state" and "From the Client": the agent "MAY return a list of
    modes it can operate in and the currently active mode"; ``session/set_mode``'s
    ``modeId`` "Must be one of the modes listed in availableModes". The current mode is one
    of those listed, and switching to each listed mode succeeds."""
    result = await agent.result("session/new", {"cwd": str(workspace), "mcpServers": []})
    modes = result["modes"]
    available = [mode["id"] for mode in modes["availableModes"]]
    assert modes["currentModeId"] in available
    for mode in [*available, modes["currentModeId"]]:
        answer = await agent.result(
            "session/set_mode", {"sessionId": result["sessionId"], "modeId": mode}
        )
        assert answer == {}


async def test_load_replays_the_whole_conversation_then_answers(
    agent: Agent, workspace: Path
) -> None:
    """Session Setup, "Loading Sessions": loading "enables persistence across restarts";
    "The Agent MUST replay the entire conversation to the Client in the form of
    session/update notifications"; "When all the conversation entries have been streamed to
    the Client, the Agent MUST respond to the original session/load request"; "The Client can
    then continue sending prompts as if the session was never interrupted."

    A session is held in one agent process (a message turn, a tool call turn, a mode
    switch), which then exits; a second agent loads it: the user's prompts, the agent's
    text and the tool call come back, in order, before the answer, whose modes carry the
    mode the session was left in; no conversation entry follows the answer; the next prompt
    works."""
    async with sidecar(*TOOLS) as first:
        await first.initialize()
        session = await first.new_session(workspace)
        hello = await first.prompt(session, "hello")
        tool = await first.prompt(session, "/look notes.txt")
        await first.result("session/set_mode", {"sessionId": session, "modeId": "read-only"})
    (call,) = tool.of_kind("tool_call")
    said = "".join(u["content"]["text"] for u in hello.of_kind("agent_message_chunk"))

    before = len(agent.updates)
    result = await agent.result(
        "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
    )
    replayed = [u["update"] for u in agent.updates[before:] if u["sessionId"] == session]
    user = [u["content"]["text"] for u in replayed if u["sessionUpdate"] == "user_message_chunk"]
    assert user == ["hello", "/look notes.txt"]
    agent_text = "".join(
        u["content"]["text"] for u in replayed if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert agent_text == said
    tool_ids = [u["toolCallId"] for u in replayed if u["sessionUpdate"] == "tool_call"]
    assert tool_ids == [call["toolCallId"]]
    kinds = [u["sessionUpdate"] for u in replayed]
    assert kinds.index("user_message_chunk") < kinds.index("agent_message_chunk")
    assert kinds.index("agent_message_chunk") < kinds.index("tool_call")
    assert result["modes"]["currentModeId"] == "read-only"
    conversation = {"user_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update"}
    later = await agent.later_updates(session)
    assert [u for u in later if u["sessionUpdate"] in conversation] == []
    await agent.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
    assert (await agent.prompt(session, "/look notes.txt")).stop_reason == "end_turn"


async def test_a_session_that_was_never_prompted_can_be_loaded(
    agent: Agent, workspace: Path
) -> None:
    """Session Setup, "Session ID": "The session ID returned by session/new" is what clients
    use to "Load previous sessions via session/load (if the Agent supports the loadSession
    capability)". A session loaded right after its creation, before any prompt, loads (with
    nothing to replay) instead of being unknown."""
    session = await agent.new_session(workspace, mode=None)
    response = await agent.request(
        "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
    )
    assert "result" in response, response


MCP_SERVER = Path(__file__).with_name("mcp_marker.py")


@pytest.mark.process  # the MCP server is a process of its own
async def test_a_stdio_mcp_server_is_connected(agent: Agent, tmp_path: Path) -> None:
    """Session Setup, "MCP Servers": "All Agents MUST support connecting to MCP servers via
    stdio"; "Agents SHOULD connect to all MCP servers specified by the Client." A stdio MCP
    server named in ``session/new`` is started and spoken to (it records MCP's
    ``initialize``) within a few seconds of the session's creation."""
    marker = tmp_path / "connected"
    server = {
        "name": "marker",
        "command": sys.executable,
        "args": [str(MCP_SERVER), str(marker)],
        "env": [],
    }
    result = await agent.result("session/new", {"cwd": str(tmp_path), "mcpServers": [server]})
    assert (await agent.prompt(result["sessionId"], "hello")).stop_reason == "end_turn"
    for _ in range(20):
        if marker.exists():
            break
        await asyncio.sleep(0.1)
    assert marker.exists(), "the MCP server was never initialized"
