"""Bad incoming params raise ``ProtocolParamsError`` naming the field by its wire path."""

from __future__ import annotations

from typing import Any

import pytest

from acp_sidecar import protocol as p
from acp_sidecar.protocol import ProtocolParamsError, from_wire

PROMPT_OK: dict[str, Any] = {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]}


@pytest.mark.parametrize(
    ("data", "cls", "field", "message"),
    [
        ({"mcpServers": []}, p.NewSessionRequest, "cwd", "cwd: required field missing"),
        ({"cwd": 3}, p.NewSessionRequest, "cwd", "cwd: expected string, got integer"),
        ({"cwd": None}, p.NewSessionRequest, "cwd", "cwd: expected string, got null"),
        (
            {"cwd": "/w", "mcpServers": {}},
            p.NewSessionRequest,
            "mcpServers",
            "mcpServers: expected array, got object",
        ),
        (
            {"cwd": "/w", "mcpServers": ["stdio"]},
            p.NewSessionRequest,
            "mcpServers/0",
            "mcpServers/0: expected object, got string",
        ),
        (
            {"cwd": "/w", "_meta": []},
            p.NewSessionRequest,
            "_meta",
            "_meta: expected object, got array",
        ),
        (
            {"sessionId": "s", "prompt": [{"type": "text", "text": "a"}, {"type": "foo"}]},
            p.PromptRequest,
            "prompt/1/type",
            "prompt/1/type: unknown content block type 'foo'",
        ),
        (
            {"sessionId": "s", "prompt": [{"type": "foo"}]},
            p.PromptRequest,
            "prompt/0/type",
            "prompt/0/type: unknown content block type 'foo'",
        ),
        (
            {"sessionId": "s", "prompt": [{"text": "no tag"}]},
            p.PromptRequest,
            "prompt/0/type",
            "prompt/0/type: required field missing",
        ),
        (
            {"sessionId": "s", "prompt": [{"type": 5}]},
            p.PromptRequest,
            "prompt/0/type",
            "prompt/0/type: unknown content block type 5",
        ),
        (
            {"sessionId": "s", "prompt": [{"type": "image", "data": "AA=="}]},
            p.PromptRequest,
            "prompt/0/mimeType",
            "prompt/0/mimeType: required field missing",
        ),
        (
            {"sessionId": "s", "prompt": "hi"},
            p.PromptRequest,
            "prompt",
            "prompt: expected array, got string",
        ),
        (
            {"sessionId": "s", "prompt": [{"type": "resource", "resource": {"uri": "u"}}]},
            p.PromptRequest,
            "prompt/0/resource",
            "prompt/0/resource: expected an object with 'text' or 'blob'",
        ),
        (
            {
                "sessionId": "s",
                "prompt": [{"type": "text", "text": "x", "annotations": {"audience": ["bot"]}}],
            },
            p.PromptRequest,
            "prompt/0/annotations/audience/0",
            "prompt/0/annotations/audience/0: invalid value 'bot'; "
            "expected one of 'assistant', 'user'",
        ),
        (
            {"sessionId": "s", "prompt": [{"type": "text", "text": "x"}], "_meta": "m"},
            p.PromptRequest,
            "_meta",
            "_meta: expected object, got string",
        ),
        (
            {"protocolVersion": "1"},
            p.InitializeRequest,
            "protocolVersion",
            "protocolVersion: expected integer, got string",
        ),
        (
            {"protocolVersion": True},
            p.InitializeRequest,
            "protocolVersion",
            "protocolVersion: expected integer, got boolean",
        ),
        (
            {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": "yes"}}},
            p.InitializeRequest,
            "clientCapabilities/fs/readTextFile",
            "clientCapabilities/fs/readTextFile: expected boolean, got string",
        ),
        (
            {"protocolVersion": 1, "clientCapabilities": None},
            p.InitializeRequest,
            "clientCapabilities",
            "clientCapabilities: expected object, got null",
        ),
        (
            {"protocolVersion": 1, "clientInfo": {"name": "zed"}},
            p.InitializeRequest,
            "clientInfo/version",
            "clientInfo/version: required field missing",
        ),
        (
            {"outcome": {"outcome": "maybe"}},
            p.RequestPermissionResponse,
            "outcome/outcome",
            "outcome/outcome: unknown permission outcome 'maybe'",
        ),
        (
            {"outcome": {"outcome": "selected"}},
            p.RequestPermissionResponse,
            "outcome/optionId",
            "outcome/optionId: required field missing",
        ),
        ({}, p.RequestPermissionResponse, "outcome", "outcome: required field missing"),
        (
            {"sessionId": "s", "update": {"sessionUpdate": "future_update"}},
            p.SessionNotification,
            "update/sessionUpdate",
            "update/sessionUpdate: unknown session update 'future_update'",
        ),
        (
            {
                "sessionId": "s",
                "update": {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "c",
                    "title": "t",
                    "content": [{"type": "diffx"}],
                },
            },
            p.SessionNotification,
            "update/content/0/type",
            "update/content/0/type: unknown tool call content type 'diffx'",
        ),
        (
            {"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "c"}},
            p.SessionNotification,
            "update/title",
            "update/title: required field missing",
        ),
        (
            {"sessionId": "s", "update": {"sessionUpdate": "plan", "entries": [{"content": "x"}]}},
            p.SessionNotification,
            "update/entries/0/priority",
            "update/entries/0/priority: required field missing",
        ),
        (
            {"stopReason": "done"},
            p.PromptResponse,
            "stopReason",
            "stopReason: invalid value 'done'; expected one of 'end_turn', 'max_tokens', "
            "'max_turn_requests', 'refusal', 'cancelled'",
        ),
        (
            {"sessionId": "s", "path": "/a", "line": 1.5},
            p.ReadTextFileRequest,
            "line",
            "line: expected integer, got number",
        ),
        (
            {"requestId": [1]},
            p.CancelRequestNotification,
            "requestId",
            "requestId: expected integer or string or null, got array",
        ),
        ({"priority": "high"}, p.Annotations, "priority", "priority: expected number, got string"),
        (
            {"protocolVersion": 1, "authMethods": [{"type": "env_var", "id": "e", "name": "E"}]},
            p.InitializeResponse,
            "authMethods/0/type",
            "authMethods/0/type: unknown auth method type 'env_var'",
        ),
        (
            {"protocolVersion": 1, "authMethods": [{"type": None, "id": "a", "name": "A"}]},
            p.InitializeResponse,
            "authMethods/0/type",
            "authMethods/0/type: unknown auth method type None",
        ),
        (
            {
                "protocolVersion": 1,
                "authMethods": [{"type": "terminal", "id": "t", "name": "T", "env": {"A": 1}}],
            },
            p.InitializeResponse,
            "authMethods/0/env/A",
            "authMethods/0/env/A: expected string, got integer",
        ),
        (
            {"type": "terminal", "id": "t", "name": "T", "env": ["A=1"]},
            p.AuthMethodTerminal,
            "env",
            "env: expected object, got array",
        ),
        (
            {"protocolVersion": 1, "clientCapabilities": {"auth": {"terminal": "yes"}}},
            p.InitializeRequest,
            "clientCapabilities/auth/terminal",
            "clientCapabilities/auth/terminal: expected boolean, got string",
        ),
        ([], p.CancelNotification, "", "expected object, got array"),
        (None, p.CancelNotification, "", "expected object, got null"),
    ],
)
def test_bad_input_names_the_field(data: Any, cls: type[Any], field: str, message: str) -> None:
    with pytest.raises(ProtocolParamsError) as raised:
        from_wire(data, cls)
    assert raised.value.field == field
    assert str(raised.value) == message
    assert isinstance(raised.value, ValueError)


def test_the_first_bad_field_in_declaration_order_is_reported() -> None:
    with pytest.raises(ProtocolParamsError, match=r"^sessionId: required field missing$"):
        from_wire({"prompt": 1}, p.PromptRequest)


def test_errors_become_invalid_params_responses() -> None:
    with pytest.raises(ProtocolParamsError) as raised:
        from_wire({}, p.NewSessionRequest)
    error = p.AcpError.invalid_params(str(raised.value))
    assert error.to_json() == {"code": -32602, "message": "cwd: required field missing"}


def test_request_id_accepts_every_json_rpc_id() -> None:
    for request_id in (0, 12, "abc", None):
        decoded = from_wire({"requestId": request_id}, p.CancelRequestNotification)
        assert decoded.request_id == request_id
    with pytest.raises(ProtocolParamsError, match="requestId: required field missing"):
        from_wire({}, p.CancelRequestNotification)


def test_a_valid_prompt_still_decodes() -> None:
    assert from_wire(PROMPT_OK, p.PromptRequest).prompt == [p.TextContentBlock(text="hi")]
