"""Permissions come from what a tool declares, never from how its card is drawn.

A user's own tool with no presenter (so a generic ``other`` card) that deletes files once ran
without asking in ``ask`` mode and was allowed in ``read-only`` mode. Driven as a user would
meet it: the sidecar loading the tool with ``--tools`` (in process), over the wire.
"""

from __future__ import annotations

from pathlib import Path

from tests.in_process import serving
from tests.server.wire import WireClient


async def open_session(wire: WireClient, cwd: Path, mode: str) -> str:
    await wire.initialize()
    session = await wire.new_session(str(cwd))
    await wire.next_update()  # available_commands_update
    if mode != "ask":
        await wire.result("session/set_mode", {"sessionId": session, "modeId": mode})
    return session


async def erase(wire: WireClient, session: str, answer: str | None) -> tuple[int, dict]:  # type: ignore[type-arg]
    """Prompt ``/erase victim.txt``; answer any permission request with ``answer``."""
    msg_id = await wire.start_prompt(session, "/erase victim.txt")
    asked = 0
    while True:
        message = await wire.receive()
        if message.get("method") == "session/update":
            wire.updates.append(message)
        elif message.get("method") == "session/request_permission":
            asked += 1
            assert answer is not None, "asked in a mode that must not ask"
            card = message["params"]["toolCall"]
            assert card["title"] == "erase" and card["rawInput"] == {"path": "victim.txt"}
            outcome = {"outcome": "selected", "optionId": answer}
            await wire.respond(message["id"], {"outcome": outcome})
        elif message.get("id") == msg_id:
            break
        else:
            raise AssertionError(message)
    info, final = (u["params"]["update"] for u in wire.updates[-1:-3:-1])
    assert info["sessionUpdate"] == "session_info_update"  # every turn ends with one
    return asked, final


async def test_an_undeclared_tool_without_a_card_is_asked_for_in_ask_mode(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    async with serving("--tools", "tests.tooling:ERASING") as (wire, _server):
        session = await open_session(wire, tmp_path, "ask")
        asked, final = await erase(wire, session, "reject_once")
        assert asked == 1
        assert final["status"] == "failed"
        assert victim.read_text() == "keep me\n"
        asked, final = await erase(wire, session, "allow_once")
        assert asked == 1
        assert final["status"] == "completed"
        assert not victim.exists()


async def test_an_undeclared_tool_is_refused_in_read_only_mode(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    async with serving("--tools", "tests.tooling:ERASING") as (wire, _server):
        session = await open_session(wire, tmp_path, "read-only")
        asked, final = await erase(wire, session, None)
        assert asked == 0
        assert final["status"] == "failed"
        text = final["content"][0]["content"]["text"]
        assert "read-only mode, which refuses erase" in text
        assert victim.read_text() == "keep me\n"


async def test_auto_mode_runs_it_without_asking(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("x")
    async with serving("--tools", "tests.tooling:ERASING") as (wire, _server):
        session = await open_session(wire, tmp_path, "auto")
        asked, final = await erase(wire, session, None)
        assert (asked, final["status"]) == (0, "completed")
        assert not victim.exists()
