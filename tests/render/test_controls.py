"""Nothing a transcript holds reaches the terminal as a control sequence: every string drawn
has its C0/C1 controls replaced (ANSI colours of a terminal card are decoded into styles
first, and its links dropped)."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from rich.console import Console

from acp_sidecar.render import render_transcript
from acp_sidecar.text import harmless

CLIPBOARD = "\x1b]52;c;SGVsbG8=\x07"
TITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J"
LINK = "\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\"
C1_CSI = "\x9b2J"
HOSTILE = f"a{CLIPBOARD}b{TITLE}c{CLEAR}d{LINK}e{C1_CSI}f\x07g\x08h\x00i\x7fj"

_ESCAPE_BYTES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _u(update: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": "s1", "update": update}


def _chunk(kind: str, text: str) -> dict[str, Any]:
    return _u({"sessionUpdate": kind, "content": {"type": "text", "text": text}})


def _card(call_id: str, **fields: Any) -> dict[str, Any]:
    return _u({"sessionUpdate": "tool_call", "toolCallId": call_id, **fields})


def _text_item(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def hostile_stream() -> list[dict[str, Any]]:
    """The hostile text in every place a transcript draws a string."""
    return [
        _chunk("user_message_chunk", HOSTILE),
        _chunk("agent_thought_chunk", HOSTILE),
        _chunk("agent_message_chunk", HOSTILE + "\n\n**bold** " + HOSTILE),
        _card(
            "read",
            title="Read " + HOSTILE,
            kind="read",
            status="completed",
            content=[_text_item(HOSTILE), _text_item("```\n" + HOSTILE + "\n```")],
            locations=[{"path": "/w/" + HOSTILE}],
        ),
        _card("raw", title=HOSTILE, status="completed", rawInput={"q": HOSTILE}),
        _card(
            "diff",
            title="Edit",
            kind="edit",
            status="completed",
            content=[
                {"type": "diff", "path": "/w/" + HOSTILE, "oldText": "x\n", "newText": HOSTILE}
            ],
        ),
        _card(
            "term",
            title="cat " + HOSTILE,
            kind="execute",
            status="in_progress",
            content=[{"type": "terminal", "terminalId": "t1"}],
            _meta={"terminal_info": {"terminal_id": "t1", "cwd": "/w/" + HOSTILE}},
        ),
        _u(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "term",
                "status": "completed",
                "_meta": {
                    "terminal_output": {
                        "terminal_id": "t1",
                        "data": "\x1b[32mok\x1b[0m " + HOSTILE,
                    },
                    "terminal_exit": {"terminal_id": "t1", "signal": "SIG" + HOSTILE},
                },
            }
        ),
        _u({"sessionUpdate": "plan", "entries": [{"content": HOSTILE, "status": "pending"}]}),
        _u(
            {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": HOSTILE}]}
        ),
        _u({"sessionUpdate": "current_mode_update", "currentModeId": HOSTILE}),
        _chunk("agent_message_chunk", "the end"),
        _u(
            {
                "sessionUpdate": "user_message_chunk",
                "content": {"type": "resource_link", "name": HOSTILE, "uri": "file:///" + HOSTILE},
            }
        ),
    ]


@pytest.mark.parametrize("color", [True, False], ids=["terminal", "plain"])
def test_no_control_sequence_from_the_transcript_reaches_the_terminal(color: bool) -> None:
    out = io.StringIO()
    console = Console(
        file=out, width=100, force_terminal=color, color_system="truecolor" if color else None
    )
    render_transcript(hostile_stream(), console, cwd="/w")
    drawn = out.getvalue()
    # What is left once rich's own styling (SGR) is taken out holds no control at all.
    plain = re.sub(r"\x1b\[[0-9;]*m", "", drawn)
    assert _ESCAPE_BYTES.findall(plain) == []
    # The text itself is still there, its controls shown as pictures.
    assert "␛]52;c;SGVsbG8=" in plain and "the end" in plain


def test_a_terminal_cards_colours_survive_as_styles() -> None:
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=True, color_system="truecolor")
    render_transcript(hostile_stream(), console, cwd="/w")
    assert "\x1b[32mok" in out.getvalue()


def test_harmless_keeps_tabs_and_line_ends_and_pictures_the_rest() -> None:
    assert harmless("a\tb\nc\r\nd") == "a\tb\nc\r\nd"
    assert harmless("\x1b[2J\x07\x00\x7f") == "␛[2J␇␀␡"
    assert harmless("\x9b2J\x85") == "\ufffd2J\ufffd"
    same = "no controls here"
    assert harmless(same) is same


def test_the_sessions_table_shows_titles_and_paths_inert() -> None:
    from datetime import UTC, datetime
    from pathlib import Path

    from acp_sidecar.render.sessions import sessions_table
    from acp_sidecar.store import SessionSummary

    summary = SessionSummary(
        session_id="s1",
        cwd="/w/" + HOSTILE,
        title="[link=https://evil.example/]click[/link] " + HOSTILE,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        updated_at=datetime(2026, 1, 1, tzinfo=UTC),
        mode="ask",
        path=Path("/store/s1.jsonl"),
    )
    out = io.StringIO()
    Console(file=out, width=300, force_terminal=True, color_system="truecolor").print(
        sessions_table([summary])
    )
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out.getvalue())
    assert _ESCAPE_BYTES.findall(plain) == []
    assert "[link=https://evil.example/]click[/link]" in plain  # text, not rich markup
