"""The console driver end to end in process: commands → pipeline → bridge → wire."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from tests.server.wire import WireClient, served
from tests.session_commands import SESSION_COMMANDS
from tests.tooling import TOOLS


@pytest.fixture
async def console() -> AsyncIterator[WireClient]:
    server = AcpServer(tools=ToolsProvider(builtins=False, entry_points=False, extra=TOOLS))
    async with served(server) as (wire, _server):
        yield wire


async def open_session(wire: WireClient, **capabilities: Any) -> str:
    await wire.initialize(**capabilities)
    result = await wire.result("session/new", {"cwd": "/work", "mcpServers": []})
    assert result["modes"]["currentModeId"] == "ask"
    assert [m["id"] for m in result["modes"]["availableModes"]] == ["ask", "auto", "read-only"]
    update = await wire.next_update()  # right after the answer
    commands = update["params"]["update"]
    assert commands["sessionUpdate"] == "available_commands_update"
    assert [c["name"] for c in commands["availableCommands"]] == [
        "note",
        "stream",
        "look",
        "fragile",
        *SESSION_COMMANDS,  # the session's own, after the tools
    ]
    session_id: str = result["sessionId"]
    return session_id


async def prompt(wire: WireClient, session: str, text: str) -> tuple[str, list[dict[str, Any]]]:
    wire.updates.clear()
    response = await wire.next_response(await wire.start_prompt(session, text))
    updates = [u["params"]["update"] for u in wire.updates]
    echo = updates[0]  # every turn begins with the prompt, echoed under an id of its own
    assert echo["sessionUpdate"] == "user_message_chunk" and echo["messageId"]
    assert updates[-1]["sessionUpdate"] == "session_info_update"  # every turn ends with one
    return response["result"]["stopReason"], updates[1:-1]


async def set_mode(wire: WireClient, session: str, mode: str) -> None:
    """Switch modes; clients following the mode config option are told, after the answer."""
    await wire.result("session/set_mode", {"sessionId": session, "modeId": mode})
    update = (await wire.next_update())["params"]["update"]
    assert update["sessionUpdate"] == "config_option_update"
    assert update["configOptions"][0]["currentValue"] == mode


async def test_plain_text_lists_the_commands(console: WireClient) -> None:
    session = await open_session(console)
    stop, updates = await prompt(console, session, "hello?")
    assert stop == "end_turn"
    assert updates[0]["sessionUpdate"] == "agent_message_chunk"
    assert "`/note`" in updates[0]["content"]["text"]


async def test_a_read_call_draws_a_generic_card(console: WireClient) -> None:
    session = await open_session(console)
    stop, updates = await prompt(console, session, "/look src/a.py")
    assert stop == "end_turn"
    kinds = [(u["sessionUpdate"], u.get("status")) for u in updates]
    assert kinds[0] == ("tool_call", "pending")
    assert ("tool_call_update", "in_progress") in kinds
    assert kinds[-1] == ("tool_call_update", "completed")
    assert updates[0]["title"] == "Look at src/a.py"
    assert updates[0]["name"] == "look"  # the tool's registry name
    assert updates[-1]["content"][0]["content"]["text"] == "looked at src/a.py"


async def test_a_diff_call_asks_in_ask_mode_and_draws_diffs(console: WireClient) -> None:
    session = await open_session(console)
    request_id = await console.start_prompt(
        session, '/note {"path": "a.txt", "old": "x", "new": "y"}'
    )
    ask = await console.next_agent_request()
    assert ask["method"] == "session/request_permission"
    assert ask["params"]["toolCall"]["content"][0]["type"] == "diff"
    await console.respond(ask["id"], {"outcome": {"outcome": "selected", "optionId": "allow_once"}})
    await console.next_response(request_id)
    info, final = (u["params"]["update"] for u in console.updates[-1:-3:-1])
    assert info["sessionUpdate"] == "session_info_update"
    assert final["status"] == "completed"
    assert final["content"] == [
        {"type": "diff", "path": "/work/a.txt", "oldText": "x", "newText": "y"}
    ]


async def test_terminal_chunks_arrive_before_the_result_for_capable_clients(
    console: WireClient,
) -> None:
    session = await open_session(console, _meta={"terminal_output": True})
    await set_mode(console, session, "auto")
    stop, updates = await prompt(
        console, session, '/stream {"command": "make", "lines": 40, "delay_ms": 2}'
    )
    assert stop == "end_turn"
    assert updates[0]["_meta"]["terminal_info"]["terminal_id"] == updates[0]["toolCallId"]
    streamed = [u for u in updates[1:-1] if "terminal_output" in u.get("_meta", {})]
    assert streamed, "no live output before the result"
    data = "".join(
        u["_meta"]["terminal_output"]["data"]
        for u in updates
        if "terminal_output" in u.get("_meta", {})
    )
    assert data == "".join(f"make {i}\n" for i in range(40))
    assert "content" not in updates[-1]
    assert updates[-1]["_meta"]["terminal_exit"]["exit_code"] == 0


async def test_terminal_output_falls_back_to_a_console_block(console: WireClient) -> None:
    session = await open_session(console)
    await set_mode(console, session, "auto")
    stop, updates = await prompt(
        console, session, '/stream {"command": "ls", "lines": 2, "exit_code": 3}'
    )
    assert all("_meta" not in u for u in updates if u["sessionUpdate"] == "tool_call_update")
    final = updates[-1]
    assert final["status"] == "failed"  # a non-zero exit; the exit line still says which
    assert final["content"][0]["content"]["text"] == "```console\nls 0\nls 1\n```\nExit code: 3"


async def test_read_only_mode_refuses_with_a_reason(console: WireClient) -> None:
    session = await open_session(console)
    await set_mode(console, session, "read-only")
    _stop, updates = await prompt(console, session, '/stream {"command": "rm -rf"}')
    assert updates[-1]["status"] == "failed"
    assert "read-only mode" in updates[-1]["content"][0]["content"]["text"]


async def test_an_unknown_mode_is_invalid_params(console: WireClient) -> None:
    session = await open_session(console)
    error = await console.error("session/set_mode", {"sessionId": session, "modeId": "yolo"})
    assert error["code"] == -32602
    assert "yolo" in error["message"]


async def test_bad_commands_say_what_was_wrong(console: WireClient) -> None:
    session = await open_session(console)
    for text, expected in (
        ("/nope", "Unknown command `/nope`"),
        ("/look {oops", "not valid JSON"),
        ('/look {"path": 3}', "`/look` failed: Invalid arguments"),
    ):
        stop, updates = await prompt(console, session, text)
        assert stop == "end_turn"
        messages = [
            u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
        ]
        assert any(expected in m for m in messages), (text, messages)


async def test_broken_presenters_fall_back_to_a_generic_card(console: WireClient) -> None:
    session = await open_session(console)
    await set_mode(console, session, "auto")
    _stop, updates = await prompt(console, session, "/fragile")
    assert updates[0]["title"] == "fragile" and updates[0]["name"] == "fragile"
    assert updates[0]["rawInput"] == {}
    assert updates[-1]["status"] == "completed"
    assert updates[-1]["content"][0]["content"]["text"] == "worked anyway"


async def test_cancel_in_the_middle_of_a_streaming_call(console: WireClient) -> None:
    session = await open_session(console, _meta={"terminal_output": True})
    await set_mode(console, session, "auto")
    request_id = await console.start_prompt(
        session, '/stream {"command": "tail", "lines": 10000, "delay_ms": 5}'
    )
    while True:
        update = (await console.next_update())["params"]["update"]
        if "terminal_output" in update.get("_meta", {}):
            break
    await console.notify("session/cancel", {"sessionId": session})
    response = await console.next_response(request_id)
    assert response["result"]["stopReason"] == "cancelled"


async def test_plain_clients_see_console_snapshots_before_the_result(console: WireClient) -> None:
    session = await open_session(console)
    await set_mode(console, session, "auto")
    _stop, updates = await prompt(
        console, session, '/stream {"command": "tick", "lines": 30, "delay_ms": 10}'
    )
    cards = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    final = cards[-1]
    snapshots = [
        u
        for u in cards[:-1]
        if u.get("content") and u["content"][-1]["content"]["text"].startswith("```console\n")
    ]
    assert snapshots, "no live console snapshot before the result"
    assert snapshots[0]["content"][-1]["content"]["text"].count("tick ") < 30  # output so far
    assert final["content"][0]["content"]["text"].count("tick ") == 30
