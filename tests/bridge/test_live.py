"""The live emitter: coalesced, rate-bounded, lossless, memory-bounded, ordered before results."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.live import LiveCall
from acp_sidecar.tools import GenericCallView, TerminalCallView
from tests.fakes import Editor

TERMINAL = TerminalCallView(card="terminal", title="cat big", description="dump")
GENERIC = GenericCallView(card="generic", title="search")


def terminal_data(updates: list[dict[str, Any]]) -> str:
    return "".join(
        u["_meta"]["terminal_output"]["data"]
        for u in updates
        if "terminal_output" in u.get("_meta", {})
    )


async def test_every_byte_arrives_once_in_order_at_a_bounded_rate() -> None:
    client = Editor()
    live = LiveCall(
        "c", TERMINAL, CardContext("/w", terminal_output=True), client.send, interval=0.02
    )
    written = []
    for index in range(500):
        chunk = f"line {index}\n"
        written.append(chunk)
        await live.output(chunk)
        if index % 50 == 0:
            await asyncio.sleep(0.005)
    streamed = await live.close()
    assert terminal_data(client.updates) == "".join(written)
    assert streamed == len("".join(written))
    assert len(client.updates) < 30  # 500 writes coalesced
    gaps = [b - a for a, b in zip(client.times, client.times[1:], strict=False)][
        :-1
    ]  # close() flushes at once
    assert all(gap >= 0.015 for gap in gaps), gaps


async def test_a_fast_writer_is_held_back_with_memory_bounded() -> None:
    client = Editor()
    live = LiveCall(
        "c",
        TERMINAL,
        CardContext("/w", terminal_output=True),
        client.send,
        interval=0.01,
        max_pending=1000,
    )
    for _ in range(100):
        await live.output("x" * 100)
        assert live._pending < 1000  # never holds more than the bound
    await live.close()
    assert terminal_data(client.updates) == "x" * 10_000


async def test_text_progress_coalesces_to_the_latest_message() -> None:
    client = Editor()
    live = LiveCall("c", GENERIC, CardContext("/w"), client.send, interval=0.05)
    await live.text("1 of 3")  # first goes out at once
    await live.text("2 of 3")
    await live.text("3 of 3")
    await live.close()
    texts = [u["content"][0]["content"]["text"] for u in client.updates]
    assert texts == ["1 of 3", "3 of 3"]


async def test_plain_clients_get_a_bounded_console_snapshot() -> None:
    client = Editor()
    live = LiveCall(
        "c",
        TERMINAL,
        CardContext("/w", terminal_output=False),
        client.send,
        interval=0.01,
        snapshot_chars=100,
    )
    await live.text("halfway")
    for _ in range(50):
        await live.output("y" * 10)
    await live.close()
    last = client.updates[-1]["content"]
    assert last[0]["content"]["text"] == "dump"
    console = last[-1]["content"]["text"]
    assert console.startswith("```console\n… 400 earlier characters not shown\n")
    assert console.count("y") == 100
    assert all("terminal_output" not in u.get("_meta", {}) for u in client.updates)


async def test_the_timer_flushes_without_further_writes_and_close_stops_everything() -> None:
    client = Editor()
    live = LiveCall(
        "c", TERMINAL, CardContext("/w", terminal_output=True), client.send, interval=0.03
    )
    await live.output("a")
    await live.output("b")  # held for the timer
    await asyncio.sleep(0.08)
    assert terminal_data(client.updates) == "ab"
    await live.close()
    sent = len(client.updates)
    await live.output("late")
    await asyncio.sleep(0.05)
    assert len(client.updates) == sent


async def test_a_late_timer_does_not_send_right_after_a_direct_flush() -> None:
    """The timer fired, but its flush task ran only after a write had flushed directly (a busy
    loop runs both late): that task waits for its own slot instead of sending at once."""
    client = Editor()
    live = LiveCall(
        "c", TERMINAL, CardContext("/w", terminal_output=True), client.send, interval=0.05
    )
    await live.output("a\n")  # the first write goes out at once
    await live.output("b\n")  # within the interval: a timer is set
    time.sleep(0.06)  # the loop is busy past the timer's time...
    live._on_timer()  # ...and runs its callback: a flush task is scheduled, not yet run
    await live.output("c\n")  # this write finds the slot free and flushes b and c itself
    await live.output("d\n")  # while the scheduled flush is still to run
    await asyncio.sleep(0)  # the scheduled flush runs now
    await asyncio.sleep(0)
    sent = len(client.updates)
    await asyncio.sleep(0.08)  # d goes out in its own slot
    assert terminal_data(client.updates) == "a\nb\nc\nd\n"
    gaps = [b - a for a, b in zip(client.times, client.times[1:], strict=False)]
    assert sent == 2 and all(gap >= 0.04 for gap in gaps[1:]), (sent, gaps)
    await live.close()
