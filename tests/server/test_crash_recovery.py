"""A sidecar killed with SIGKILL mid-turn loses nothing it committed; the session goes on."""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from tests.cards import tool_cards
from tests.server.wire import WireClient, spawned

pytestmark = pytest.mark.process  # SIGKILL of the process

ROOT = Path(__file__).resolve().parents[2]


def sidecar(
    store: Path,
) -> AbstractAsyncContextManager[tuple[WireClient, asyncio.subprocess.Process]]:
    """The sidecar with the test tools, keeping sessions in ``store``."""
    return spawned(
        "--store", str(store), "--tools", "tests.tooling:TOOLS", stderr=asyncio.subprocess.DEVNULL
    )


def updates_of(wire: WireClient) -> list[dict[str, Any]]:
    return list(wire.updates)


async def test_sigkill_mid_turn_then_load_replays_what_was_committed(tmp_path: Path) -> None:
    store = tmp_path / "sessions"
    cwd = str(tmp_path)
    async with sidecar(store) as (wire, process):
        await wire.initialize(_meta={"terminal_output": True})
        session = await wire.new_session(cwd)
        await wire.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
        await wire.next_response(
            await wire.start_prompt(session, '/note {"path": "a", "old": "x", "new": "y"}')
        )
        await wire.next_response(await wire.start_prompt(session, "/look README.md"))
        committed = tool_cards(updates_of(wire))
        await wire.start_prompt(
            session, '/stream {"command": "forever", "lines": 100000, "delay_ms": 5}'
        )
        while True:  # the long call is running and streaming
            update = (await wire.next_update())["params"]["update"]
            if "terminal_output" in update.get("_meta", {}):
                break
        process.kill()  # SIGKILL: no chance to flush or close anything
        await process.wait()

    async with sidecar(store) as (wire, process):
        await wire.initialize(_meta={"terminal_output": True})
        await wire.result("session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []})
        replayed = tool_cards(updates_of(wire))
        assert replayed[: len(committed)] == committed  # identical cards for what was committed
        interrupted = replayed[len(committed) :]
        assert interrupted[0]["title"] == "forever"
        assert interrupted[-1]["status"] == "failed"
        assert "interrupted" in interrupted[-1]["content"][0]["content"]["text"]
        *_replay, mode, info = (u["params"]["update"] for u in updates_of(wire))
        assert mode["currentModeId"] == "auto"
        assert info["sessionUpdate"] == "session_info_update"  # a load ends with it
        # The session continues, appending to the same log.
        wire.updates.clear()
        response = await wire.next_response(await wire.start_prompt(session, "/look after.md"))
        assert response["result"]["stopReason"] == "end_turn"
        assert tool_cards(updates_of(wire))[-1]["status"] == "completed"
        process.stdin.close()  # type: ignore[union-attr]
        assert await asyncio.wait_for(process.wait(), 5) == 0

    async with sidecar(store) as (wire, process):
        await wire.initialize()
        await wire.result("session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []})
        titles = [
            u["title"] for u in tool_cards(updates_of(wire)) if u["sessionUpdate"] == "tool_call"
        ]
        assert titles == ["Edit a", "Look at README.md", "forever", "Look at after.md"]
