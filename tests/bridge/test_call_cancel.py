"""One call cancelled alone (the core under v2's ``tool_call/cancel``): the call runs under
its own signal in the session's running calls, its cancel reaches the tool and not the turn,
and over v1 its card ends ``failed`` as any cancelled call's does (v1 has no ``cancelled``)."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_sidecar.bridge.policy import install_policy
from acp_sidecar.bridge.runner import run_call
from acp_sidecar.tools import SchemaProp, ToolExecution, ToolRegistry, define_tool
from tests.bridge.test_policy import scope
from tests.fakes import Editor

BOUND = 20.0
"""A hang guard only."""


def waiting_tool(started: asyncio.Event, signals: list[object]) -> ToolRegistry:
    async def wait(args: Any, execution: ToolExecution) -> str:
        assert execution.signal is not None
        signals.append(execution.signal)
        started.set()
        reason = await execution.signal.wait()
        return f"stopped: {reason}"

    registry = ToolRegistry()
    registry.register(
        define_tool(
            name="wait",
            description="waits for its cancel",
            parameters={"x": SchemaProp(type="string")},
            execute=wait,
            read_only=True,
        )
    )
    install_policy(registry)
    return registry


async def test_a_call_cancelled_alone_stops_and_the_turn_goes_on() -> None:
    editor = Editor()
    session = scope(editor, "auto")
    started, signals = asyncio.Event(), []
    registry = waiting_tool(started, signals)
    call = asyncio.ensure_future(run_call(registry, session, "c1", "wait", {}))
    await asyncio.wait_for(started.wait(), BOUND)
    assert "c1" in session.calls and signals[0] is not session.signal
    assert session.calls.cancel("c1", "tool_call/cancel")
    result = await asyncio.wait_for(call, BOUND)
    assert not result.is_error and "stopped: tool_call/cancel" in str(result.content)
    assert not session.signal.cancelled
    assert "c1" not in session.calls
    assert not session.calls.cancel("c1", "tool_call/cancel")


async def test_over_v1_a_call_cancelled_alone_shows_failed() -> None:
    editor = Editor()
    session = scope(editor, "auto")
    started = asyncio.Event()

    async def refuse(args: Any, execution: ToolExecution) -> str:
        started.set()
        assert execution.signal is not None
        await execution.signal.wait()
        execution.signal.raise_if_cancelled()
        return "never"

    registry = ToolRegistry()
    registry.register(
        define_tool(name="refuse", description="x", parameters={}, execute=refuse, read_only=True)
    )
    install_policy(registry)
    call = asyncio.ensure_future(run_call(registry, session, "c1", "refuse", {}))
    await asyncio.wait_for(started.wait(), BOUND)
    session.calls.cancel("c1", "tool_call/cancel")
    result = await asyncio.wait_for(call, BOUND)
    assert result.is_error and result.error is not None and result.error.code == "CANCELLED"
    statuses = [u.get("status") for u in editor.updates if u.get("toolCallId") == "c1"]
    assert statuses[-1] == "failed"
    assert "cancelled" not in statuses
