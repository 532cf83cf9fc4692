"""Parsing the slash-command console: a prompt's line → what to run (pure; a closed union out).

Grammar: ``/NAME {json}``, ``/NAME text`` (bound to the primary parameter: the first required
string), ``/NAME``, ``!command`` (``/bash``), a prompt of only ``@``-mentions (opened with
``read``/``glob``); anything else asks for help. A typed ``@word`` naming nothing on disk is text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Final

import attrs

from acp_sidecar.agent.mentions import Mention
from acp_sidecar.agent.prompt_line import PromptLine
from acp_sidecar.protocol import AvailableCommand, AvailableCommandInput
from acp_sidecar.text import one_line, shorten
from acp_sidecar.tools.definition import ToolDefinition

SHELL_TOOL = "bash"
READ_TOOL = "read"
LIST_TOOL = "glob"
PATH_PARAMETERS: Final = ("path", "file_path")
"""The parameters a mentioned file fills, in order of preference."""
SUMMARY_MAX: Final = 100
"""The longest command description the editor's menu gets, in characters."""

_SENTENCE_END = re.compile(r"[.!?](?=\s)")
_ABBREVIATIONS: Final = ("e.g.", "i.e.", "etc.", "vs.", "cf.")
"""Full stops that do not end a sentence."""
_NAME_END = re.compile(r"\s")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>~])")
"""What can start markup in the middle of a line (emphasis, code, links, HTML, strikeout)."""


@attrs.frozen
class CallTool:
    """Run ``name`` with ``arguments``."""

    name: str
    arguments: Any


@attrs.frozen
class OpenMentions:
    """A prompt of ``@``-mentions only: one call per mention, in order."""

    calls: tuple[CallTool, ...]


@attrs.frozen
class ShowHelp:
    """Plain text: answer with the list of commands."""


@attrs.frozen
class BadCommand:
    """The command cannot run; ``message`` says what was wrong."""

    message: str


Command = CallTool | OpenMentions | ShowHelp | BadCommand


def primary_parameter(definition: ToolDefinition, taken: str | None = None) -> str | None:
    """The first required string property of a tool's parameters, if any (other than
    ``taken``, the one a mention already fills)."""
    properties = definition.parameters.get("properties")
    required = definition.parameters.get("required") or ()
    if not isinstance(properties, dict):
        return None
    for name, schema in properties.items():
        if name == taken:
            continue
        if name in required and isinstance(schema, dict) and schema.get("type") == "string":
            return str(name)
    return None


def path_parameter(definition: ToolDefinition) -> str | None:
    """The string property a mentioned file fills (``path``, else ``file_path``), if any."""
    properties = definition.parameters.get("properties")
    if not isinstance(properties, dict):
        return None
    for name in PATH_PARAMETERS:
        schema = properties.get(name)
        if isinstance(schema, dict) and schema.get("type") == "string":
            return name
    return None


def open_mention(mention: Mention, names: set[str]) -> CallTool | BadCommand:
    """The call that shows a mentioned file (or directory), or why there is none."""
    if mention.path is None:
        return _not_local(mention)
    if mention.directory:
        if LIST_TOOL not in names:
            return BadCommand(f"Listing a directory needs the `{LIST_TOOL}` tool.")
        return CallTool(LIST_TOOL, {"pattern": "*", "path": mention.path})
    if READ_TOOL not in names:
        return BadCommand(f"Opening a mentioned file needs the `{READ_TOOL}` tool.")
    return CallTool(READ_TOOL, {"path": mention.path} | _window(mention))


def _window(mention: Mention) -> dict[str, Any]:
    """``read``'s arguments for the lines a mention selects."""
    if mention.lines is None:
        return {}
    first, last = mention.lines
    return {"offset": first, "limit": last - first + 1}


def _not_local(mention: Mention) -> BadCommand:
    return BadCommand(f"`{mention.uri}` is not a local file; only files can be opened here.")


def parse_command(
    prompt: PromptLine | str,
    tools: Sequence[ToolDefinition],
    session_commands: Sequence[AvailableCommand] = (),
) -> Command:
    """What the console should do with a prompt (see the module invariants);
    ``session_commands``: the server's own, named when a command is unknown."""
    line = PromptLine((prompt,)) if isinstance(prompt, str) else prompt
    by_name = {tool.name: tool for tool in tools}
    mentions = line.mentions
    if mentions and all(isinstance(p, Mention) or not p.strip() for p in line.pieces):
        calls: list[CallTool] = []
        for mention in mentions:
            opened = open_mention(mention, set(by_name))
            if isinstance(opened, BadCommand):
                return opened
            calls.append(opened)
        return OpenMentions(tuple(calls))
    first = line.pieces[0] if line.pieces else ""
    head = first.lstrip() if isinstance(first, str) else ""
    if head.startswith("!"):
        command = line.text(quote=True).strip()[1:].strip()
        if SHELL_TOOL not in by_name:
            return BadCommand(
                f"`!` runs shell commands through the `{SHELL_TOOL}` tool, which is not registered."
            )
        if not command:
            return BadCommand("`!` needs a command to run, e.g. `!ls -la`.")
        return CallTool(SHELL_TOOL, {"command": command})
    if not head.startswith("/"):
        return ShowHelp()
    assert isinstance(first, str)
    name = _NAME_END.split(head[1:], maxsplit=1)[0]
    rest = line.rest(len(first) - len(head) + 1 + len(name))
    tool = by_name.get(name)
    if tool is None:
        names = {*by_name, *(command.name for command in session_commands)}
        known = ", ".join(f"/{n}" for n in sorted(names)) or "none"
        return BadCommand(f"Unknown command `/{name}`. Available commands: {known}.")
    return _bind(tool, rest)


def _bind(tool: ToolDefinition, rest: PromptLine) -> Command:
    """A command's call from the text after its name (and the mentions in it)."""
    name = tool.name
    path = path_parameter(tool)
    arguments: dict[str, Any] = {}
    mention: Mention | None = None
    if path is not None:
        takes_path = primary_parameter(tool) == path  # `read`, `write`, `edit`
        bound = [m for m in rest.mentions if m.found or takes_path]
        if len(bound) > 1:
            named = ", ".join(m.label for m in bound)
            return BadCommand(
                f"`/{name}` takes one path, and this prompt mentions {len(bound)}: {named}."
            )
        if bound:
            [mention] = bound
            if mention.path is None:
                return _not_local(mention)
            arguments = {path: mention.path} | (_window(mention) if name == READ_TOOL else {})
    text = rest.text(quote=name == SHELL_TOOL, skip=mention).strip()
    if not text:
        return CallTool(name, arguments)
    if text.startswith("{"):
        try:
            given = json.loads(text)
        except json.JSONDecodeError as exc:
            return BadCommand(f"The arguments of `/{name}` are not valid JSON: {exc}.")
        if not isinstance(given, dict):
            return BadCommand(f"The arguments of `/{name}` must be a JSON object.")
        return CallTool(name, arguments | given)
    primary = primary_parameter(tool, taken=None if mention is None else path)
    if primary is None:
        return BadCommand(
            f"`/{name}` has no required text parameter to bind `{text}` to; "
            f"pass a JSON object instead, e.g. `/{name} {{...}}`."
        )
    return CallTool(name, arguments | {primary: text})


def input_hint(definition: ToolDefinition) -> str:
    """What the editor shows while a command's input is empty."""
    primary = primary_parameter(definition)
    if primary is None:
        return "a JSON object of arguments"
    return f"{primary} (or a JSON object of arguments)"


def summary(description: str, limit: int = SUMMARY_MAX) -> str:
    """The first sentence of ``description``, on one line, cut at a word to ``limit``."""
    lines = description.strip().splitlines()
    first = one_line(lines[0]) if lines else ""
    ends = (m.end() for m in _SENTENCE_END.finditer(first))
    end = next((e for e in ends if not first[:e].lower().endswith(_ABBREVIATIONS)), None)
    return shorten(first if end is None else first[:end], limit)


def escape_markdown(text: str) -> str:
    """``text`` with every character Markdown would read as markup backslash-escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def available_commands(tools: Sequence[ToolDefinition]) -> list[AvailableCommand]:
    """Every registered tool as a slash command, described by its first sentence."""
    return [
        AvailableCommand(
            name=tool.name,
            description=summary(tool.description),
            input=AvailableCommandInput(hint=input_hint(tool)),
        )
        for tool in tools
    ]


def help_text(
    tools: Sequence[ToolDefinition], session_commands: Sequence[AvailableCommand] = ()
) -> str:
    """The console's answer to plain text: a short Markdown list of the commands (the
    tools', then ``session_commands``, which a tool of the same name cannot shadow)."""
    lines = ["No model is configured: this session is a console for the sidecar's tools.", ""]
    taken = {command.name for command in session_commands}
    shown = [tool for tool in tools if tool.name not in taken]
    lines += [f"- `/{tool.name}` {escape_markdown(summary(tool.description))}" for tool in shown]
    if not shown:
        lines.append("- (no tools are registered)")
    lines += [f"- `/{c.name}` {escape_markdown(c.description)}" for c in session_commands]
    lines += [
        "",
        "`/NAME {json}` passes arguments, `/NAME text` the main one; `!command` runs a shell "
        "command; an `@`-mention alone opens the file.",
    ]
    return "\n".join(lines)
