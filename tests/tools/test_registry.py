"""Registration is a value boundary: validated, copied, bound once, deep-frozen."""

from __future__ import annotations

import math
from typing import Any

import attrs
import pytest

from acp_sidecar.tools import ToolDefinition, ToolExecution, ToolRegistrationError, ToolRegistry
from acp_sidecar.tools.json_values import FrozenDict

from .helpers import OBJECT_SCHEMA, call, raw_tool


class MutableTool:
    """A duck-typed definition whose methods are bound at registration."""

    name = "mutable"
    description = "a plain object"

    def __init__(self) -> None:
        self.parameters: dict[str, Any] = {"type": "object", "properties": {}}
        self.label = "original"

    async def execute(self, args: Any, execution: ToolExecution) -> str:
        return self.label


def test_register_returns_a_frozen_snapshot() -> None:
    registry = ToolRegistry()
    snapshot = registry.register(raw_tool())
    assert registry.get("echo") is snapshot
    assert registry.visible() == (snapshot,)
    assert isinstance(snapshot.parameters, FrozenDict)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        snapshot.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        snapshot.parameters["type"] = "array"
    with pytest.raises(TypeError):
        snapshot.parameters["properties"]["x"]["type"] = "string"


async def test_later_changes_to_the_callers_object_do_not_change_dispatch() -> None:
    registry = ToolRegistry()
    tool = MutableTool()
    registry.register(tool)
    tool.parameters["properties"]["injected"] = {"type": "string"}

    async def hijack(args: Any, execution: ToolExecution) -> str:
        return "hijacked"

    tool.execute = hijack  # type: ignore[method-assign]
    tool.name = "renamed"  # type: ignore[misc]
    result = await registry.execute(call("mutable", {}))
    assert result.content[0].text == "original"  # type: ignore[union-attr]
    assert registry.get("renamed") is None
    assert "injected" not in registry.schemas()[0]["parameters"]["properties"]


def test_schemas_are_detached_allowlisted_projections() -> None:
    registry = ToolRegistry()
    registry.register(raw_tool(timeout_ms=5, present_call=lambda args: None))
    first = registry.schemas()
    assert first == [{"name": "echo", "description": "the echo tool", "parameters": OBJECT_SCHEMA}]
    assert set(first[0]) == {"name", "description", "parameters"}
    first[0]["parameters"]["properties"]["x"]["type"] = "string"
    assert registry.schemas()[0]["parameters"] == OBJECT_SCHEMA
    assert type(registry.schemas()[0]["parameters"]) is dict


def test_duplicate_name_is_an_error() -> None:
    registry = ToolRegistry()
    registry.register(raw_tool())
    with pytest.raises(ToolRegistrationError, match="a tool named 'echo' is already registered"):
        registry.register(raw_tool())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "has space"}, "name: expected 1-64 characters of [A-Za-z0-9_-], got 'has space'"),
        ({"name": ""}, "name: expected 1-64 characters"),
        ({"description": 3}, "description: expected a string, got int"),
        (
            {"parameters": {"type": "object", "x": math.nan}},
            "parameters/x: nan is not a JSON number",
        ),
        ({"parameters": {"type": "object", 1: 2}}, "parameters/: key 1 is not a string"),
        ({"parameters": {"type": "object", "s": {1}}}, "parameters/s: set is not JSON"),
        (
            {"parameters": {"type": "array"}},
            'parameters: expected a JSON Schema object with "type": "object"',
        ),
        ({"execute": "not callable"}, "execute: expected a callable"),
        ({"present_call": 1}, "present_call: expected a callable or None"),
        ({"present_result": 1}, "present_result: expected a callable or None"),
        ({"timeout_ms": -1}, "timeout_ms: expected a positive number or None, got -1"),
        ({"timeout_ms": math.inf}, "timeout_ms: expected a positive number or None, got inf"),
        ({"timeout_ms": True}, "timeout_ms: expected a positive number or None, got True"),
    ],
)
def test_invalid_definitions_are_refused(change: dict[str, Any], message: str) -> None:
    definition = attrs.evolve(raw_tool(), **change) if "parameters" not in change else None
    if definition is None:
        definition = object.__new__(ToolDefinition)
        for field in attrs.fields(ToolDefinition):
            object.__setattr__(definition, field.name, getattr(raw_tool(), field.name))
        object.__setattr__(definition, "parameters", change["parameters"])
    with pytest.raises(ToolRegistrationError) as info:
        ToolRegistry().register(definition)
    assert message in str(info.value)
    assert info.value.code == "INVALID_DEFINITION"


def test_every_problem_is_listed_at_once() -> None:
    class Bad:
        name = "bad name"
        description = None
        parameters = {"type": "string"}
        execute = None

    with pytest.raises(ToolRegistrationError) as info:
        ToolRegistry().register(Bad())
    text = str(info.value)
    for expected in ("name:", "description:", "parameters:", "execute:"):
        assert expected in text


def test_unregister() -> None:
    registry = ToolRegistry()
    registry.register(raw_tool())
    assert registry.unregister("echo") is True
    assert registry.unregister("echo") is False
    assert registry.visible() == ()
