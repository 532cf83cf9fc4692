"""Modes and permissions: what each mode does, the dialog, "always", cancellation."""

from __future__ import annotations

from typing import Any

import pytest

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.policy import CallScope, SessionPolicy, install_policy
from acp_sidecar.bridge.runner import run_call
from acp_sidecar.tools import (
    CancelSignal,
    Deny,
    DiffCallView,
    FileDiff,
    GenericCallView,
    SchemaProp,
    TerminalCallView,
    ToolExecution,
    ToolRegistry,
    define_tool,
)
from acp_sidecar.tools.execution import ToolExecutionInput
from tests.fakes import Editor


async def noop(args: Any, execution: ToolExecution) -> str:
    return "ran"


def registry() -> ToolRegistry:
    reg = ToolRegistry()
    props = {"path": SchemaProp(type="string")}
    reg.register(
        define_tool(
            name="look",
            description="read-ish",
            parameters=props,
            execute=noop,
            present_call=lambda a: GenericCallView(card="generic", title="Look", kind="read"),
            read_only=True,
        )
    )
    reg.register(
        define_tool(
            name="change",
            description="edits",
            parameters=props,
            execute=noop,
            present_call=lambda a: DiffCallView(
                card="diff", title="Change", diffs=[FileDiff("f", "a", "b")]
            ),
        )
    )
    reg.register(
        define_tool(
            name="run",
            description="executes",
            parameters=props,
            execute=noop,
            present_call=lambda a: TerminalCallView(card="terminal", title="run it"),
        )
    )
    # Risk is declared, not drawn: a read card that declares nothing, a tool with no card at
    # all, and a read-only tool whose card looks like an edit.
    reg.register(
        define_tool(
            name="peek",
            description="draws a read card but declares nothing",
            parameters=props,
            execute=noop,
            present_call=lambda a: GenericCallView(card="generic", title="Peek", kind="read"),
        )
    )
    reg.register(define_tool(name="bare", description="no card", parameters=props, execute=noop))
    reg.register(
        define_tool(
            name="sketch",
            description="read-only, drawn as a diff",
            parameters=props,
            execute=noop,
            present_call=lambda a: DiffCallView(
                card="diff", title="Sketch", diffs=[FileDiff("f", "a", "b")]
            ),
            read_only=True,
        )
    )
    install_policy(reg)
    return reg


def scope(editor: Editor, mode: str = "ask") -> CallScope:
    return CallScope(
        session_id="s",
        cards=CardContext("/w"),
        policy=SessionPolicy(mode=mode),  # type: ignore[arg-type]
        send=editor.send,
        asker=editor,
        signal=CancelSignal(),
    )


@pytest.mark.parametrize(
    ("mode", "tool", "asked", "allowed"),
    [
        ("ask", "look", False, True),
        ("ask", "change", True, True),
        ("ask", "run", True, True),
        ("auto", "change", False, True),
        ("auto", "run", False, True),
        ("read-only", "look", False, True),
        ("read-only", "change", False, False),
        ("read-only", "run", False, False),
        # Risk is what the tool declares, never how its card is drawn.
        ("ask", "peek", True, True),
        ("ask", "bare", True, True),
        ("ask", "sketch", False, True),
        ("auto", "peek", False, True),
        ("auto", "bare", False, True),
        ("read-only", "peek", False, False),
        ("read-only", "bare", False, False),
        ("read-only", "sketch", False, True),
    ],
)
async def test_modes(mode: str, tool: str, asked: bool, allowed: bool) -> None:
    editor = Editor("allow_once")
    result = await run_call(registry(), scope(editor, mode), "c1", tool, {})
    assert bool(editor.asked) is asked
    assert result.is_error is not allowed
    if mode == "read-only" and not allowed:
        assert f"read-only mode, which refuses {tool}" in result.content[0].text  # type: ignore[union-attr]


async def test_the_dialog_shows_the_pending_card_and_the_session_scope_options() -> None:
    editor = Editor("allow_once")
    await run_call(registry(), scope(editor), "c1", "change", {"path": "f"})
    request = editor.asked[0]
    assert request.tool_call.tool_call_id == "c1"
    assert request.tool_call.title == "Change"
    assert request.tool_call.kind == "edit"
    assert [o.kind for o in request.options] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    statuses = [u.get("status") for u in editor.updates]
    assert statuses == ["pending", "in_progress", "completed"]


async def test_always_is_remembered_per_session_and_tool() -> None:
    reg = registry()
    editor = Editor("allow_always", "reject_always")
    session = scope(editor)
    assert not (await run_call(reg, session, "c1", "change", {})).is_error
    assert not (await run_call(reg, session, "c2", "change", {})).is_error
    assert len(editor.asked) == 1
    assert (await run_call(reg, session, "c3", "run", {})).is_error
    assert (await run_call(reg, session, "c4", "run", {})).is_error
    assert len(editor.asked) == 2
    other = scope(Editor("allow_once"))  # another session asks again
    assert not (await run_call(reg, other, "c5", "change", {})).is_error


async def test_reject_once_denies_without_dispatch() -> None:
    editor = Editor("reject_once")
    result = await run_call(registry(), scope(editor), "c1", "run", {})
    assert result.is_error
    assert result.error is not None and result.error.code == "DENIED"
    assert [u.get("status") for u in editor.updates] == ["pending", "failed"]


async def test_a_cancelled_dialog_cancels_the_call_and_the_turn() -> None:
    editor = Editor(None)
    session = scope(editor)
    result = await run_call(registry(), session, "c1", "change", {})
    assert result.is_error and result.error is not None
    assert result.error.code == "CANCELLED"
    assert result.content[0].text == "Cancelled before permission was given"  # type: ignore[union-attr]
    assert session.signal.cancelled


class FilesOnly:
    """A tool context as written before contexts carried permissions: no ``permissions``."""

    cwd = "/w"
    allow_outside_workspace = False
    files = None


async def test_a_context_without_permissions_is_treated_as_no_context() -> None:
    # Outside a session the mode policy leaves calls alone; a context written before contexts
    # carried permissions is outside a session too, not a listener failure.
    reg = registry()
    for tool in ("look", "change"):
        alone = await reg.execute(ToolExecutionInput("c1", tool, {}))
        files_only = await reg.execute(ToolExecutionInput("c2", tool, {}, context=FilesOnly()))
        assert (files_only.is_error, files_only.error) == (alone.is_error, alone.error)
        assert not files_only.is_error


async def test_a_plugin_deny_stands_even_in_auto_mode() -> None:
    reg = registry()
    reg.on_pre_execute(lambda execution, next_: Deny("plugin says no"), prepend=False)
    result = await run_call(reg, scope(Editor(), "auto"), "c1", "look", {})
    assert result.is_error


async def test_an_always_answer_is_for_the_risk_the_tool_declared_when_asked() -> None:
    def fetcher(read_only: bool) -> ToolRegistry:
        reg = ToolRegistry()
        reg.register(
            define_tool(
                name="fetch",
                description="fetches",
                parameters={"url": SchemaProp(type="string")},
                execute=noop,
                read_only=read_only,
                open_world=True,
            )
        )
        install_policy(reg)
        return reg

    editor = Editor("allow_always", "reject_once")
    session = scope(editor)
    before = fetcher(read_only=True)
    assert not (await run_call(before, session, "c1", "fetch", {})).is_error
    assert not (await run_call(before, session, "c2", "fetch", {})).is_error
    assert len(editor.asked) == 1
    # The same name, now declared to change things: the answer about the reader does not hold.
    assert (await run_call(fetcher(read_only=False), session, "c3", "fetch", {})).is_error
    assert len(editor.asked) == 2
    assert not (await run_call(before, session, "c4", "fetch", {})).is_error
    assert len(editor.asked) == 2
