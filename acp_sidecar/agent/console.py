"""Parsing the slash-command console: a prompt's text → what to run.

Invariants: parsing is pure (text and the registry's snapshots in, a closed union out). The
grammar: ``/NAME {json object}`` calls NAME with those arguments; ``/NAME some text`` binds
the text to NAME's primary parameter (its first required string property); ``/NAME`` alone
calls it with no arguments; ``!command`` is shorthand for ``/bash`` with ``command``; anything
else asks for help.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from acp_sidecar.protocol import AvailableCommand, AvailableCommandInput
from acp_sidecar.tools.definition import ToolDefinition

SHELL_TOOL = "bash"


@attrs.frozen
class CallTool:
    """Run ``name`` with ``arguments``."""

    name: str
    arguments: Any


@attrs.frozen
class ShowHelp:
    """Plain text: answer with the list of commands."""


@attrs.frozen
class BadCommand:
    """The command cannot run; ``message`` says what was wrong."""

    message: str


Command = CallTool | ShowHelp | BadCommand


def primary_parameter(definition: ToolDefinition) -> str | None:
    """The first required string property of a tool's parameters, if any."""
    properties = definition.parameters.get("properties")
    required = definition.parameters.get("required") or ()
    if not isinstance(properties, dict):
        return None
    for name, schema in properties.items():
        if name in required and isinstance(schema, dict) and schema.get("type") == "string":
            return str(name)
    return None


def parse_command(text: str, tools: Sequence[ToolDefinition]) -> Command:
    """What the console should do with a prompt's text."""
    stripped = text.strip()
    by_name = {tool.name: tool for tool in tools}
    if stripped.startswith("!"):
        command = stripped[1:].strip()
        if SHELL_TOOL not in by_name:
            return BadCommand(
                f"`!` runs shell commands through the `{SHELL_TOOL}` tool, which is not registered."
            )
        if not command:
            return BadCommand("`!` needs a command to run, e.g. `!ls -la`.")
        return CallTool(SHELL_TOOL, {"command": command})
    if not stripped.startswith("/"):
        return ShowHelp()
    name, _, rest = stripped[1:].partition(" ")
    if "\n" in name:
        name, _, more = name.partition("\n")
        rest = more + (" " + rest if rest else "")
    rest = rest.strip()
    tool = by_name.get(name)
    if tool is None:
        known = ", ".join(f"/{n}" for n in sorted(by_name)) or "none"
        return BadCommand(f"Unknown command `/{name}`. Available commands: {known}.")
    if not rest:
        return CallTool(name, {})
    if rest.startswith("{"):
        try:
            arguments = json.loads(rest)
        except json.JSONDecodeError as exc:
            return BadCommand(f"The arguments of `/{name}` are not valid JSON: {exc}.")
        if not isinstance(arguments, dict):
            return BadCommand(f"The arguments of `/{name}` must be a JSON object.")
        return CallTool(name, arguments)
    primary = primary_parameter(tool)
    if primary is None:
        return BadCommand(
            f"`/{name}` has no required text parameter to bind `{rest}` to; "
            f"pass a JSON object instead, e.g. `/{name} {{...}}`."
        )
    return CallTool(name, {primary: rest})


def input_hint(definition: ToolDefinition) -> str:
    """What the editor shows while a command's input is empty."""
    primary = primary_parameter(definition)
    if primary is None:
        return "a JSON object of arguments"
    return f"{primary} (or a JSON object of arguments)"


def available_commands(tools: Sequence[ToolDefinition]) -> list[AvailableCommand]:
    """Every registered tool as a slash command."""
    return [
        AvailableCommand(
            name=tool.name,
            description=tool.description,
            input=AvailableCommandInput(hint=input_hint(tool)),
        )
        for tool in tools
    ]


def help_text(tools: Sequence[ToolDefinition]) -> str:
    """The console's answer to plain text."""
    lines = [
        "No model is configured, so this session is a console for the sidecar's tools.",
        "",
        "Commands:",
    ]
    for tool in tools:
        summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
        lines.append(f"- `/{tool.name}` — {summary}  (input: {input_hint(tool)})")
    if not tools:
        lines.append("- (no tools are registered)")
    lines += [
        "",
        "`/NAME {json}` passes arguments; `/NAME text` binds text to the first required text "
        "parameter; `!command` runs a shell command through `/bash`.",
    ]
    return "\n".join(lines)
