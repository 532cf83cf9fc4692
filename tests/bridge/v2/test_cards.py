"""The v2 card encoder, pure, on the cards ``bridge.cards`` draws from the tools' views: a
terminal is announced before the card that names it, its output is base64 of its UTF-8 (all of
it on replay, the rest live), its exit status comes before the card's last patch, no terminal
key is left in ``_meta``; a patch with nothing but terminal output sends no card update. Every
update is valid v2."""

from __future__ import annotations

import base64
from typing import Any

from acp_sidecar.bridge.cards import call_start, output_progress, result_update, status_update
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.v2.cards import card_opened, card_patched
from acp_sidecar.tools import TerminalCallView, TerminalResultView, ToolResult
from tests.acp_schema import validate_agent_message

CTX = CardContext(cwd="/work", terminal_output=True)
CALL = TerminalCallView(title="echo hé", command="echo hé", cwd="sub")
RESULT = TerminalResultView(output="hé\n", exit_code=0)


def valid(wires: tuple[dict[str, Any], ...]) -> tuple[dict[str, Any], ...]:
    for wire in wires:
        message = {"jsonrpc": "2.0", "method": "session/update"}
        validate_agent_message({**message, "params": {"sessionId": "s", "update": wire}}, version=2)
    return wires


def test_a_terminal_card_opens_with_its_terminal_first() -> None:
    terminal, card = valid(card_opened(call_start("c1", CALL, CTX, {"command": "echo hé"})))
    assert terminal == {
        "sessionUpdate": "terminal_update",
        "terminalId": card["content"][-1]["terminalId"],
        "cwd": "/work/sub",
    }
    assert card["sessionUpdate"] == "tool_call_update" and card["status"] == "pending"
    assert card["kind"] == "execute" and "_meta" not in card


def test_live_output_is_a_chunk_and_no_card_patch() -> None:
    (chunk,) = valid(card_patched(output_progress("c1", "hé\n")))
    assert chunk["sessionUpdate"] == "terminal_output_chunk"
    assert base64.b64decode(chunk["data"]).decode("utf-8") == "hé\n"


def test_the_result_sends_the_unstreamed_rest_then_the_exit_then_the_card() -> None:
    result = ToolResult(content=(), is_error=False)
    replayed = valid(card_patched(result_update("c1", CALL, RESULT, result, CTX)))
    assert [w["sessionUpdate"] for w in replayed] == [
        "terminal_output_chunk",
        "terminal_update",
        "tool_call_update",
    ]
    assert base64.b64decode(replayed[0]["data"]) == "hé\n".encode()
    assert replayed[1]["exitStatus"] == {"exitCode": 0}
    assert replayed[2]["status"] == "completed" and "_meta" not in replayed[2]
    live = valid(card_patched(result_update("c1", CALL, RESULT, result, CTX, streamed=3)))
    assert [w["sessionUpdate"] for w in live] == ["terminal_update", "tool_call_update"]


def test_a_status_move_is_that_field_alone() -> None:
    (moved,) = valid(card_patched(status_update("c1", "in_progress")))
    assert moved == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "in_progress",
    }
