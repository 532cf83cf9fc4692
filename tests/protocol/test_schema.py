"""What the agent emits validates against the official ACP v1 schema; names match it."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from acp_sidecar import protocol as p
from acp_sidecar.protocol import errors, methods, to_wire
from tests.acp_schema import (
    SchemaViolation,
    load_schema,
    schema_def_for,
    schema_methods,
    validate_agent_message,
    validate_client_message,
    validate_instance,
)
from tests.protocol.samples import (
    AGENT_SAMPLES,
    CLIENT_MESSAGES,
    CONTENT_BLOCKS,
    TOOL_CALL_CONTENT,
    UNSTABLE_TYPES,
    Sample,
    sample_id,
)


@pytest.mark.parametrize("sample", AGENT_SAMPLES, ids=sample_id)
def test_agent_messages_validate(sample: Sample) -> None:
    message = sample.message(to_wire(sample.value))
    if sample.kind == "agent_result":
        validate_agent_message(message, request_method=sample.method)
        validate_agent_message(message)  # Also against the union of every agent result.
    else:
        validate_agent_message(message)


@pytest.mark.parametrize("sample", CLIENT_MESSAGES, ids=sample_id)
def test_client_messages_validate(sample: Sample) -> None:
    message = sample.message(to_wire(sample.value))
    method = sample.method if sample.kind == "client_result" else None
    validate_client_message(message, request_method=method)


@pytest.mark.parametrize("block", CONTENT_BLOCKS, ids=lambda b: b.type)
def test_each_content_block_validates(block: p.ContentBlock) -> None:
    validate_instance(to_wire(block), "ContentBlock")


@pytest.mark.parametrize("content", TOOL_CALL_CONTENT, ids=lambda c: c.type)
def test_each_tool_call_content_validates(content: p.ToolCallContent) -> None:
    validate_instance(to_wire(content), "ToolCallContent")


@pytest.mark.parametrize(
    "error",
    [
        p.AcpError.parse_error("bad json"),
        p.AcpError.invalid_request("no method"),
        p.AcpError.method_not_found("session/fly"),
        p.AcpError.invalid_params("cwd: required field missing"),
        p.AcpError.internal_error("boom"),
        p.AcpError.request_cancelled(),
        p.AcpError.auth_required("log in"),
        p.AcpError.resource_not_found("no session s1"),
        p.AcpError(-32099, "agent specific", {"detail": [1, 2]}),
    ],
    ids=lambda e: str(e.code),
)
def test_error_responses_validate(error: p.AcpError) -> None:
    validate_agent_message({"jsonrpc": "2.0", "id": 3, "error": error.to_json()})
    validate_agent_message({"jsonrpc": "2.0", "id": None, "error": error.to_json()})


def test_method_constants_are_the_schema_methods() -> None:
    agent_handles = {
        methods.INITIALIZE,
        methods.AUTHENTICATE,
        methods.LOGOUT,
        methods.SESSION_NEW,
        methods.SESSION_LOAD,
        methods.SESSION_LIST,
        methods.SESSION_PROMPT,
        methods.SESSION_SET_MODE,
        methods.SESSION_SET_CONFIG_OPTION,
    }
    for method in agent_handles:
        assert schema_def_for("agent", method, "Request"), method
        assert schema_def_for("agent", method, "Response"), method
    assert schema_def_for("agent", methods.SESSION_CANCEL, "Notification")
    assert schema_def_for("client", methods.SESSION_UPDATE, "Notification")
    for method in (
        methods.SESSION_REQUEST_PERMISSION,
        methods.FS_READ_TEXT_FILE,
        methods.FS_WRITE_TEXT_FILE,
        methods.ELICITATION_CREATE,
    ):
        assert schema_def_for("client", method, "Request"), method
        assert schema_def_for("client", method, "Response"), method
    assert schema_def_for("protocol", methods.CANCEL_REQUEST, "Notification")


def test_schema_methods_not_modelled_are_the_known_ones() -> None:
    """What ACP v1 defines that the sidecar deliberately does not model (yet)."""
    modelled = set(methods.METHOD_TO_TYPES) - methods.UNSTABLE_METHODS
    assert schema_methods("agent", "Request") - modelled == set()
    assert schema_methods("client", "Request") - modelled == {
        "terminal/create",
        "terminal/kill",
        "terminal/output",
        "terminal/release",
        "terminal/wait_for_exit",
    }
    assert schema_methods("client", "Notification") - modelled == {"elicitation/complete"}
    assert schema_methods("agent", "Notification") | schema_methods("protocol", "Notification") <= (
        modelled
    )


def test_the_method_table_has_every_method_constant() -> None:
    names = {
        value
        for name in dir(methods)
        if name.isupper() and isinstance(value := getattr(methods, name), str)
    }
    assert set(methods.METHOD_TO_TYPES) == names


def test_the_method_table_names_the_schema_types() -> None:
    """Each method's params and result type is the schema's type for it, by name (the
    unstable methods' against the unstable schema: tests/server/test_fork.py)."""
    sides = ("agent", "client", "protocol")
    for method, types in methods.METHOD_TO_TYPES.items():
        if method in methods.UNSTABLE_METHODS:
            assert schema_def_for("agent", method, "Request") is None, method  # stabilized?
            continue
        kind = "Notification" if types.result is None else "Request"
        params = {schema_def_for(side, method, kind) for side in sides} - {None}
        assert params == {types.params.__name__}, method
        if types.result is not None:
            results = {schema_def_for(side, method, "Response") for side in sides} - {None}
            assert results == {types.result.__name__}, method
        assert getattr(p, types.params.__name__) is types.params
        assert types.result is None or getattr(p, types.result.__name__) is types.result


def test_error_codes_are_the_schema_error_codes() -> None:
    titles = {
        entry["title"]: entry["const"]
        for entry in load_schema()["$defs"]["ErrorCode"]["anyOf"]
        if "const" in entry
    }
    assert titles == {
        "Parse error": errors.PARSE_ERROR,
        "Invalid request": errors.INVALID_REQUEST,
        "Method not found": errors.METHOD_NOT_FOUND,
        "Invalid params": errors.INVALID_PARAMS,
        "Internal error": errors.INTERNAL_ERROR,
        "Request cancelled": errors.REQUEST_CANCELLED,
        "Authentication required": errors.AUTH_REQUIRED,
        "Resource not found": errors.RESOURCE_NOT_FOUND,
    }


SUBAGENT_TYPES = (
    p.SubagentUpdate,
    p.SubagentState,
    p.SubagentSessionCapabilities,
    p.SessionCancelCapabilities,
    p.SessionMessage,
    p.SessionMessageChunk,
    p.TokenUsage,
    p.ToolCallSession,
)
"""The subagent page's types: in the unstable schema only (``ToolCallSession``: in neither)."""


def test_every_schema_meta_has_a_meta_field() -> None:
    """Each modelled type carries ``meta`` exactly when its schema type has ``_meta``."""
    defs = load_schema()["$defs"]
    schema_names = {
        p.FileSystemCapability: "FileSystemCapabilities",
        p.TextContentBlock: "TextContent",
        p.ImageContentBlock: "ImageContent",
        p.AudioContentBlock: "AudioContent",
        p.ResourceLinkContentBlock: "ResourceLink",
        p.EmbeddedResourceContentBlock: "EmbeddedResource",
        p.ToolCallContentBlock: "Content",
        p.ToolCallDiff: "Diff",
        p.ToolCallTerminal: "Terminal",
        p.ToolCallStart: "ToolCall",
        p.ToolCallProgress: "ToolCallUpdate",
        p.UserMessageChunk: "ContentChunk",
        p.AgentMessageChunk: "ContentChunk",
        p.AgentThoughtChunk: "ContentChunk",
        p.AvailableCommandInput: "UnstructuredCommandInput",
        p.CancelledPermissionOutcome: None,
        p.NoticeUpdate: "Notice",
        p.SessionConfigBooleanOption: "SessionConfigOption",
    }
    checked = 0
    for value in vars(p).values():
        if not (isinstance(value, type) and issubclass(value, p.WireType)):
            continue
        if value is p.WireType:
            continue
        if value in (p.PlanItems, p.PlanMarkdown, p.PlanUpdate, p.PlanRemoved):
            continue  # unstable-schema types: tests/agent/test_plan_operations.py checks them
        if value in UNSTABLE_TYPES:
            continue  # unstable-schema types: tests/server/test_fork.py checks them
        if value in SUBAGENT_TYPES:
            continue  # unstable-schema types: tests/server/test_subagents.py checks them
        name = schema_names.get(value, value.__name__)
        if name is None:
            assert not hasattr(value, "meta")
            continue
        has_meta = any(a.name == "meta" for a in attrs.fields(value))
        assert ("_meta" in defs[name]["properties"]) == has_meta, value
        checked += 1
    assert checked > 50


# The helper itself: it must reject what the schema or JSON-RPC rejects.


def _notification(params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


@pytest.mark.parametrize(
    ("message", "request_method", "complaint"),
    [
        ([], None, "must be an object"),
        ({"method": "session/update", "params": {}}, None, '"jsonrpc"'),
        ({"jsonrpc": "1.0", "id": 1, "result": {}}, None, '"jsonrpc"'),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "x": 1}, None, "unexpected top-level"),
        ({"jsonrpc": "2.0"}, None, "neither a request"),
        ({"jsonrpc": "2.0", "id": 1}, None, "exactly one of result and error"),
        ({"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}}, None, "exactly one"),
        ({"jsonrpc": "2.0", "id": None, "result": {}}, None, "invalid JSON-RPC id"),
        ({"jsonrpc": "2.0", "id": 1.5, "result": {}}, None, "invalid JSON-RPC id"),
        ({"jsonrpc": "2.0", "id": True, "result": {}}, None, "invalid JSON-RPC id"),
        (
            {"jsonrpc": "2.0", "id": None, "method": "fs/read_text_file", "params": {}},
            None,
            "invalid JSON-RPC id",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "session/prompt", "params": {}},
            None,
            "not a request the agent may send",
        ),
        (
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
            None,
            "not a notification the agent may send",
        ),
        ({"jsonrpc": "2.0", "id": 1, "method": "fs/read_text_file"}, None, "requires params"),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "fs/read_text_file", "params": {"path": "/a"}},
            None,
            "'sessionId' is a required property",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {"stopReason": "done"}},
            "session/prompt",
            "$.stopReason",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {}},
            "session/new",
            "'sessionId' is a required property",
        ),
        (
            {"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}},
            None,
            "$.error.code",
        ),
        (
            _notification({"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}}),
            None,
            "'content' is a required property",
        ),
        (
            _notification(
                {
                    "sessionId": "s",
                    "update": {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "c",
                        "title": "t",
                        "content": [{"type": "diff", "path": "/a"}],
                    },
                }
            ),
            None,
            "$.update.content[0]: 'newText' is a required property",
        ),
        (
            _notification(
                {
                    "sessionId": "s",
                    "update": {
                        "sessionUpdate": "tool_call",
                        "toolCallId": "c",
                        "title": "t",
                        "kind": None,
                    },
                }
            ),
            None,
            "$.update.kind",
        ),
    ],
)
def test_helper_rejects(message: Any, request_method: str | None, complaint: str) -> None:
    with pytest.raises(SchemaViolation) as raised:
        validate_agent_message(message, request_method=request_method)
    assert complaint in str(raised.value)


def test_helper_accepts_extension_methods_and_rejects_unknown_request_methods() -> None:
    validate_agent_message({"jsonrpc": "2.0", "method": "_acme/ping", "params": {"any": 1}})
    validate_agent_message({"jsonrpc": "2.0", "id": "r", "result": [1]}, request_method="_acme/x")
    with pytest.raises(ValueError, match="not a method the agent answers"):
        validate_agent_message({"jsonrpc": "2.0", "id": 1, "result": {}}, request_method="fly")


def test_helper_checks_the_client_direction_too() -> None:
    validate_client_message(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "session/new",
            "params": {"cwd": "/w", "mcpServers": []},
        }
    )
    with pytest.raises(SchemaViolation, match="not a request the client may send"):
        validate_client_message(
            {"jsonrpc": "2.0", "id": 0, "method": "fs/read_text_file", "params": {}}
        )


def test_the_unstable_schema_judges_what_the_stable_one_does_not_define() -> None:
    plan_update = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s",
            "update": {
                "sessionUpdate": "plan_removed",
                "planId": "p1",
            },
        },
    }
    validate_agent_message(plan_update, unstable=True)
    with pytest.raises(SchemaViolation):
        validate_agent_message(plan_update)
    assert "session/fork" in schema_methods("agent", "Request", unstable=True)
    assert "session/fork" not in schema_methods("agent", "Request")
    broken = {
        **plan_update,
        "params": {"sessionId": "s", "update": {"sessionUpdate": "plan_removed"}},
    }
    with pytest.raises(SchemaViolation, match="planId"):
        validate_agent_message(broken, unstable=True)
