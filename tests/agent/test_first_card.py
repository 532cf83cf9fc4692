"""The first card of a ``write`` or ``edit`` is already the right one: the whole-file diff
against the file as it is, never ``oldText: null`` for a file that exists nor the bare
fragment of an edit — in ``ask`` mode, after an "always" answer (no dialog redraws it) and in
``auto`` mode.

In process, with the built-in tools and the slash-command console, over the raw wire (every
message checked against the ACP schema); the client answers the permission dialog itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from tests.server.wire import WireClient, served

LINES = "".join(f"line {n}\n" for n in range(1, 21))
CONTEXT = "".join(f"line {n}\n" for n in range(7, 14))


def _server() -> AcpServer:
    return AcpServer(tools=ToolsProvider(entry_points=False), cancel_grace=0.3)


def _command(tool: str, **arguments: Any) -> str:
    return f"/{tool} {json.dumps(arguments)}"


async def _run(wire: WireClient, session: str, text: str, answer: str | None) -> None:
    """One prompt; the permission dialog, if one opens, answered with ``answer``."""
    turn = await wire.start_prompt(session, text)
    while True:
        message = await wire.receive()
        if message.get("method") == "session/update":
            wire.updates.append(message)
        elif message.get("method") == "session/request_permission":
            assert answer is not None, "asked in a mode that should not ask"
            outcome = {"outcome": {"outcome": "selected", "optionId": answer}}
            await wire.respond(message["id"], outcome)
        elif message.get("id") == turn:
            assert message["result"] == {"stopReason": "end_turn"}, message
            return
        else:
            raise AssertionError(f"unexpected {message}")


def _cards(wire: WireClient) -> list[dict[str, Any]]:
    """The tool_call and tool_call_updates received so far, then forgotten."""
    cards = [
        u["params"]["update"]
        for u in wire.updates
        if u["params"]["update"]["sessionUpdate"] in ("tool_call", "tool_call_update")
    ]
    wire.updates.clear()
    return cards


def _diffs(card: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in card.get("content") or () if item["type"] == "diff"]


async def test_overwriting_a_file_opens_with_its_real_old_content(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("first\nsecond\n")
    async with served(_server()) as (wire, _):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        wire.updates.clear()
        await _run(
            wire, session, _command("write", path="notes.txt", content="new\n"), "allow_once"
        )
        start, *_rest, final = _cards(wire)
        whole = {
            "type": "diff",
            "path": str(target),
            "oldText": "first\nsecond\n",
            "newText": "new\n",
        }
        assert start["sessionUpdate"] == "tool_call" and start["content"] == [whole]
        assert final["status"] == "completed" and final["content"] == [whole]
        assert target.read_text() == "new\n"


async def test_every_card_of_an_edit_holds_whole_lines_even_after_always_allow(
    tmp_path: Path,
) -> None:
    target = tmp_path / "lines.txt"
    target.write_text(LINES)
    whole = {
        "type": "diff",
        "path": str(target),
        "oldText": CONTEXT,
        "newText": CONTEXT.replace("line 10", "liNE TEN"),
    }
    async with served(_server()) as (wire, _):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        wire.updates.clear()
        edit = _command("edit", path="lines.txt", old_string="ne 10", new_string="NE TEN")
        await _run(wire, session, edit, "allow_always")
        cards = _cards(wire)
        assert cards[0]["sessionUpdate"] == "tool_call" and _diffs(cards[0]) == [whole]
        assert all(_diffs(card) in ([], [whole]) for card in cards), cards  # no fragment

        # Remembered: no dialog, nothing redraws the card, so the first one must be right.
        again = _command("edit", path="lines.txt", old_string="ne 11", new_string="NE ELEVEN")
        await _run(wire, session, again, None)
        cards = _cards(wire)
        eleven = CONTEXT.replace("line 10", "liNE TEN").replace("line 7\n", "") + "line 14\n"
        assert [d["oldText"] for d in _diffs(cards[0])] == [eleven]
        assert all(d["oldText"] != "ne 11" for card in cards for d in _diffs(card)), (
            cards
        )  # the bare fragment never shows


async def test_in_auto_mode_the_first_card_is_the_whole_file_diff_too(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("old\n")
    async with served(_server()) as (wire, _):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        await wire.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
        wire.updates.clear()
        await _run(wire, session, _command("write", path="notes.txt", content="new\n"), None)
        start = _cards(wire)[0]
        assert [(d["oldText"], d["newText"]) for d in _diffs(start)] == [("old\n", "new\n")]


async def test_a_call_that_will_fail_opens_with_its_pending_card(tmp_path: Path) -> None:
    (tmp_path / "lines.txt").write_text("alpha\n")
    async with served(_server()) as (wire, _):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        wire.updates.clear()
        edit = _command("edit", path="lines.txt", old_string="gamma", new_string="x")
        await _run(wire, session, edit, None)  # it fails before anyone is asked
        start, *_rest, final = _cards(wire)
        assert _diffs(start) == [
            {
                "type": "diff",
                "path": str(tmp_path / "lines.txt"),
                "oldText": "gamma",
                "newText": "x",
            }
        ]
        assert final["status"] == "failed"
