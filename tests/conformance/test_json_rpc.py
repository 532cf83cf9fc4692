"""JSON-RPC 2.0 as ACP uses it: error objects, request ids, notifications, unknown methods.

Spec: https://agentclientprotocol.com/protocol/overview ("Communication Model", "Error
Handling"), the schema's ``Error``, ``ErrorCode`` and ``RequestId``, and JSON-RPC 2.0
(https://www.jsonrpc.org/specification), which ACP follows.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.conformance.peer import TOOLS, Agent, sidecar

pytestmark = pytest.mark.asyncio(loop_scope="module")

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
RESOURCE_NOT_FOUND = -32002


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def agent() -> AsyncIterator[Agent]:
    """One initialized agent for the module."""
    async with sidecar(*TOOLS) as agent:
        await agent.initialize()
        yield agent


def check_error_response(response: dict[str, Any], msg_id: Any, code: int) -> None:
    """The JSON-RPC error response shape: exactly ``jsonrpc``, ``id`` and ``error``; the
    error has an integer ``code``, a non-empty string ``message`` and at most ``data``."""
    assert set(response) == {"jsonrpc", "id", "error"}, response
    assert response["jsonrpc"] == "2.0"
    assert response["id"] == msg_id and type(response["id"]) is type(msg_id)
    error = response["error"]
    assert set(error) <= {"code", "message", "data"}, error
    assert type(error["code"]) is int and error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"], error


BAD_LINES = [
    pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": ', None, PARSE_ERROR, id="not-json"),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 9, "method": "\xff"}', None, PARSE_ERROR, id="not-utf8"
    ),
    pytest.param(b'{"jsonrpc": "2.0"}', None, INVALID_REQUEST, id="no-method"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 3, "method": 7}', 3, INVALID_REQUEST, id="bad-method"),
    pytest.param(b'{"id": 4, "method": "session/list"}', 4, INVALID_REQUEST, id="no-jsonrpc"),
    pytest.param(b'"session/list"', None, INVALID_REQUEST, id="not-an-object"),
]


@pytest.mark.parametrize(("line", "msg_id", "code"), BAD_LINES)
async def test_malformed_messages_get_a_json_rpc_error(
    agent: Agent, line: bytes, msg_id: Any, code: int
) -> None:
    """Overview, "Error Handling": "All methods follow standard JSON-RPC 2.0 error handling
    ... Errors include an error object with code and message"; JSON-RPC 2.0: a message that
    is not JSON (or not UTF-8, which Transports requires) is a Parse error (-32700), one that is not a valid Request object an Invalid
    Request (-32600), answered with the request's id, or null when it could not be read. The
    agent answers with that error and goes on serving."""
    await agent.wire.send_line(line)
    check_error_response(await agent.response_to(msg_id), msg_id, code)
    assert "sessions" in await agent.result("session/list", {})


BAD_REQUESTS = [
    pytest.param("session/teleport", {}, METHOD_NOT_FOUND, id="unknown-method"),
    pytest.param("session/new", {"mcpServers": []}, INVALID_PARAMS, id="missing-cwd"),
    pytest.param(
        "session/prompt", {"sessionId": "s", "prompt": "hi"}, INVALID_PARAMS, id="bad-prompt"
    ),
    pytest.param(
        "session/set_mode", {"sessionId": 5, "modeId": "auto"}, INVALID_PARAMS, id="bad-session-id"
    ),
]


@pytest.mark.parametrize(("method", "params", "code"), BAD_REQUESTS)
async def test_bad_requests_get_an_error_of_the_right_code(
    agent: Agent, method: str, params: Any, code: int
) -> None:
    """Schema, ``Error`` and ``ErrorCode``: "Method not found: The method does not exist or
    is not available" (-32601); "Invalid params: Invalid method parameter(s)" (-32602). The
    error object has exactly the JSON-RPC shape, and the agent goes on serving."""
    msg_id = await agent.wire.send_request(method, params)
    check_error_response(await agent.response_to(msg_id), msg_id, code)
    assert "sessions" in await agent.result("session/list", {})


async def test_an_unknown_session_is_resource_not_found(agent: Agent, workspace: Path) -> None:
    """Schema, ``ErrorCode``: "Resource not found: A given resource, such as a session or
    file, was not found" (-32002). Every request naming a session that does not exist gets
    it: ``session/prompt``, ``session/set_mode``, ``session/load``."""
    requests = [
        ("session/prompt", {"sessionId": "no-such", "prompt": [{"type": "text", "text": "hi"}]}),
        ("session/set_mode", {"sessionId": "no-such", "modeId": "auto"}),
        ("session/load", {"sessionId": "no-such", "cwd": str(workspace), "mcpServers": []}),
    ]
    for method, params in requests:
        msg_id = await agent.wire.send_request(method, params)
        check_error_response(await agent.response_to(msg_id), msg_id, RESOURCE_NOT_FOUND)


async def test_logout_is_advertised_and_answers_a_logout_response() -> None:
    """Authentication, "Logging Out": a Client calls ``logout`` only after the Agent advertised
    ``agentCapabilities.auth.logout`` (``{}``); "On success, the Agent returns an empty
    result" (a ``LogoutResponse``: ``_meta`` at most). Every v1 method the schema gives the
    agent is now offered, so none is left to answer -32601 for being unoffered."""
    async with sidecar(*TOOLS) as agent:
        initialized = await agent.initialize()
        assert initialized["agentCapabilities"]["auth"] == {"logout": {}}
        result = await agent.result("logout", {})  # validated as a LogoutResponse on the way
        assert set(result) <= {"_meta"}


@pytest.mark.parametrize("msg_id", [0, 9007199254740993, -7, "", "id-✓"], ids=repr)
async def test_a_response_carries_the_request_id(agent: Agent, msg_id: Any) -> None:
    """Schema, ``RequestId``: "An identifier established by the Client that MUST contain a
    String, Number, or NULL value ... The Server MUST reply with the same value in the
    Response object." Integer (beyond 2**53 too), negative, empty and non-ASCII ids come back
    exactly, on results and on errors alike."""
    await agent.wire.send({"jsonrpc": "2.0", "id": msg_id, "method": "session/list"})
    response = await agent.response_to(msg_id)
    assert set(response) == {"jsonrpc", "id", "result"}
    assert response["id"] == msg_id and type(response["id"]) is type(msg_id)
    await agent.wire.send({"jsonrpc": "2.0", "id": msg_id, "method": "session/teleport"})
    check_error_response(await agent.response_to(msg_id), msg_id, METHOD_NOT_FOUND)


async def test_notifications_are_never_answered(agent: Agent, workspace: Path) -> None:
    """Overview, "Error Handling": "Notifications never receive responses (success or
    error)". Extensibility, "Custom Notifications": "implementations SHOULD ignore
    unrecognized notifications". Unknown notifications (plain and ``_``-prefixed), a
    ``session/cancel`` with missing or wrong params, and one for an unknown session get no
    message back; the next request is answered first, and the agent goes on serving."""
    session = await agent.new_session(workspace)
    notifications: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "method": "session/teleport", "params": {"sessionId": session}},
        {"jsonrpc": "2.0", "method": "_example.com/file_opened", "params": {"path": "/x"}},
        {"jsonrpc": "2.0", "method": "_example.com/no_params"},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 42}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "no-such"}},
        {"jsonrpc": "2.0", "method": "session/cancel"},
    ]
    for notification in notifications:
        await agent.wire.send_line(json.dumps(notification).encode())
    before = len(agent.wire.received)
    await agent.result("session/list", {})
    assert len(agent.wire.received) == before + 1
    assert (await agent.prompt(session, "/look notes.txt")).stop_reason == "end_turn"
