"""Parsing the slash-command console."""

from __future__ import annotations

from typing import Any

import pytest

from acp_sidecar.agent.console import (
    BadCommand,
    CallTool,
    ShowHelp,
    available_commands,
    help_text,
    parse_command,
    primary_parameter,
)
from acp_sidecar.tools import SchemaProp, ToolDefinition, ToolExecution, define_tool


async def nothing(args: Any, execution: ToolExecution) -> str:
    return ""


def tool(name: str, **props: SchemaProp) -> ToolDefinition:
    return define_tool(
        name=name, description=f"The {name} tool.\nMore.", parameters=props, execute=nothing
    )


TOOLS = [
    tool("read", limit=SchemaProp(type="integer"), path=SchemaProp(type="string", required=True)),
    tool("bash", command=SchemaProp(type="string", required=True)),
    tool("stats", verbose=SchemaProp(type="boolean")),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/read src/a.py", CallTool("read", {"path": "src/a.py"})),
        ('/read {"path": "a", "limit": 3}', CallTool("read", {"path": "a", "limit": 3})),
        ("  /stats  ", CallTool("stats", {})),
        ("/bash echo hi there", CallTool("bash", {"command": "echo hi there"})),
        ("!ls -la", CallTool("bash", {"command": "ls -la"})),
        ("/read\nmulti line", CallTool("read", {"path": "multi line"})),
        ("hello there", ShowHelp()),
        ("", ShowHelp()),
    ],
)
def test_commands(text: str, expected: object) -> None:
    assert parse_command(text, TOOLS) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("/nope x", "Unknown command `/nope`. Available commands: /bash, /read, /stats."),
        ("/read {bad json", "The arguments of `/read` are not valid JSON: "),
        ("/read [1, 2]", None),
        ('/read {"a": 1} trailing', "The arguments of `/read` are not valid JSON: "),
        ("/stats some text", "`/stats` has no required text parameter to bind `some text` to"),
        ("!", "`!` needs a command to run"),
    ],
)
def test_bad_commands_say_what_was_wrong(text: str, message: str | None) -> None:
    parsed = parse_command(text, TOOLS)
    if message is None:  # "[1, 2]" is text bound to the primary parameter
        assert parsed == CallTool("read", {"path": "[1, 2]"})
        return
    assert isinstance(parsed, BadCommand)
    assert parsed.message.startswith(message)


def test_bang_without_a_bash_tool() -> None:
    parsed = parse_command("!ls", TOOLS[:1])
    assert isinstance(parsed, BadCommand)
    assert "`bash` tool, which is not registered" in parsed.message


def test_the_primary_parameter_is_the_first_required_string() -> None:
    assert primary_parameter(TOOLS[0]) == "path"
    assert primary_parameter(TOOLS[2]) is None


def test_commands_and_help_list_every_tool() -> None:
    commands = available_commands(TOOLS)
    assert [c.name for c in commands] == ["read", "bash", "stats"]
    assert commands[0].input is not None
    assert commands[0].input.hint == "path (or a JSON object of arguments)"
    assert commands[2].input is not None
    assert commands[2].input.hint == "a JSON object of arguments"
    text = help_text(TOOLS)
    assert "- `/read` The read tool." in text
    assert "More." not in text


def test_menu_and_help_use_a_short_first_sentence_escaped_for_markdown() -> None:
    from acp_sidecar.agent.console import SUMMARY_MAX, escape_markdown, summary

    long = define_tool(
        name="find",
        description="Find '**/*.py' files_fast, e.g. with <globs>. " + "Then more. " * 40,
        parameters={},
        execute=nothing,
    )
    wordy = define_tool(name="wordy", description="word " * 60, parameters={}, execute=nothing)
    menu = {c.name: c.description for c in available_commands([long, wordy])}
    assert menu["find"] == "Find '**/*.py' files_fast, e.g. with <globs>."
    assert len(menu["wordy"]) <= SUMMARY_MAX and menu["wordy"].endswith("word…")
    text = help_text([long])
    assert r"Find '\*\*/\*.py' files\_fast, e.g. with \<globs\>." in text
    assert escape_markdown("a*b_c`d[e]<f>~g\\h") == r"a\*b\_c\`d\[e\]\<f\>\~g\\h"
    assert summary("") == ""
