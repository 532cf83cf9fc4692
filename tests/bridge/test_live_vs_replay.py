"""Live and replay draw the same cards from the same events (transient progress aside)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.policy import CallScope, SessionPolicy, install_policy
from acp_sidecar.bridge.replay import replay_updates
from acp_sidecar.bridge.runner import run_call
from acp_sidecar.protocol import SessionNotification, to_wire
from acp_sidecar.store import HeaderRecord, ToolCallRecord, ToolResultRecord
from acp_sidecar.tools import CancelSignal, ToolExecutionResult, ToolRegistry
from tests.cards import without_progress
from tests.fakes import NoClient
from tests.tooling import TOOLS


def wire(update: Any) -> dict[str, Any]:
    return to_wire(SessionNotification(session_id="s", update=update))["update"]  # type: ignore[no-any-return]


CALLS = [
    ("note", {"path": "src/a.py", "old": "x = 1\n", "new": "x = 2\n"}),
    ("note", {"path": "new.txt", "new": "fresh\n"}),
    ("stream", {"command": "make test", "lines": 30, "delay_ms": 1}),
    ("stream", {"command": "false", "lines": 1, "exit_code": 1}),
    ("look", {"path": "README.md"}),
    ("look", {"path": 42}),  # invalid arguments: a failed card
    ("fragile", {}),
    ("missing_tool", {"x": 1}),
]


@pytest.mark.parametrize("terminal_output", [True, False])
@pytest.mark.parametrize(("name", "arguments"), CALLS)
async def test_live_equals_replay(
    name: str, arguments: dict[str, Any], terminal_output: bool
) -> None:
    registry = ToolRegistry()
    for tool in TOOLS:
        registry.register(tool)
    install_policy(registry)
    ctx = CardContext(cwd="/work", terminal_output=terminal_output)
    live: list[dict[str, Any]] = []
    stored: list[tuple[ToolCallRecord, ToolExecutionResult | None]] = []

    async def send(update: Any) -> None:
        live.append(wire(update))

    async def record(event: ToolCallRecord, result: ToolExecutionResult | None) -> None:
        stored.append((event, result))

    scope = CallScope(
        session_id="s",
        cards=ctx,
        policy=SessionPolicy(mode="auto"),
        send=send,
        asker=NoClient(),
        signal=CancelSignal(),
    )
    await run_call(registry, scope, "call-1", name, arguments, record=record)
    (event, none), (same_event, result) = stored
    assert none is None and same_event == event and result is not None

    header = HeaderRecord(session_id="s", cwd=ctx.cwd, created_at=datetime.now(UTC), mode="auto")
    records = [
        ToolCallRecord(call_id=event.call_id, name=event.name, arguments=event.arguments),
        ToolResultRecord(result=result),
    ]
    replayed = [
        wire(u)
        for u in replay_updates(header, records, registry.get, ctx)
        if u.session_update in ("tool_call", "tool_call_update")
    ]
    assert without_progress(live) == replayed
    if name == "stream" and terminal_output:
        assert len(live) > 3  # there was live progress to fold
