"""Every kind of message the agent sends validates against the official v1 schema.

Spec: the schema (``tests/fixtures/acp/v1/schema.json``, ``@agentclientprotocol/sdk`` 2.4.0)
and https://agentclientprotocol.com/protocol/extensibility ("The `_meta` Field": no custom
fields at the root of a specified type).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.acp_schema import SchemaViolation
from tests.conformance.peer import TOOLS, sidecar
from tests.conformance.strict import check_no_custom_fields

EXPECTED = {
    # responses, one per method the agent answers, and errors
    "result of initialize",
    "result of authenticate",
    "result of session/new",
    "result of session/set_mode",
    "result of session/prompt",
    "result of session/list",
    "result of session/load",
    "error",
    "error without id",
    # session/update kinds
    "update available_commands_update",
    "update agent_message_chunk",
    "update user_message_chunk",
    "update tool_call",
    "update tool_call_update",
    "update current_mode_update",
    # tool call content kinds
    "content content",
    "content diff",
    "content terminal",
    # agent → client
    "request session/request_permission",
    "request fs/read_text_file",
    "request fs/write_text_file",
    "notification $/cancel_request",
}
"""What the console agent can send. Not reachable from it: ``agent_thought_chunk`` (only
the model driver thinks aloud) and ``plan`` (nothing plans yet)."""


def kinds_of(message: dict[str, Any], methods: dict[Any, str]) -> set[str]:
    """The kinds of message (and of tool call content) ``message`` is an example of."""
    method = message.get("method")
    if method is None:
        if "error" in message:
            return {"error" if message["id"] is not None else "error without id"}
        return {f"result of {methods[message['id']]}"}
    if "id" in message:
        return {f"request {method}"}
    if method != "session/update":
        return {f"notification {method}"}
    update = message["params"]["update"]
    kinds = {f"update {update['sessionUpdate']}"}
    content = update.get("content")
    if isinstance(content, list):  # a tool call's content, not a message chunk's block
        kinds |= {f"content {item['type']}" for item in content}
    return kinds


async def test_every_kind_of_message_the_agent_sends_validates(workspace: Path) -> None:
    """Schema: every message the agent writes is one the v1 schema defines for the agent,
    valid against the type of its method (the params of its requests and notifications, the
    result of the request it answers, the ``Error`` object), and — Extensibility — carries
    no member outside ``_meta`` that the specification does not define. A session that
    makes the agent send every kind of message it can: each is checked as it is read, and
    every kind turns up."""
    async with sidecar(*TOOLS) as agent:
        await agent.initialize(
            fs={"readTextFile": True, "writeTextFile": True}, _meta={"terminal_output": True}
        )
        await agent.result("authenticate", {"methodId": "configure"})
        session = await agent.new_session(workspace, mode=None)  # asks before changes
        for command in (
            "hello",
            "/read notes.txt",
            '/write {"path": "new.txt", "content": "x\\n"}',
            '/edit {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}',
            "!echo hi",
        ):
            assert (await agent.prompt(session, command)).stop_reason == "end_turn"
        prompt = await agent.start(session, "!echo never")
        asked = await agent.agent_request("session/request_permission")
        await agent.cancel(session)
        assert (await agent.finish(prompt, session)).stop_reason == "cancelled"
        await agent.wire.respond(asked["id"], {"outcome": {"outcome": "cancelled"}})
        await agent.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
        await agent.result("session/list", {})
        await agent.result(
            "session/load", {"sessionId": session, "cwd": str(workspace), "mcpServers": []}
        )
        await agent.request("_example.com/unknown", {})
        await agent.wire.send_line(b"{not json")
        await agent.response_to(None)
    seen: set[str] = set()
    for message in agent.wire.received:
        seen |= kinds_of(message, agent.wire.sent_methods)
    assert EXPECTED - seen == set()


def diff_card(diff: dict[str, Any]) -> dict[str, Any]:
    update = {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "t", "content": [diff]}
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }


def permission(tool_call: dict[str, Any]) -> dict[str, Any]:
    params = {"sessionId": "s", "toolCall": tool_call, "options": []}
    return {"jsonrpc": "2.0", "id": "r", "method": "session/request_permission", "params": params}


CUSTOM_FIELDS = [
    pytest.param(
        {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn", "usage": 5}},
        {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "end_turn", "_meta": {"usage": 5}}},
        "session/prompt",
        id="result",
    ),
    pytest.param(
        diff_card({"type": "diff", "path": "/a", "newText": "x", "mode": "w"}),
        diff_card({"type": "diff", "path": "/a", "newText": "x", "_meta": {"mode": "w"}}),
        None,
        id="nested-union",
    ),
    pytest.param(
        permission({"toolCallId": "c", "risk": 1}),
        permission({"toolCallId": "c", "_meta": {"risk": 1}}),
        None,
        id="request",
    ),
]


@pytest.mark.parametrize(("custom", "under_meta", "method"), CUSTOM_FIELDS)
def test_the_custom_field_check_catches_custom_fields(
    custom: dict[str, Any], under_meta: dict[str, Any], method: str | None
) -> None:
    """The check the suite applies to every message refuses a custom member at the root of
    a specified type, at any depth — so the conformance tests can fail on one — while the
    same member under ``_meta`` passes."""
    with pytest.raises(SchemaViolation, match="does not define"):
        check_no_custom_fields(custom, request_method=method)
    check_no_custom_fields(under_meta, request_method=method)
