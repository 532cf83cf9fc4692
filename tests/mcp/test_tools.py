"""An MCP server's tools as definitions: names, schemas, declared risk, cards."""

from __future__ import annotations

import math
from typing import Any

import mcp.types as m
import pytest

from acp_sidecar.agent.console import summary
from acp_sidecar.mcp.tools import (
    declared_risk,
    mcp_tool_definitions,
    progress_text,
    short_arguments,
    tool_name,
)
from acp_sidecar.tools import GenericCallView, ToolRegistry
from acp_sidecar.tools.json_values import freeze_json
from acp_sidecar.tools.registry import TOOL_NAME
from tests.mcp.fake_source import READ_LOCAL, READ_WORLD, FakeSource, tool


def test_names_are_prefixed_and_sanitized() -> None:
    assert tool_name("fs", "read_file", ()) == "mcp__fs__read_file"
    assert tool_name("my server", "get.time/now", ()) == "mcp__my_server__get_time_now"
    assert tool_name("ünï", "x", ()) == "mcp___n___x"


def test_a_long_name_keeps_its_start_and_a_stable_hash() -> None:
    long_tool = "t" * 100
    name = tool_name("server", long_tool, ())
    assert len(name) == 64 and TOOL_NAME.fullmatch(name)
    assert name.startswith("mcp__server__ttt")
    assert name == tool_name("server", long_tool, ())  # the same in every session
    assert name != tool_name("server", long_tool + "u", ())


def test_names_are_unique_against_taken_and_each_other() -> None:
    source = FakeSource("fs", (tool("a.b"), tool("a_b"), tool("a-b")))
    definitions, warnings = mcp_tool_definitions(source, taken={"mcp__fs__a_b"})
    assert [d.name for d in definitions] == ["mcp__fs__a_b_2", "mcp__fs__a_b_3", "mcp__fs__a-b"]
    assert warnings == ()
    long = tool_name("s", "x" * 80, ())
    assert tool_name("s", "x" * 80, {long}) == long[:62] + "_2"


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"type": "array"}, 'not a JSON Schema object with "type": "object"'),
        ({}, 'not a JSON Schema object with "type": "object"'),
        (
            {"type": "object", "properties": {"n": {"type": "number", "default": math.nan}}},
            "not lossless JSON: inputSchema/properties/n/default",
        ),
    ],
)
def test_a_tool_whose_schema_cannot_be_used_is_left_out(schema: dict[str, Any], why: str) -> None:
    source = FakeSource("srv", (tool("bad", schema=schema), tool("good")))
    definitions, warnings = mcp_tool_definitions(source, taken=())
    assert [d.name for d in definitions] == ["mcp__srv__good"]
    (warning,) = warnings
    assert warning.startswith("The MCP server 'srv' offers a tool 'bad' that cannot be used: ")
    assert why in warning and warning.endswith("It is left out.")


def test_every_definition_registers_as_the_registry_checks_it() -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "where"},
            "n": {"type": "integer"},
        },
        "required": ["path"],
        "additionalProperties": False,
    }
    source = FakeSource("fs", (tool("read", schema=schema, description="Read a file."),))
    (definition,), _ = mcp_tool_definitions(source, taken=())
    registry = ToolRegistry()
    snapshot = registry.register(definition)
    assert registry.schemas() == [
        {"name": "mcp__fs__read", "description": "Read a file.", "parameters": schema}
    ]
    assert snapshot.parameters == freeze_json(schema)


@pytest.mark.parametrize(
    ("annotations", "read_only", "open_world"),
    [
        (None, False, True),
        (m.ToolAnnotations(), False, True),
        (m.ToolAnnotations(read_only_hint=True, open_world_hint=False), True, False),
        (m.ToolAnnotations(read_only_hint=True), True, True),
        (m.ToolAnnotations(read_only_hint=True, open_world_hint=True), True, True),
        (m.ToolAnnotations(read_only_hint=False, open_world_hint=False), False, False),
        (m.ToolAnnotations(destructive_hint=False, idempotent_hint=True), False, True),
    ],
)
def test_risk_is_what_the_annotations_declare(
    annotations: m.ToolAnnotations | None, read_only: bool, open_world: bool
) -> None:
    assert declared_risk(annotations) == (read_only, open_world)
    source = FakeSource("s", (tool("t", annotations=annotations),))
    (definition,), _ = mcp_tool_definitions(source, taken=())
    assert (definition.read_only, definition.open_world) == (read_only, open_world)


def test_the_description_is_the_servers_and_the_console_shows_its_first_sentence() -> None:
    text = "Get the current time in a timezone. Uses IANA names.\n\nMore detail here."
    source = FakeSource("time", (tool("get_current_time", description=text), tool("bare")))
    described, bare = mcp_tool_definitions(source, taken=())[0]
    assert described.description == text
    assert summary(described.description) == "Get the current time in a timezone."
    assert bare.description == "The bare tool of the MCP server time."


def card(definition: Any, arguments: Any) -> GenericCallView:
    view = definition.present_call(freeze_json(arguments))
    assert isinstance(view, GenericCallView)
    return view


def test_the_card_title_is_the_tools_title_and_a_short_form_of_the_arguments() -> None:
    source = FakeSource(
        "s",
        (
            tool("get_time", title="Get time", annotations=READ_LOCAL),
            tool("fetch", annotations=m.ToolAnnotations(title="Fetch a page", read_only_hint=True)),
            tool("write"),
        ),
    )
    get_time, fetch, write = mcp_tool_definitions(source, taken=())[0]
    view = card(get_time, {"timezone": "Europe/Paris"})
    assert (view.title, view.kind, view.raw_input) == ("Get time: Europe/Paris", "read", None)
    view = card(fetch, {"url": "https://example.com", "max_length": 500, "raw": False})
    assert view.title == "Fetch a page: url: https://example.com, max_length: 500, raw: false"
    assert view.kind == "fetch"
    assert (card(write, {}).title, card(write, {}).kind) == ("write", "other")
    assert card(write, None).title == "write"


def test_a_title_is_one_line_and_never_empty() -> None:
    source = FakeSource("s", (tool("multi", title="Get\n  the time "), tool("blank", title=" ")))
    multi, blank = mcp_tool_definitions(source, taken=())[0]
    assert card(multi, {}).title == "Get the time"
    assert card(blank, {}).title == "blank"


def test_short_arguments_stay_short_and_on_one_line() -> None:
    assert short_arguments({"text": "a\nb\tc"}) == "a b c"
    assert short_arguments({"nested": {"a": 1}, "list": [1], "empty": []}) == (
        "nested: {…}, list: […], empty: []"
    )
    shown = short_arguments({"q": "x" * 500})
    assert len(shown) == 60 and shown.endswith("…")
    assert short_arguments([1, 2]) == ""


@pytest.mark.parametrize(
    ("progress", "total", "message", "text"),
    [
        (3, 10, "copying", "3/10 — copying"),
        (3.0, 10.0, None, "3/10"),
        (0.25, None, "warming up", "0.25 — warming up"),
        (7, None, None, "7"),
        (1, 2, "", "1/2"),
    ],
)
def test_progress_text(
    progress: float, total: float | None, message: str | None, text: str
) -> None:
    assert progress_text(progress, total, message) == text


def test_an_empty_server_gives_nothing() -> None:
    assert mcp_tool_definitions(FakeSource("s", ()), taken=()) == ((), ())


def test_the_read_only_tools_are_declared_so() -> None:
    source = FakeSource("s", (tool("a", annotations=READ_LOCAL), tool("b", annotations=READ_WORLD)))
    a, b = mcp_tool_definitions(source, taken=())[0]
    assert (a.read_only, a.open_world, b.read_only, b.open_world) == (True, False, True, True)
