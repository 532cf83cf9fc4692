"""MCP calls through a real registry with the session policy: results, progress, errors,
cancellation, permissions, and replay — every update checked against the ACP schema."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import attrs
import mcp.types as m
import pytest

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.policy import CallScope, SessionPolicy, install_policy
from acp_sidecar.bridge.replay import replay_updates
from acp_sidecar.bridge.runner import run_call
from acp_sidecar.mcp.callbacks import ProgressCallback
from acp_sidecar.mcp.errors import McpCallError, McpServerGone
from acp_sidecar.mcp.tools import mcp_tool_definitions
from acp_sidecar.protocol import SessionNotification, to_wire
from acp_sidecar.store import HeaderRecord, ToolCallRecord, ToolResultRecord
from acp_sidecar.store.codec import decode_line, encode_record
from acp_sidecar.tools import CancelSignal, ToolExecutionResult, ToolRegistry, cancel
from tests.acp_schema import validate_agent_message
from tests.cards import without_progress
from tests.fakes import Editor
from tests.mcp.fake_source import READ_LOCAL, READ_WORLD, FakeSource, tool


def session(
    source: FakeSource, mode: str = "auto", *answers: str | None
) -> tuple[ToolRegistry, CallScope, Editor]:
    registry = ToolRegistry()
    definitions, warnings = mcp_tool_definitions(source, taken=())
    assert warnings == ()
    for definition in definitions:
        registry.register(definition)
    install_policy(registry)
    editor = Editor(*answers)
    scope = CallScope(
        session_id="s",
        cards=CardContext("/w"),
        policy=SessionPolicy(mode=mode),  # type: ignore[arg-type]
        send=editor.send,
        asker=editor,
        signal=CancelSignal(),
    )
    return registry, scope, editor


async def test_a_call_reaches_the_server_and_its_result_draws_the_card() -> None:
    async def answer(tool: str, arguments: dict[str, Any], progress: Any) -> m.CallToolResult:
        return m.CallToolResult(
            content=[
                m.TextContent(text=f"it is noon in {arguments['q']}"),
                m.ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
                m.ResourceLink(name="tz", uri="https://example.com/tz"),
            ]
        )

    source = FakeSource("time", (tool("now", title="Now", annotations=READ_LOCAL),), answer)
    registry, scope, editor = session(source)
    result = await run_call(registry, scope, "c1", "mcp__time__now", {"q": "Paris"})
    assert [(c.tool, c.arguments) for c in source.calls] == [("now", {"q": "Paris"})]
    assert not result.is_error
    start, running, final = editor.cards("c1")
    assert (start["title"], start["kind"], start["rawInput"]) == (
        "Now: Paris",
        "read",
        {"q": "Paris"},
    )
    assert running["status"] == "in_progress"
    assert final["status"] == "completed"
    assert [c["content"]["type"] for c in final["content"]] == ["text", "image", "resource_link"]
    assert final["content"][0]["content"]["text"] == "it is noon in Paris"


async def test_structured_content_alone_is_shown_as_json() -> None:
    async def answer(tool: str, arguments: dict[str, Any], progress: Any) -> m.CallToolResult:
        return m.CallToolResult(content=[], structured_content={"ok": True})

    registry, scope, editor = session(FakeSource("s", (tool("t"),), answer))
    result = await run_call(registry, scope, "c1", "mcp__s__t", {})
    assert result.content[0].text == '{\n  "ok": true\n}'  # type: ignore[union-attr]
    assert editor.cards("c1")[-1]["content"][0]["content"]["text"] == '{\n  "ok": true\n}'


async def test_progress_streams_on_the_card_while_the_call_runs() -> None:
    async def slow(
        tool: str, arguments: dict[str, Any], progress: ProgressCallback | None
    ) -> m.CallToolResult:
        assert progress is not None
        await progress(3, 10, "copying")
        await asyncio.sleep(0.2)  # past the emitter's interval: the progress goes out alone
        return m.CallToolResult(content=[m.TextContent(text="done")])

    registry, scope, editor = session(FakeSource("s", (tool("copy"),), slow))
    await run_call(registry, scope, "c1", "mcp__s__copy", {})
    texts = [
        c["content"]["text"]
        for u in editor.cards("c1")
        if u.get("status") is None
        for c in u.get("content", [])
    ]
    assert "3/10 — copying" in texts
    assert editor.cards("c1")[-1]["status"] == "completed"


async def test_an_is_error_result_fails_the_card_with_its_text() -> None:
    async def refuse(tool: str, arguments: dict[str, Any], progress: Any) -> m.CallToolResult:
        return m.CallToolResult(
            content=[m.TextContent(text="no such timezone: Mars")], is_error=True
        )

    registry, scope, editor = session(FakeSource("time", (tool("now"),), refuse))
    result = await run_call(registry, scope, "c1", "mcp__time__now", {"q": "Mars"})
    assert result.is_error and result.error is not None
    assert (result.error.name, result.error.code) == ("McpToolError", "MCP_TOOL_ERROR")
    assert result.content[0].text == "no such timezone: Mars"  # type: ignore[union-attr]
    final = editor.cards("c1")[-1]
    assert final["status"] == "failed"
    assert final["content"][0]["content"]["text"] == "no such timezone: Mars"


@pytest.mark.parametrize(
    ("error", "code", "text"),
    [
        (
            McpServerGone("MCP server 'time' stopped during the call"),
            "MCP_SERVER_GONE",
            "MCP server 'time' stopped during the call. Its tools cannot be called until it is "
            "started again.",
        ),
        (
            McpServerGone("the process exited"),
            "MCP_SERVER_GONE",
            "MCP server 'time': the process exited. Its tools cannot be called until it is "
            "started again.",
        ),
        (
            McpCallError("MCP server 'time' answered an error: Unknown tool: now (code -32602)"),
            "MCP_CALL_FAILED",
            "MCP server 'time' answered an error: Unknown tool: now (code -32602).",
        ),
    ],
)
async def test_a_gone_server_or_a_protocol_error_is_a_clear_error_result(
    error: Exception, code: str, text: str
) -> None:
    async def fail(tool: str, arguments: dict[str, Any], progress: Any) -> m.CallToolResult:
        raise error

    registry, scope, editor = session(FakeSource("time", (tool("now"),), fail))
    result = await run_call(registry, scope, "c1", "mcp__time__now", {})
    assert result.error is not None and result.error.code == code
    assert result.content[0].text == text  # type: ignore[union-attr]
    assert editor.cards("c1")[-1]["status"] == "failed"


async def test_arguments_that_are_not_an_object_never_reach_the_server() -> None:
    source = FakeSource("s", (tool("t", schema={"type": "object"}),))
    registry, scope, editor = session(source)
    result = await run_call(registry, scope, "c1", "mcp__s__t", [1, 2])
    assert result.error is not None and result.error.code == "INVALID_ARGS"
    assert "expected a JSON object, got list" in result.content[0].text  # type: ignore[union-attr]
    assert source.calls == []


async def test_cancel_cancels_the_request_at_once_and_the_card_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Not the pipeline's grace period: made an hour, it would trip the hang guard below.
    monkeypatch.setattr(cancel, "CANCEL_GRACE_S", 3600.0)
    never = asyncio.Event()

    async def hang(tool: str, arguments: dict[str, Any], progress: Any) -> m.CallToolResult:
        await never.wait()
        raise AssertionError("not reached")

    source = FakeSource("s", (tool("sleep"),), hang)
    registry, scope, editor = session(source)
    running = asyncio.create_task(run_call(registry, scope, "c1", "mcp__s__sleep", {}))
    await asyncio.wait_for(source.started.wait(), 30)  # a hang guard
    scope.signal.cancel("the user cancelled the turn")
    result = await asyncio.wait_for(running, 60)  # a hang guard
    (call,) = source.calls
    assert call.cancelled  # the SDK's call task was cancelled: it sends notifications/cancelled
    assert result.error is not None and result.error.code == "CANCELLED"
    assert "the user cancelled the turn" in result.content[0].text  # type: ignore[union-attr]
    assert editor.cards("c1")[-1]["status"] == "failed"


async def test_a_timeout_cancels_the_request_too() -> None:
    async def hang(tool: str, arguments: dict[str, Any], progress: Any) -> m.CallToolResult:
        await asyncio.Event().wait()
        raise AssertionError("not reached")

    source = FakeSource("s", (tool("sleep"),), hang)
    registry = ToolRegistry()
    (definition,), _ = mcp_tool_definitions(source, taken=())
    registry.register(attrs.evolve(definition, timeout_ms=50))
    install_policy(registry)
    editor = Editor()
    scope = CallScope(
        session_id="s",
        cards=CardContext("/w"),
        policy=SessionPolicy(mode="auto"),
        send=editor.send,
        asker=editor,
        signal=CancelSignal(),
    )
    result = await asyncio.wait_for(run_call(registry, scope, "c1", "mcp__s__sleep", {}), 30)
    assert result.error is not None and result.error.code == "TIMEOUT"
    assert source.calls[0].cancelled
    assert not scope.signal.cancelled  # a timeout never cancels the turn


@pytest.mark.parametrize(
    ("annotations", "mode", "asked", "allowed"),
    [
        (READ_LOCAL, "ask", False, True),
        (READ_WORLD, "ask", True, True),
        (None, "ask", True, True),
        (READ_LOCAL, "read-only", False, True),
        (READ_WORLD, "read-only", False, True),
        (None, "read-only", False, False),
        (m.ToolAnnotations(read_only_hint=False, open_world_hint=False), "read-only", False, False),
        (None, "auto", False, True),
    ],
)
async def test_the_session_mode_follows_the_declared_risk(
    annotations: m.ToolAnnotations | None, mode: str, asked: bool, allowed: bool
) -> None:
    source = FakeSource("s", (tool("t", annotations=annotations),))
    registry, scope, editor = session(source, mode, "allow_once")
    result = await run_call(registry, scope, "c1", "mcp__s__t", {"q": "x"})
    assert bool(editor.asked) is asked
    assert result.is_error is not allowed
    assert bool(source.calls) is allowed
    if asked:
        assert editor.asked[0].tool_call.title == "t: x"


def wire(update: Any) -> dict[str, Any]:
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": to_wire(SessionNotification(session_id="s", update=update)),
    }
    validate_agent_message(message)
    return message["params"]["update"]  # type: ignore[no-any-return]


async def stored_call(
    answer: m.CallToolResult, annotations: m.ToolAnnotations | None = READ_LOCAL
) -> tuple[ToolRegistry, list[dict[str, Any]], list[Any]]:
    """One MCP call run live; its cards, and its records as the log gives them back."""

    async def reply(tool: str, arguments: dict[str, Any], progress: Any) -> m.CallToolResult:
        return answer

    source = FakeSource(
        "docs", (tool("search", title="Search docs", annotations=annotations),), reply
    )
    registry, scope, editor = session(source)
    stored: list[tuple[ToolCallRecord, ToolExecutionResult | None]] = []

    async def record(event: ToolCallRecord, result: ToolExecutionResult | None) -> None:
        stored.append((event, result))

    await run_call(registry, scope, "c1", "mcp__docs__search", {"q": "cards"}, record=record)
    (event, _), (_, result) = stored
    assert result is not None
    records = [
        decode_line(encode_record(event)),
        decode_line(encode_record(ToolResultRecord(result=result))),
    ]
    return registry, editor.cards("c1"), records


def replayed(registry_get: Any, records: list[Any]) -> list[dict[str, Any]]:
    header = HeaderRecord(session_id="s", cwd="/w", created_at=datetime.now(UTC), mode="auto")
    return [
        wire(u)
        for u in replay_updates(header, records, registry_get, CardContext("/w"))
        if u.session_update in ("tool_call", "tool_call_update")
    ]


ANSWERS = [
    m.CallToolResult(
        content=[
            m.TextContent(text="found 2"),
            m.AudioContent(data="UklGRg==", mime_type="audio/wav"),
            m.EmbeddedResource(resource=m.TextResourceContents(uri="file:///w/a.md", text="# A")),
            m.EmbeddedResource(resource=m.BlobResourceContents(uri="mem://b", blob="AAEC")),
        ]
    ),
    m.CallToolResult(content=[m.TextContent(text="index missing")], is_error=True),
]


@pytest.mark.parametrize("answer", ANSWERS)
async def test_a_stored_call_replays_as_it_was_drawn_live(answer: m.CallToolResult) -> None:
    registry, live, records = await stored_call(answer)
    assert without_progress([u for u in live if u.get("status") != "in_progress"]) == replayed(
        registry.get, records
    )


@pytest.mark.parametrize("answer", ANSWERS)
async def test_a_call_whose_server_is_gone_replays_titled_as_the_editor_showed_it(
    answer: m.CallToolResult,
) -> None:
    """``replay`` and the exports start no MCP server, and a load may name none: the card's
    title and kind, kept with the call, still draw it as the editor did."""
    _registry, live, records = await stored_call(answer)
    start, final = replayed(lambda name: None, records)
    assert (start["title"], start["kind"]) == (live[0]["title"], live[0]["kind"])
    assert (start["title"], start["kind"]) == ("Search docs: cards", "read")
    assert (start["status"], start["rawInput"]) == ("pending", {"q": "cards"})
    assert final == live[-1]  # the result content and status are the stored ones


async def test_a_call_stored_before_titles_were_kept_replays_by_its_name() -> None:
    records = [
        decode_line(encode_record(ToolCallRecord("c1", "mcp__docs__search", {"q": "cards"}))),
    ]
    (start, _interrupted) = replayed(lambda name: None, records)
    assert (start["title"], start["kind"]) == ("mcp__docs__search", "other")
