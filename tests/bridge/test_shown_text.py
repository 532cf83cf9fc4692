"""What a person is shown of what the model wrote: the permission dialog shows the whole
command, and control and bidi characters in titles are signs, never obeyed (issue 25 §6).

The model's command is untrusted: with ``\\n``, ``\\r``, a long run of spaces or
``ESC[8m`` (hidden text) the dialog showed "echo safe" on one line, and its only content was
the model's own description of the command.
"""

from __future__ import annotations

from typing import Any

import pytest

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.policy import CallScope, SessionPolicy, install_policy
from acp_sidecar.bridge.runner import run_call
from acp_sidecar.protocol import TextContentBlock, ToolCallContentBlock, ToolCallTerminal
from acp_sidecar.tools import CancelSignal, ToolRegistry
from acp_sidecar.tools.builtin import bash_tool, write_tool
from tests.fakes import Editor


def registry() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register(bash_tool)
    reg.register(write_tool)
    install_policy(reg)
    return reg


def scope(editor: Editor, cwd: str, *, terminal_output: bool = False) -> CallScope:
    return CallScope(
        session_id="s",
        cards=CardContext(cwd, terminal_output=terminal_output),
        policy=SessionPolicy(mode="ask"),
        send=editor.send,
        asker=editor,
        signal=CancelSignal(),
    )


def texts(content: Any) -> list[str]:
    return [
        item.content.text
        for item in content or []
        if isinstance(item, ToolCallContentBlock) and isinstance(item.content, TextContentBlock)
    ]


@pytest.mark.parametrize(
    ("command", "title", "block"),
    [
        ("echo safe\nrm -rf ~", "echo safe␊rm -rf ~", "echo safe\nrm -rf ~"),
        ("echo safe\rrm -rf ~", "echo safe␍rm -rf ~", "echo safe␍rm -rf ~"),
        ("echo safe" + " " * 300 + "; rm -rf ~", "echo safe ; rm -rf ~", None),
        ("echo safe\x1b[8m; rm -rf ~", "echo safe␛[8m; rm -rf ~", "echo safe␛[8m; rm -rf ~"),
        ("cat notes\u202etxt.sh", "cat notes⟨U+202E⟩txt.sh", "cat notes⟨U+202E⟩txt.sh"),
    ],
)
@pytest.mark.parametrize("terminal_output", [False, True])
async def test_the_dialog_shows_the_whole_command_with_what_hides_text_made_visible(
    tmp_path: Any, command: str, title: str, block: str | None, terminal_output: bool
) -> None:
    editor = Editor("reject_once")
    arguments = {"command": command, "description": "List the files"}
    result = await run_call(
        registry(),
        scope(editor, str(tmp_path), terminal_output=terminal_output),
        "c1",
        "bash",
        arguments,
    )
    assert result.is_error  # rejected: nothing ran
    [asked] = editor.asked
    card = asked.tool_call
    assert card.title == title
    shown = block if block is not None else command
    assert texts(card.content) == [f"```sh\n{shown}\n```", "List the files"]
    assert isinstance((card.content or [])[-1], ToolCallTerminal) is terminal_output
    assert card.raw_input == arguments  # what runs is still exactly what the model wrote


async def test_a_command_with_backticks_cannot_close_its_block(tmp_path: Any) -> None:
    editor = Editor("reject_once")
    command = "echo ```\necho done"
    await run_call(registry(), scope(editor, str(tmp_path)), "c1", "bash", {"command": command})
    assert texts(editor.asked[0].tool_call.content) == [f"````sh\n{command}\n````"]


async def test_a_bidi_override_in_a_file_name_is_a_sign_in_titles_not_on_the_wire(
    tmp_path: Any,
) -> None:
    """``evil\\u202etxt.exe`` reads as ``evilexe.txt`` wherever it is drawn as it is."""
    editor = Editor("reject_once")
    name = "evil\u202etxt.exe"
    await run_call(
        registry(), scope(editor, str(tmp_path)), "c1", "write", {"path": name, "content": "x"}
    )
    card = editor.asked[0].tool_call
    assert card.title is not None and "evil⟨U+202E⟩txt.exe" in card.title
    # The paths an editor opens stay the file's own name.
    assert [location.path for location in card.locations or []] == [str(tmp_path / name)]
    final = editor.updates[-1]
    assert final["status"] == "failed"
    assert "\u202e" not in final.get("title", "")
