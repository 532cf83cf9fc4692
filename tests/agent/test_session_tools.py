"""A session with tools of its own (its MCP servers'): the console lists and runs them from
the turn's registry, and the server's registry stays as it was."""

from __future__ import annotations

from typing import Any

import attrs

from acp_sidecar.agent.direct import ConsoleDriver
from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.protocol import to_wire
from acp_sidecar.tools import ToolExecution, define_tool
from tests.agent.model.harness import make_turn
from tests.fakes import Editor


async def ping(args: Any, execution: ToolExecution) -> str:
    return "pong"


PING = define_tool(
    name="mcp__peer__ping",
    description="Answer pong. Then nothing else.",
    parameters={},
    execute=ping,
    read_only=True,
)


def provider() -> ToolsProvider:
    return ToolsProvider(builtins=True, entry_points=False)


def test_the_commands_update_lists_the_sessions_tools() -> None:
    tools = provider()
    driver = ConsoleDriver(lambda: tools.registry)
    session_tools, problems = tools.session_registry([PING])
    assert problems == ()

    shared = to_wire(driver.commands_update())["availableCommands"]
    own = to_wire(driver.commands_update(session_tools))["availableCommands"]

    assert [c["name"] for c in own] == [*(c["name"] for c in shared), "mcp__peer__ping"]
    assert own[-1]["description"] == "Answer pong."
    assert tools.registry.get("mcp__peer__ping") is None


def test_a_tool_that_cannot_be_registered_is_reported_and_skipped() -> None:
    tools = provider()
    clash = attrs.evolve(PING, name="read")  # a built-in's name
    session_tools, problems = tools.session_registry([clash, PING])
    assert len(problems) == 1 and "'read' is already registered" in problems[0]
    assert session_tools.get("mcp__peer__ping") is not None


async def test_the_console_runs_the_turns_tools() -> None:
    tools = provider()
    driver = ConsoleDriver(lambda: tools.registry)
    session_tools, _ = tools.session_registry([PING])
    editor = Editor()

    turn = attrs.evolve(make_turn(editor, "/mcp__peer__ping"), tools=session_tools)
    assert await driver.run_turn(turn) == "end_turn"
    final = editor.cards()[-1]
    assert final["status"] == "completed"
    assert final["content"][0]["content"]["text"] == "pong"

    editor = Editor()  # a session without its own tools does not know the command
    assert await driver.run_turn(make_turn(editor, "/mcp__peer__ping")) == "end_turn"
    assert "Unknown command `/mcp__peer__ping`" in editor.text()
