"""The cancellation signal: one-way, callbacks exactly once, awaitable, children."""

from __future__ import annotations

import asyncio
import threading

import pytest

from acp_sidecar.tools import CancelSignal, ToolCancelledError


def test_cancel_is_one_way_and_the_first_reason_wins() -> None:
    signal = CancelSignal()
    assert not signal.cancelled and signal.reason is None
    signal.raise_if_cancelled()
    signal.cancel("first")
    signal.cancel("second")
    assert signal.cancelled and signal.reason == "first"
    with pytest.raises(ToolCancelledError, match="cancelled: first"):
        signal.raise_if_cancelled()


def test_callbacks_run_exactly_once_even_when_one_raises() -> None:
    signal = CancelSignal()
    seen: list[str] = []

    def broken(reason: str) -> None:
        raise RuntimeError("bad callback")

    signal.add_callback(broken)
    signal.add_callback(seen.append)
    removed = signal.add_callback(seen.append)
    removed()
    signal.cancel("go")
    signal.cancel("again")
    signal.add_callback(seen.append)  # late: runs at once
    assert seen == ["go", "go"]


async def test_wait_wakes_on_cancel_from_the_loop_and_from_another_thread() -> None:
    signal = CancelSignal()
    asyncio.get_running_loop().call_later(0.01, signal.cancel, "loop")
    assert await asyncio.wait_for(signal.wait(), 2) == "loop"
    other = CancelSignal()
    threading.Timer(0.01, other.cancel, args=("thread",)).start()
    assert await asyncio.wait_for(other.wait(), 2) == "thread"
    assert await other.wait() == "thread"


def test_a_child_follows_its_parent_but_not_the_other_way() -> None:
    parent = CancelSignal()
    child = parent.child()
    child.cancel("child only")
    assert not parent.cancelled
    second = parent.child()
    parent.cancel("turn")
    assert second.reason == "turn"
