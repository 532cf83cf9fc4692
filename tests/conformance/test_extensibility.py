"""Extensibility: ``_meta``, extension methods and notifications, custom fields.

Spec: https://agentclientprotocol.com/protocol/extensibility

"Implementations MUST NOT add any custom fields at the root of a type that's part of the
specification" is checked on every message of the suite as it is read
(:mod:`tests.conformance.strict`); the replay test below also feeds the agent a custom field
it could echo.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.conformance.peer import TOOLS, Agent, sidecar

pytestmark = pytest.mark.asyncio(loop_scope="module")

METHOD_NOT_FOUND = -32601

META: dict[str, Any] = {
    "traceparent": "00-80e1afed08e019fc1110464cfa66635c-7a085853722dc6d2-01",
    "example.com/debug": True,
    "nested": {"list": [1, 2.5, None, "é✓", {"deep": []}], "empty": {}, "big": 2**63 - 1},
}
"""Arbitrary extension data, as a client may attach it anywhere the schema has ``_meta``."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def agent() -> AsyncIterator[Agent]:
    """One initialized agent for the module."""
    async with sidecar(*TOOLS) as agent:
        await agent.initialize()
        yield agent


@pytest.mark.parametrize("params", [{"language": "rust"}, None, [1, 2]], ids=repr)
async def test_an_unknown_extension_request_is_answered_method_not_found(
    agent: Agent, params: Any
) -> None:
    """Extensibility, "Custom Requests": "Upon receiving a custom request, implementations
    MUST respond accordingly with the provided id"; "If the receiving end doesn't recognize
    the custom method name, it should respond with the standard 'Method not found' error"
    (-32601). Whatever its params (an object, none, an array)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": "ext-1", "method": "_zed.dev/workspace"}
    if params is not None:
        message["params"] = params
    await agent.wire.send(message)
    response = await agent.response_to("ext-1")
    assert set(response) == {"jsonrpc", "id", "error"}
    assert response["error"]["code"] == METHOD_NOT_FOUND


async def test_unknown_extension_notifications_are_ignored_even_mid_turn(
    agent: Agent, workspace: Path
) -> None:
    """Extensibility, "Custom Notifications": "implementations SHOULD ignore unrecognized
    notifications." Extension notifications sent while a turn runs get no answer and do
    not disturb the turn: it ends ``end_turn`` with its tool call completed."""
    session = await agent.new_session(workspace)
    prompt = await agent.start(session, '/stream {"command": "tick", "lines": 5, "delay_ms": 10}')
    for index in range(3):
        await agent.notify("_zed.dev/file_opened", {"path": f"/tmp/{index}", "_meta": META})
    turn = await agent.finish(prompt, session)
    assert turn.stop_reason == "end_turn"
    (call,) = turn.of_kind("tool_call")
    assert turn.final_status(call["toolCallId"]) == "completed"
    assert await agent.later_updates(session) == []


async def test_meta_is_accepted_wherever_the_schema_has_it(workspace: Path) -> None:
    """Extensibility, "The _meta Field": "All types in the protocol include a _meta field
    ... This includes requests, responses, notifications, and even nested types like content
    blocks, tool calls, plan entries, and capability objects"; "Advertising Custom
    Capabilities": implementations "SHOULD use the _meta field in capability objects". The
    schema types every ``_meta`` as an object or null. Extension data (and ``null``) in the
    ``_meta`` of every request, notification, capability object, content block and client
    answer is accepted: every request succeeds and every tool call completes."""
    fs = {"readTextFile": True, "writeTextFile": True, "_meta": META}
    async with sidecar(*TOOLS) as agent:
        result = await agent.result(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {"fs": fs, "terminal": False, "_meta": META},
                "clientInfo": {"name": "conformance", "version": "1", "_meta": META},
                "_meta": META,
            },
        )
        assert result["protocolVersion"] == 1
        assert await agent.result("authenticate", {"methodId": "configure", "_meta": None}) == {}
        new = await agent.result(
            "session/new", {"cwd": str(workspace), "mcpServers": [], "_meta": META}
        )
        session = new["sessionId"]
        await agent.result(
            "session/set_mode", {"sessionId": session, "modeId": "auto", "_meta": META}
        )
        await agent.result("session/list", {"_meta": META})

        answers = {"_meta": META}
        agent.write_answer = answers
        text = {"type": "text", "text": "/read notes.txt", "_meta": META}
        annotated = {
            "type": "text",
            "text": '/write {"path": "out.txt", "content": "x\\n"}',
            "annotations": {"audience": ["user"], "priority": 0.5, "_meta": META},
            "_meta": None,
        }
        uri = (workspace / "notes.txt").as_uri()  # a mention alone opens the file
        link = {"type": "resource_link", "uri": uri, "name": "notes.txt", "_meta": META}
        for block in (text, annotated, link):
            msg_id = await agent.wire.send_request(
                "session/prompt", {"sessionId": session, "prompt": [block], "_meta": META}
            )
            turn = await agent.finish(msg_id, session)
            assert turn.stop_reason == "end_turn", block
            for call in turn.of_kind("tool_call"):
                assert turn.final_status(call["toolCallId"]) == "completed", block
        assert {"fs/read_text_file", "fs/write_text_file"} <= {r["method"] for r in agent.requests}
        await agent.notify("session/cancel", {"sessionId": session, "_meta": META})
        await agent.result(
            "session/load",
            {"sessionId": session, "cwd": str(workspace), "mcpServers": [], "_meta": META},
        )


async def test_fields_a_newer_peer_may_send_are_ignored(workspace: Path) -> None:
    """Extensibility: names at the root of every specified type are "reserved for future
    protocol versions" — a newer peer may send members this agent has never heard of — and
    Initialization, "Capabilities": "The introduction of new capabilities is not considered a
    breaking change." The schema leaves every object open. Unknown members at the root of
    every request and notification, in capability objects, content blocks and annotations,
    and in the client's answers (permission, ``fs/*``) are ignored: every request succeeds
    and every tool call completes."""
    future = {"futureField": {"any": ["json", 1]}}
    async with sidecar(*TOOLS) as agent:
        await agent.result(
            "initialize",
            {
                "protocolVersion": 1,
                "clientCapabilities": {
                    "fs": {"readTextFile": True, "writeTextFile": True, **future},
                    "futureCapability": {"enabled": True},
                    **future,
                },
                "clientInfo": {"name": "conformance", "version": "1", **future},
                **future,
            },
        )
        new = await agent.result("session/new", {"cwd": str(workspace), "mcpServers": [], **future})
        session = new["sessionId"]
        await agent.result("session/set_mode", {"sessionId": session, "modeId": "ask", **future})
        await agent.result("session/list", {**future})
        agent.write_answer = {**future}
        agent.extra = future
        commands = [
            {"type": "text", "text": "/read notes.txt", **future},
            {
                "type": "text",
                "text": '/write {"path": "out.txt", "content": "x\\n"}',
                "annotations": {"priority": 1, **future},
            },
        ]
        for block in commands:
            msg_id = await agent.wire.send_request(
                "session/prompt", {"sessionId": session, "prompt": [block], **future}
            )
            turn = await agent.finish(msg_id, session)
            assert turn.stop_reason == "end_turn", block
            (call,) = turn.of_kind("tool_call")
            assert turn.final_status(call["toolCallId"]) == "completed", block
        assert (workspace / "out.txt").read_text(encoding="utf-8") == "x\n"
        answered = {"session/request_permission", "fs/read_text_file", "fs/write_text_file"}
        assert answered <= {r["method"] for r in agent.requests}
        await agent.notify("session/cancel", {"sessionId": session, **future})
        await agent.result(
            "session/load",
            {"sessionId": session, "cwd": str(workspace), "mcpServers": [], **future},
        )


async def test_meta_in_client_answers_is_accepted(agent: Agent, workspace: Path) -> None:
    """Extensibility, "The _meta Field": responses carry ``_meta`` too. A permission answer
    with ``_meta`` on the result and on the selected outcome is honoured: the command runs and
    its tool call completes."""
    session = await agent.new_session(workspace, mode=None)  # the default mode asks first
    prompt = await agent.start(session, "!touch allowed.txt")
    asked = await agent.agent_request("session/request_permission")
    await agent.wire.respond(
        asked["id"],
        {
            "outcome": {"outcome": "selected", "optionId": "allow_once", "_meta": META},
            "_meta": META,
        },
    )
    turn = await agent.finish(prompt, session)
    assert turn.stop_reason == "end_turn"
    assert (workspace / "allowed.txt").exists()
    assert turn.final_status(asked["params"]["toolCall"]["toolCallId"]) == "completed"


async def test_meta_on_prompt_content_comes_back_untouched(agent: Agent, workspace: Path) -> None:
    """Extensibility: ``_meta`` is the client's ("Implementations MUST NOT make assumptions
    about values at these keys", schema) and "Implementations MUST NOT add any custom fields
    at the root of a type that's part of the specification". Session Setup, "Loading a
    Session": the agent replays the conversation, the user's messages included. A prompt's
    content blocks come back on load with their ``_meta`` exactly as sent — while a custom
    root field the client put beside it is not echoed."""
    session = await agent.new_session(workspace)
    text = {"type": "text", "text": "hello", "_meta": META, "custom": 1}
    link = {
        "type": "resource_link",
        "uri": (workspace / "notes.txt").as_uri(),
        "name": "notes.txt",
        "_meta": {"editor.example/selection": {"start": 1, "end": 2}},
    }
    assert (await agent.prompt(session, text, link)).stop_reason == "end_turn"
    before = len(agent.updates)
    await agent.result(
        "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
    )
    replayed = [
        u["update"]["content"]
        for u in agent.updates[before:]
        if u["sessionId"] == session and u["update"]["sessionUpdate"] == "user_message_chunk"
    ]
    expected_text = {key: value for key, value in text.items() if key != "custom"}
    assert replayed == [expected_text, link]
