"""MCP tools: names that are a pure function of (server, tool), remembered
answers that do not outlive a tool's declared risk, caps on titles and progress, calls
cancelled by nobody, input schemas checked as JSON Schema, contradictory hints."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp.types as m
import pytest

from acp_sidecar.bridge.policy import install_policy
from acp_sidecar.bridge.runner import run_call
from acp_sidecar.mcp.tools import (
    TITLE_MAX,
    declared_risk,
    mcp_tool_definitions,
    progress_text,
    tool_name,
)
from acp_sidecar.tools import GenericCallView, ToolExecutionInput, ToolRegistry
from acp_sidecar.tools.registry import TOOL_NAME
from tests.mcp.fake_source import READ_LOCAL, READ_WORLD, FakeSource, tool
from tests.mcp.test_tools_execute import session


def names(source: FakeSource, taken: frozenset[str] = frozenset()) -> dict[str, str]:
    definitions, _ = mcp_tool_definitions(source, taken=taken)
    return {d.description: d.name for d in definitions}


def test_a_name_does_not_depend_on_the_listing_order() -> None:
    dotted, plain = tool("a.b"), tool("a_b")
    first = names(FakeSource("s", (dotted, plain)))
    second = names(FakeSource("s", (plain, dotted)))
    assert first == second
    assert len(set(first.values())) == 2
    assert first["The a_b tool of the MCP server s."] == "mcp__s__a_b"  # nothing to change
    hashed = first["The a.b tool of the MCP server s."]
    assert hashed.startswith("mcp__s__a_b_") and TOOL_NAME.fullmatch(hashed)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (("x__y", "z"), ("x", "y__z")),
        (("x_", "y"), ("x", "_y")),
        (("s", "a.b"), ("s", "a_b")),
        (("s", "t" * 80), ("s", "t" * 81)),
    ],
)
def test_names_that_would_read_alike_differ_whatever_came_first(
    one: tuple[str, str], other: tuple[str, str]
) -> None:
    assert tool_name(*one) != tool_name(*other)
    assert tool_name(*one) == tool_name(*one)  # pure
    for server, name in (one, other):
        assert TOOL_NAME.fullmatch(tool_name(server, name))


def test_a_plain_name_never_looks_like_a_hashed_one() -> None:
    hashed = tool_name("s", "a.b")
    suffix = hashed.removeprefix("mcp__s__")
    assert tool_name("s", suffix) != hashed


def test_a_name_taken_by_a_built_in_skips_the_tool_instead_of_renaming_it() -> None:
    source = FakeSource("s", (tool("t"), tool("u")))
    definitions, warnings = mcp_tool_definitions(source, taken={"mcp__s__t"})
    assert [d.name for d in definitions] == ["mcp__s__u"]
    (warning,) = warnings
    assert "'t'" in warning and "mcp__s__t" in warning and "left out" in warning


def test_tools_that_share_a_name_are_all_skipped_whatever_the_order() -> None:
    a, b = tool("t", description="one"), tool("t", description="two")
    for order in ((a, b), (b, a)):
        definitions, warnings = mcp_tool_definitions(FakeSource("s", (*order, tool("u"))), taken=())
        assert [d.name for d in definitions] == ["mcp__s__u"]
        assert len(warnings) == 2


async def test_an_always_answer_stays_with_its_tool_after_a_relisting_in_another_order() -> None:
    fetch = tool("a.b", annotations=READ_WORLD)  # asked in ask mode: reaches outside
    delete = tool("a_b")  # may change things
    source = FakeSource("s", (fetch, delete))
    registry, scope, editor = session(source, "ask", "allow_always", "reject_once")
    fetch_name = tool_name("s", "a.b")
    assert not (await run_call(registry, scope, "c1", fetch_name, {"q": "x"})).is_error
    source.listed = (delete, fetch)
    relisted = ToolRegistry()
    for definition in mcp_tool_definitions(source, taken=())[0]:
        relisted.register(definition)
    install_policy(relisted)
    result = await run_call(relisted, scope, "c2", "mcp__s__a_b", {"q": "x"})
    assert result.is_error  # asked, and rejected: the answer about a.b did not carry over
    assert len(editor.asked) == 2
    assert [c.tool for c in source.calls] == ["a.b"]


async def test_an_always_answer_does_not_survive_a_change_of_declared_risk() -> None:
    source = FakeSource("s", (tool("t", annotations=READ_WORLD),))
    registry, scope, editor = session(source, "ask", "allow_always", "reject_once")
    assert not (await run_call(registry, scope, "c1", "mcp__s__t", {})).is_error
    assert not (await run_call(registry, scope, "c2", "mcp__s__t", {})).is_error
    assert len(editor.asked) == 1  # remembered while the tool stays what it declared
    source.listed = (tool("t"),)  # the server now declares nothing: it may change things
    relisted = ToolRegistry()
    for definition in mcp_tool_definitions(source, taken=())[0]:
        relisted.register(definition)
    install_policy(relisted)
    assert (await run_call(relisted, scope, "c3", "mcp__s__t", {})).is_error
    assert len(editor.asked) == 2
    assert len(source.calls) == 2


def test_card_titles_from_the_server_are_one_short_line() -> None:
    source = FakeSource("s", (tool("t", title="T" * 5000 + "\nsecond line"),))
    (definition,), _ = mcp_tool_definitions(source, taken=())
    assert definition.present_call is not None
    view = definition.present_call({})
    assert isinstance(view, GenericCallView)
    assert len(view.title) <= TITLE_MAX and "\n" not in view.title and view.title.endswith("…")


def test_progress_messages_are_one_short_line() -> None:
    text = progress_text(1, 2, "step\n" + "x" * 10_000)
    assert "\n" not in text and len(text) <= 300 and text.startswith("1/2 — step x")


async def test_a_call_cancelled_by_nobody_is_an_error_result_not_a_cancel() -> None:
    async def dies(tool: str, arguments: dict[str, Any], progress: Any) -> m.CallToolResult:
        raise asyncio.CancelledError()  # e.g. the connection cancelled its requests on close

    source = FakeSource("s", (tool("t"),), dies)
    registry = ToolRegistry()
    for definition in mcp_tool_definitions(source, taken=())[0]:
        registry.register(definition)
    result = await registry.execute(ToolExecutionInput(call_id="c", name="mcp__s__t", arguments={}))
    assert result.is_error and result.error is not None
    assert result.error.code == "MCP_SERVER_GONE"
    registry, scope, editor = session(source, "auto")
    result = await run_call(registry, scope, "c2", "mcp__s__t", {})
    assert result.error is not None and result.error.code == "MCP_SERVER_GONE"
    assert not scope.signal.cancelled


async def test_cancelling_the_calling_task_still_cancels() -> None:
    async def hangs(tool: str, arguments: dict[str, Any], progress: Any) -> m.CallToolResult:
        await asyncio.Event().wait()
        raise AssertionError

    source = FakeSource("s", (tool("t"),), hangs)
    registry = ToolRegistry()
    for definition in mcp_tool_definitions(source, taken=())[0]:
        registry.register(definition)
    task = asyncio.ensure_future(
        registry.execute(ToolExecutionInput(call_id="c", name="mcp__s__t", arguments={}))
    )
    await source.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert source.calls[0].cancelled


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"type": "object", "properties": {"q": {"type": "nope"}}}, "'nope' is not valid"),
        ({"type": "object", "properties": {"q": {"type": "string", "pattern": "("}}}, "regex"),
        ({"type": "object", "properties": {"q": {"$ref": "#/$defs/missing"}}}, "#/$defs/missing"),
        ({"type": "object", "properties": {"q": {"$ref": "https://x/s.json"}}}, "not local"),
    ],
)
def test_a_tool_whose_schema_is_not_valid_json_schema_is_left_out(
    schema: dict[str, Any], why: str
) -> None:
    source = FakeSource("srv", (tool("bad", schema=schema), tool("good")))
    definitions, warnings = mcp_tool_definitions(source, taken=())
    assert [d.name for d in definitions] == ["mcp__srv__good"]
    (warning,) = warnings
    assert "'bad'" in warning and why in warning and warning.endswith("It is left out.")


def test_a_schema_nested_too_deeply_is_left_out_not_raised() -> None:
    schema: dict[str, Any] = {"type": "object"}
    node = schema
    for _ in range(5000):
        node["properties"] = {"a": {"type": "object"}}
        node = node["properties"]["a"]
    source = FakeSource("s", (tool("deep", schema=schema), tool("good")))
    definitions, warnings = mcp_tool_definitions(source, taken=())
    assert [d.name for d in definitions] == ["mcp__s__good"]
    assert "nested too deeply" in warnings[0]


def test_a_schema_with_local_refs_that_resolve_is_kept() -> None:
    schema = {
        "type": "object",
        "$defs": {"P": {"type": "object", "properties": {"x": {"type": "integer"}}}},
        "properties": {
            "p": {"$ref": "#/$defs/P"},
            "a": {"$ref": "#/properties/p"},
            "r": {"$ref": "#"},
            "e": {"const": {"$ref": "not a reference, a value"}},
        },
    }
    definitions, warnings = mcp_tool_definitions(
        FakeSource("s", (tool("t", schema=schema),)), taken=()
    )
    assert warnings == () and len(definitions) == 1


@pytest.mark.parametrize(
    "annotations",
    [
        m.ToolAnnotations(read_only_hint=True, destructive_hint=True, open_world_hint=False),
        m.ToolAnnotations.model_validate(
            {"readOnlyHint": True, "destructiveHint": True, "openWorldHint": False}
        ),
    ],
)
def test_a_read_only_tool_that_says_it_destroys_may_change_things(
    annotations: m.ToolAnnotations,
) -> None:
    assert declared_risk(annotations) == (False, False)


def test_read_local_is_still_read_only() -> None:
    assert declared_risk(READ_LOCAL) == (True, False)


@pytest.mark.parametrize("remote", [False, True])
def test_a_remote_servers_tools_reach_the_open_world_whatever_they_say(remote: bool) -> None:
    source = FakeSource("s", (tool("t", annotations=READ_LOCAL),), remote=remote)
    [definition], _warnings = mcp_tool_definitions(source, taken=())
    assert (definition.read_only, definition.open_world) == (True, remote)
    view = definition.present_call({})
    assert isinstance(view, GenericCallView)
    assert view.kind == ("fetch" if remote else "read")
