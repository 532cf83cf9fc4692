"""The terminal transcript: messages, diff / terminal / generic cards, odd input, streaming."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from acp_sidecar.render import TranscriptRenderer, render_transcript

GOLDEN = Path(__file__).resolve().parents[1] / "bridge" / "golden"
CWD = "/work/project"


def _console(*, color: bool = False) -> Console:
    return Console(
        file=io.StringIO(),
        width=80,
        color_system="truecolor" if color else None,
        force_terminal=color,
        legacy_windows=False,
    )


def _text(console: Console) -> str:
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return "\n".join(line.rstrip() for line in out.splitlines())


def _render(updates: list[dict[str, Any]], *, color: bool = False) -> str:
    console = _console(color=color)
    render_transcript(updates, console, cwd=CWD)
    return _text(console)


def _u(update: dict[str, Any]) -> dict[str, Any]:
    return {"sessionId": "s1", "update": update}


def _chunk(kind: str, text: str, **extra: Any) -> dict[str, Any]:
    return _u({"sessionUpdate": kind, "content": {"type": "text", "text": text}, **extra})


def _golden(name: str, call_id: str = "call-1") -> list[dict[str, Any]]:
    updates = json.loads((GOLDEN / f"{name}.json").read_text())
    return [_u({**u, "toolCallId": call_id}) for u in updates]


def test_messages_coalesce_and_keep_their_order() -> None:
    out = _render(
        [
            _chunk("user_message_chunk", "Fix the "),
            _chunk("user_message_chunk", "tests"),
            _chunk("agent_thought_chunk", "Looking at "),
            _chunk("agent_thought_chunk", "the failures"),
            _chunk("agent_message_chunk", "I'll **run** "),
            _chunk("agent_message_chunk", "them."),
            _chunk("agent_message_chunk", "Second message.", messageId="m2"),
            _chunk("agent_message_chunk", " Still second.", messageId="m2"),
            _chunk("agent_message_chunk", "Third.", messageId="m3"),
        ]
    )
    assert out == (
        "❯ Fix the tests\n"
        "\n"
        "  Looking at the failures\n"
        "\n"
        "I'll run them.\n"
        "\n"
        "Second message. Still second.\n"
        "\n"
        "Third."
    )


def test_thoughts_are_dimmed() -> None:
    out = _render([_chunk("agent_thought_chunk", "pondering")], color=True)
    assert "\x1b[2;3mpondering" in out


def test_a_diff_card_shows_a_coloured_unified_diff() -> None:
    old = "a = 1\nb = 2\nc = 3\n"
    new = "a = 1\nb = 20\nc = 3\n"
    updates = [
        _u(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "e1",
                "title": "Edit src/app.py",
                "kind": "edit",
                "status": "pending",
                "content": [
                    {"type": "diff", "path": f"{CWD}/src/app.py", "oldText": old, "newText": new}
                ],
            }
        ),
        _u({"sessionUpdate": "tool_call_update", "toolCallId": "e1", "status": "in_progress"}),
        _u({"sessionUpdate": "tool_call_update", "toolCallId": "e1", "status": "completed"}),
    ]
    assert _render(updates) == (
        "✓ Edit src/app.py  edit\n"
        "  src/app.py\n"
        "  @@ -1,3 +1,3 @@\n"
        "   a = 1\n"
        "  -b = 2\n"
        "  +b = 20\n"
        "   c = 3"
    )
    coloured = _render(updates, color=True)
    assert "\x1b[31m-b = 2" in coloured and "\x1b[32m+b = 20" in coloured
    assert "\x1b[1;32m✓" in coloured


def test_a_new_file_diff_is_all_additions() -> None:
    out = _render(_golden("diff_new_file__diff__capable__completed")[:2])
    assert out == (
        "⋯ Write new.txt  edit\n  new.txt (new file)\n  @@ -0,0 +1 @@\n  +hello"
    )  # still running: printed by finish() as it stands


def test_a_terminal_card_streams_output_and_shows_the_exit_pill() -> None:
    start, running, _ = _golden("terminal__terminal_exit__capable__completed")
    output = [
        _u(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call-1",
                "_meta": {"terminal_output": {"terminal_id": "call-1", "data": data}},
            }
        )
        for data in ["collecting…\r", "collected 3 items\n", "\x1b[32m3 passed\x1b[0m", "\n"]
    ]
    done = _u(
        {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call-1",
            "status": "completed",
            "_meta": {
                "terminal_output": {"terminal_id": "call-1", "data": "bye\n"},
                "terminal_exit": {"terminal_id": "call-1", "exit_code": 0},
            },
        }
    )
    out = _render([start, running, *output, done])
    assert out == (
        "╭─ ✓ $ pytest -q ──────────────────────────────────────────────────────────────╮\n"
        "│ Run the tests                                                                │\n"
        "│ cwd: /work/project/sub                                                       │\n"
        "│ collected 3 items                                                            │\n"
        "│ 3 passed                                                                     │\n"
        "│ bye                                                                          │\n"
        "╰───────────────────────────────────────────────────────────────────  exit 0  ─╯"
    )
    coloured = _render([start, running, *output, done], color=True)
    assert "\x1b[1;37;42m  exit 0  " in coloured  # the green pill
    assert "\x1b[32m3 passed" in coloured  # the tool's own ANSI colour


@pytest.mark.parametrize(
    ("exit_meta", "pill", "style"),
    [
        ({"exit_code": 2}, "exit 2", "1;37;41"),
        ({"signal": "SIGKILL"}, "SIGKILL", "1;37;45"),
    ],
)
def test_failed_terminals_get_a_red_or_signal_pill(
    exit_meta: dict[str, Any], pill: str, style: str
) -> None:
    updates = [
        _u(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "make",
                "kind": "execute",
                "content": [{"type": "terminal", "terminalId": "t1"}],
                "_meta": {"terminal_info": {"terminal_id": "t1", "cwd": CWD}},
            }
        ),
        _u(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "t1",
                "status": "failed",
                "_meta": {"terminal_exit": {"terminal_id": "t1", **exit_meta}},
            }
        ),
    ]
    out = _render(updates)
    assert "✗ $ make" in out and f" {pill} " in out and "(no output)" in out
    assert f"\x1b[{style}m  {pill}  " in _render(updates, color=True)


def test_a_failed_generic_card_shows_its_text() -> None:
    out = _render(_golden("generic__none__plain__failed", "g1"))
    assert out == "✗ Read src/app.py  read\n  model-facing text"


def test_the_console_fallback_block_is_drawn_as_code() -> None:
    out = _render(_golden("terminal__terminal_exit__plain__completed"))
    assert out.splitlines()[0] == "✓ pytest -q  execute"
    assert "```" not in out.splitlines()[1]  # the fence itself is not shown …
    assert "ok" in out and "Exit code: 0" in out  # … its content and the status are


def test_content_updates_replace_and_terminal_output_appends() -> None:
    def update(**fields: Any) -> dict[str, Any]:
        return _u({"sessionUpdate": "tool_call_update", "toolCallId": "x", **fields})

    text = {"type": "content", "content": {"type": "text", "text": "first"}}
    other = {"type": "content", "content": {"type": "text", "text": "second"}}
    out = _render(
        [
            _u({"sessionUpdate": "tool_call", "toolCallId": "x", "title": "T", "content": [text]}),
            update(content=[other]),
            update(title="Renamed", content=None),  # null: unchanged
            update(status="completed"),
        ]
    )
    assert out == "✓ Renamed\n  second"


def test_a_card_without_content_shows_its_raw_input() -> None:
    out = _render(
        [
            _u(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": "x",
                    "title": "lookup",
                    "rawInput": {"q": "needle"},
                    "status": "completed",
                }
            )
        ]
    )
    assert out == '✓ lookup\n  {"q": "needle"}'


def test_modes_commands_and_plans_are_brief() -> None:
    out = _render(
        [
            _u({"sessionUpdate": "current_mode_update", "currentModeId": "architect"}),
            _u(
                {
                    "sessionUpdate": "available_commands_update",
                    "availableCommands": [{"name": "read"}, {"name": "grep"}, "junk"],
                }
            ),
            _u(
                {
                    "sessionUpdate": "plan",
                    "entries": [{"content": "old", "status": "pending", "priority": "low"}],
                }
            ),
            _u(
                {
                    "sessionUpdate": "plan",
                    "entries": [
                        {"content": "read", "status": "completed", "priority": "high"},
                        {"content": "edit", "status": "in_progress", "priority": "high"},
                    ],
                }
            ),
        ]
    )
    assert out == ("mode: architect\n\ncommands: /read /grep\n\nPlan\n  ✓ read\n  ⋯ edit")


BAD_INPUT: list[Any] = [
    None,
    42,
    "text",
    [],
    {},
    {"update": None},
    {"update": {"sessionUpdate": 5}},
    {"update": {"sessionUpdate": "future_update_kind", "x": 1}},
    {"update": {"sessionUpdate": "agent_message_chunk"}},
    {"update": {"sessionUpdate": "agent_message_chunk", "content": "not an object"}},
    {"update": {"sessionUpdate": "user_message_chunk", "content": {"type": "image"}}},
    {"update": {"sessionUpdate": "tool_call"}},
    {"update": {"sessionUpdate": "tool_call", "toolCallId": 3}},
    {"update": {"sessionUpdate": "tool_call", "toolCallId": "p", "title": None, "kind": 3}},
    {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "p", "content": "x"}},
    {
        "update": {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "p",
            "content": [5, {"type": "diff"}, {"type": "terminal"}, {"type": "mystery"}],
            "_meta": {
                "terminal_info": "x",
                "terminal_output": {"terminal_id": 1, "data": "x"},
                "terminal_exit": {"terminal_id": "t", "exit_code": True},
            },
        }
    },
    {"update": {"sessionUpdate": "tool_call_update", "toolCallId": "q", "status": "weird"}},
    {"update": {"sessionUpdate": "plan", "entries": "x"}},
    {"update": {"sessionUpdate": "available_commands_update"}},
    {"update": {"sessionUpdate": "current_mode_update"}},
]


def test_unknown_and_partial_input_never_crashes() -> None:
    out = _render(BAD_INPUT)
    assert "[image content]" not in out  # images are described by type …
    assert "[image]" in out  # … and mime type, when given
    assert "○ p" in out  # the partial card is drawn with its id as the title
    assert "[mystery item]" in out
    assert "? q" in out  # an unknown status


def test_cards_print_when_completed_and_later_blocks_wait_for_them() -> None:
    console = _console()
    renderer = TranscriptRenderer(console, cwd=CWD)
    renderer.user_prompt([{"type": "text", "text": "go"}])
    start, running, done = _golden("terminal__terminal_exit__capable__completed")
    renderer.feed(start)
    assert _text(console) == "❯ go"
    renderer.feed(running)
    renderer.feed(_chunk("agent_message_chunk", "waiting on the card"))
    renderer.feed(_chunk("agent_message_chunk", "again", messageId="m2"))
    assert _text(console) == "❯ go"  # the message after the running card waits
    renderer.feed(done)
    out = _text(console)
    assert "exit 0" in out and "waiting on the card" in out
    assert "again" not in out  # the last message may still grow
    renderer.end_turn("cancelled")
    out = _text(console)
    assert out.endswith("again\n\n(turn ended: cancelled)")
    assert out.index("pytest -q") < out.index("waiting on the card")


def test_updates_after_a_card_was_printed_are_ignored() -> None:
    start, running, done = _golden("generic__none__plain__completed")
    late = _u({"sessionUpdate": "tool_call_update", "toolCallId": "call-1", "title": "late"})
    out = _render([start, running, done, late])
    assert "late" not in out


def test_a_notice_and_a_compaction_are_drawn() -> None:
    out = _render(
        [
            _u(
                {
                    "sessionUpdate": "notice",
                    "severity": "warning",
                    "title": "MCP server 'gone' did not start",
                    "description": "MCP server 'gone' did not start: no such file",
                }
            ),
            _u({"sessionUpdate": "notice", "severity": "error", "title": "Just the title"}),
            _u(
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": "k1",
                    "status": "completed",
                    "summary": [{"type": "text", "text": "The user asked for *x*."}],
                }
            ),
            _u(
                {
                    "sessionUpdate": "compaction_update",
                    "compactionId": "k2",
                    "status": "failed",
                    "error": "the model sent no summary",
                }
            ),
        ]
    )
    assert out == (
        "⚠ MCP server 'gone' did not start\n"
        "  MCP server 'gone' did not start: no such file\n"
        "\n"
        "✗ Just the title\n"
        "\n"
        "≡ Earlier turns summarised\n"
        "  The user asked for *x*.\n"
        "\n"
        "≡ Summarising the earlier turns failed: the model sent no summary"
    )
