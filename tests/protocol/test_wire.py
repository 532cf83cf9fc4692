"""Round trips and exact wire shapes of ``to_wire`` / ``from_wire``."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from acp_sidecar import protocol as p
from acp_sidecar.protocol import from_wire, to_wire
from tests.protocol.samples import (
    ALL_SAMPLES,
    PLAN_OPERATIONS,
    SUBAGENT_UPDATES,
    Sample,
    sample_id,
    wire_types_in,
)


@pytest.mark.parametrize("sample", ALL_SAMPLES + PLAN_OPERATIONS + SUBAGENT_UPDATES, ids=sample_id)
def test_every_sample_round_trips(sample: Sample) -> None:
    wire = to_wire(sample.value)
    assert json.loads(json.dumps(wire)) == wire  # Plain JSON, nothing Python-only inside.
    assert from_wire(wire, type(sample.value)) == sample.value


def test_samples_cover_every_wire_type() -> None:
    exported = {
        value
        for value in vars(p).values()
        if isinstance(value, type) and issubclass(value, p.WireType) and value is not p.WireType
    }
    covered: set[type] = set()
    for sample in ALL_SAMPLES + PLAN_OPERATIONS + SUBAGENT_UPDATES:
        covered |= wire_types_in(sample.value)
    assert exported - covered == set()


def test_converter_unstructure_agrees_with_to_wire() -> None:
    for sample in ALL_SAMPLES:
        assert p.converter.unstructure(sample.value) == to_wire(sample.value)
        assert p.converter.structure(to_wire(sample.value), type(sample.value)) == sample.value


def test_agent_message_chunk_wire_shape() -> None:
    value = p.SessionNotification(
        session_id="s1", update=p.AgentMessageChunk(content=p.TextContentBlock(text="hi"))
    )
    assert to_wire(value) == {
        "sessionId": "s1",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi"},
        },
    }
    # The tag leads each object, so logs read naturally.
    assert list(to_wire(value)["update"]) == ["sessionUpdate", "content"]


def test_tool_call_wire_shape_camel_case_and_omission() -> None:
    value = p.ToolCallStart(
        tool_call_id="c1",
        title="Edit",
        kind="edit",
        content=[p.ToolCallDiff(path="/w/a.py", new_text="b")],
        locations=[p.ToolCallLocation(path="/w/a.py", line=2)],
        raw_input={"snake_case": {"kept": None}},
    )
    assert to_wire(value) == {
        "sessionUpdate": "tool_call",
        "toolCallId": "c1",
        "title": "Edit",
        "kind": "edit",
        "content": [{"type": "diff", "path": "/w/a.py", "newText": "b", "oldText": None}],
        "locations": [{"path": "/w/a.py", "line": 2}],
        "rawInput": {"snake_case": {"kept": None}},
    }


def test_diff_old_text_is_sent_as_null_for_a_new_file_and_may_be_omitted_incoming() -> None:
    assert to_wire(p.ToolCallDiff(path="/a", new_text="x"))["oldText"] is None
    assert to_wire(p.ToolCallDiff(path="/a", old_text="", new_text="x"))["oldText"] == ""
    incoming = {"type": "diff", "path": "/a", "newText": "x"}
    assert from_wire(incoming, p.ToolCallDiff) == p.ToolCallDiff(path="/a", new_text="x")


def test_update_content_none_is_omitted_but_empty_list_is_sent() -> None:
    assert "content" not in to_wire(p.ToolCallProgress(tool_call_id="c"))
    assert to_wire(p.ToolCallProgress(tool_call_id="c", content=[]))["content"] == []


def test_meta_is_renamed_and_passed_through_verbatim() -> None:
    meta: dict[str, Any] = {"terminal_output": {"terminal_id": "t", "data": "ls\n"}, "x_y": [1]}
    wire = to_wire(p.ToolCallProgress(tool_call_id="c", meta=meta))
    assert wire == {"sessionUpdate": "tool_call_update", "toolCallId": "c", "_meta": meta}
    assert wire["_meta"] is meta
    decoded = from_wire({"toolCallId": "c", "_meta": meta}, p.ToolCallProgress)
    assert decoded.meta is meta
    assert "meta" not in to_wire(p.ToolCallProgress(tool_call_id="c", meta=None))


def test_defaults_with_a_value_are_always_sent() -> None:
    assert to_wire(p.InitializeResponse(protocol_version=1)) == {
        "protocolVersion": 1,
        "agentCapabilities": {
            "loadSession": False,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
            "mcpCapabilities": {"http": False, "sse": False},
            "sessionCapabilities": {},
            "auth": {},  # the schema's default, as the SDK sends it
        },
        "authMethods": [],
    }
    assert to_wire(p.NewSessionRequest(cwd="/w")) == {"cwd": "/w", "mcpServers": []}


def test_missing_capabilities_decode_to_schema_defaults() -> None:
    request = from_wire({"protocolVersion": 1}, p.InitializeRequest)
    assert request.client_capabilities == p.ClientCapabilities()
    assert request.client_capabilities.fs.read_text_file is False
    assert request.client_capabilities.terminal is False
    assert from_wire({"cwd": "/w"}, p.NewSessionRequest).mcp_servers == []


def test_zed_style_initialize_decodes() -> None:
    wire = {
        "protocolVersion": 1,
        "clientCapabilities": {
            "fs": {"readTextFile": True, "writeTextFile": True},
            "terminal": True,
            "auth": {"terminal": False},
            "_meta": {"terminal_output": True, "terminal-auth": True},
        },
        "clientInfo": {"name": "zed", "title": "Zed", "version": "0.212.0"},
    }
    request = from_wire(wire, p.InitializeRequest)
    assert request.client_capabilities.fs == p.FileSystemCapability(True, True)
    assert request.client_capabilities.auth == p.AuthCapabilities(terminal=False)
    assert request.client_capabilities.meta == {"terminal_output": True, "terminal-auth": True}
    assert request.client_info == p.Implementation(name="zed", version="0.212.0", title="Zed")


def test_unknown_fields_are_ignored_at_every_level() -> None:
    wire = {
        "sessionId": "s",
        "future": 1,
        "prompt": [
            {"type": "text", "text": "hi", "newField": {"a": 1}},
            {
                "type": "resource",
                "resource": {"uri": "file:///a", "text": "x", "extra": True},
                "more": [],
            },
        ],
    }
    assert from_wire(wire, p.PromptRequest) == p.PromptRequest(
        session_id="s",
        prompt=[
            p.TextContentBlock(text="hi"),
            p.EmbeddedResourceContentBlock(
                resource=p.TextResourceContents(text="x", uri="file:///a")
            ),
        ],
    )


def test_null_optional_fields_decode_to_none() -> None:
    wire = {"sessionId": "s", "cwd": "/w", "title": None, "updatedAt": None, "_meta": None}
    assert from_wire(wire, p.SessionInfo) == p.SessionInfo(session_id="s", cwd="/w")


def test_embedded_resource_is_told_apart_by_text_or_blob() -> None:
    text = from_wire({"uri": "u", "text": "t"}, p.EmbeddedResourceResource)  # type: ignore[arg-type]
    blob = from_wire({"uri": "u", "blob": "AA=="}, p.EmbeddedResourceResource)  # type: ignore[arg-type]
    assert text == p.TextResourceContents(text="t", uri="u")
    assert blob == p.BlobResourceContents(blob="AA==", uri="u")


def test_union_aliases_decode_directly() -> None:
    update = from_wire({"sessionUpdate": "plan", "entries": []}, p.SessionUpdate)  # type: ignore[arg-type]
    assert update == p.Plan(entries=[])


def test_an_auth_method_without_a_type_is_the_agent_variant() -> None:
    """The schema: "When no ``type`` is present, the method is treated as ``agent``"."""
    agent = {"id": "a", "name": "A", "_meta": {"terminal-auth": {"command": "x"}}}
    terminal = {"type": "terminal", "id": "t", "name": "T", "args": ["login"], "env": {"K": "v"}}
    methods = from_wire(
        {"protocolVersion": 1, "authMethods": [agent, terminal]}, p.InitializeResponse
    ).auth_methods
    assert methods == [
        p.AuthMethodAgent(id="a", name="A", meta={"terminal-auth": {"command": "x"}}),
        p.AuthMethodTerminal(id="t", name="T", args=["login"], env={"K": "v"}),
    ]
    assert to_wire(methods[0]) == agent  # no tag is written for the default variant
    assert to_wire(methods[1]) == terminal
    assert from_wire({"type": "terminal", "id": "t", "name": "T"}, p.AuthMethod) == (  # type: ignore[arg-type]
        p.AuthMethodTerminal(id="t", name="T")
    )
    assert to_wire(p.AuthMethodTerminal(id="t", name="T")) == {
        "type": "terminal",
        "id": "t",
        "name": "T",
        "args": [],
    }


def test_permission_outcomes_decode() -> None:
    selected = {"outcome": {"outcome": "selected", "optionId": "allow-once"}}
    cancelled = {"outcome": {"outcome": "cancelled"}}
    assert from_wire(selected, p.RequestPermissionResponse).outcome == (
        p.SelectedPermissionOutcome(option_id="allow-once")
    )
    assert from_wire(cancelled, p.RequestPermissionResponse).outcome == (
        p.CancelledPermissionOutcome()
    )


def test_integer_priority_decodes_as_float() -> None:
    assert from_wire({"priority": 1}, p.Annotations).priority == 1.0


def test_to_wire_rejects_non_wire_values() -> None:
    with pytest.raises(TypeError, match="not an ACP wire type: dict"):
        to_wire({"sessionId": "s"})


def test_types_are_frozen_and_compare_by_value() -> None:
    block = p.TextContentBlock(text="a")
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        block.text = "b"  # type: ignore[misc]
    assert block == p.TextContentBlock(text="a")
    assert block != p.TextContentBlock(text="b")
    assert block != p.ImageContentBlock(data="a", mime_type="image/png")
    assert hash(block) == hash(p.TextContentBlock(text="a"))
    assert repr(block) == "TextContentBlock(type='text', text='a', annotations=None, meta=None)"


def test_every_field_has_a_docstring_and_every_class_too() -> None:
    import ast
    import inspect

    for module in (p.content, p.tool_call, p.updates, p.initialize, p.session, p.client):
        tree = ast.parse(inspect.getsource(module))
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            assert ast.get_docstring(node), node.name
            body = node.body
            for i, stmt in enumerate(body):
                if isinstance(stmt, ast.AnnAssign):
                    following = body[i + 1] if i + 1 < len(body) else None
                    assert isinstance(following, ast.Expr), (
                        f"{node.name}.{ast.unparse(stmt.target)}"
                    )
                    assert isinstance(following.value, ast.Constant)


def test_a_value_outside_a_union_fails_clearly() -> None:
    wrong = p.TextContentBlock(text="x")
    with pytest.raises(
        TypeError, match=r"^SessionNotification.update: TextContentBlock is not one"
    ):
        to_wire(p.SessionNotification(session_id="s", update=wrong))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^ToolCallStart.content\[\]: TextContentBlock is not"):
        to_wire(p.ToolCallStart(tool_call_id="c", title="t", content=[wrong]))  # type: ignore[list-item]


@attrs.define
class _Envelope:
    """Shaped like pygls's ``JsonRPCRequestMessage`` / ``JsonRPCResponseMessage``."""

    id: int | str
    jsonrpc: str
    result: Any = None
    params: Any = None


def test_foreign_attrs_classes_keep_cattrs_default_handling() -> None:
    """pygls passes its own envelopes through the converter: no renaming, no omission."""
    response = _Envelope(id=3, jsonrpc="2.0", result=p.PromptResponse(stop_reason="end_turn"))
    assert p.converter.unstructure(response) == {
        "id": 3,
        "jsonrpc": "2.0",
        "result": {"stopReason": "end_turn"},
        "params": None,
    }
    incoming = {"id": "r1", "jsonrpc": "2.0", "params": {"sessionId": "s", "prompt": []}}
    request = p.converter.structure(incoming, _Envelope)
    assert request == _Envelope(id="r1", jsonrpc="2.0", params=incoming["params"])
    assert p.converter.structure({"id": 9, "jsonrpc": "2.0"}, _Envelope).id == 9
