"""A read-only tool that reaches the open world: allowed in read-only mode, asked for in ask
mode, and nothing else about the modes changes. Declared, never inferred from the card."""

from __future__ import annotations

from typing import Any

import pytest

from acp_sidecar.bridge.policy import install_policy
from acp_sidecar.bridge.runner import run_call
from acp_sidecar.tools import (
    GenericCallView,
    SchemaProp,
    ToolDefinition,
    ToolExecution,
    ToolRegistrationError,
    ToolRegistry,
    define_tool,
)
from tests.bridge.test_policy import scope
from tests.fakes import Editor


async def noop(args: Any, execution: ToolExecution) -> str:
    return "ran"


def registry() -> ToolRegistry:
    reg = ToolRegistry()
    props = {"url": SchemaProp(type="string")}
    fetch_card = GenericCallView(title="Fetch", kind="fetch")
    reg.register(
        define_tool(
            name="fetch",
            description="reads the web",
            parameters=props,
            execute=noop,
            present_call=lambda a: fetch_card,
            read_only=True,
            open_world=True,
        )
    )
    # Drawn as a fetch but declares a closed world: the card plays no part.
    reg.register(
        define_tool(
            name="local",
            description="reads here",
            parameters=props,
            execute=noop,
            present_call=lambda a: fetch_card,
            read_only=True,
        )
    )
    reg.register(
        define_tool(
            name="post",
            description="writes to the web",
            parameters=props,
            execute=noop,
            open_world=True,
        )
    )
    install_policy(reg)
    return reg


@pytest.mark.parametrize(
    ("mode", "tool", "asked", "allowed"),
    [
        ("ask", "fetch", True, True),
        ("read-only", "fetch", False, True),
        ("auto", "fetch", False, True),
        ("ask", "local", False, True),
        ("read-only", "local", False, True),
        ("ask", "post", True, True),
        ("read-only", "post", False, False),
        ("auto", "post", False, True),
    ],
)
async def test_modes_with_the_open_world(mode: str, tool: str, asked: bool, allowed: bool) -> None:
    editor = Editor("allow_once")
    result = await run_call(registry(), scope(editor, mode), "c1", tool, {"url": "u"})
    assert bool(editor.asked) is asked
    assert result.is_error is not allowed


async def test_the_dialog_says_why_and_a_rejection_stands() -> None:
    editor = Editor("reject_once")
    result = await run_call(registry(), scope(editor, "ask"), "c1", "fetch", {"url": "u"})
    assert result.is_error
    assert editor.asked[0].tool_call.title == "Fetch"
    assert editor.asked[0].tool_call.kind == "fetch"
    assert editor.cards("c1")[-1]["status"] == "failed"


async def test_always_allow_is_remembered_for_an_open_world_tool() -> None:
    editor = Editor("allow_always")
    reg, session = registry(), scope(editor, "ask")
    for call_id in ("c1", "c2"):
        assert not (await run_call(reg, session, call_id, "fetch", {"url": "u"})).is_error
    assert len(editor.asked) == 1


def test_open_world_is_declared_and_checked_at_registration() -> None:
    reg = registry()
    assert [(d.name, d.read_only, d.open_world) for d in reg.visible()] == [
        ("fetch", True, True),
        ("local", True, False),
        ("post", False, True),
    ]
    bad = ToolDefinition("x", "d", reg.visible()[0].parameters, noop, open_world=1)  # type: ignore[arg-type]
    with pytest.raises(ToolRegistrationError, match="open_world: expected True or False, got 1"):
        ToolRegistry().register(bad)


def test_the_read_only_modes_description_says_what_may_leave_the_machine() -> None:
    from acp_sidecar.bridge.modes import MODES

    descriptions = {mode.id: mode.description or "" for mode in MODES}
    # Read-only runs read-only tools that reach outside: the user is told data may leave.
    read_only = descriptions["read-only"]
    assert "outside this machine" in read_only and "leave" in read_only
    assert "outside this machine" in descriptions["ask"]
