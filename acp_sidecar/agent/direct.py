"""The embedded default driver: a slash-command console for the registered tools.

Without a model, every prompt is a command (see :mod:`acp_sidecar.agent.console`): a tool call
runs through the registry's whole pipeline and the bridge draws its card exactly as it would
for a model's call; plain text answers with the list of commands; a bad command answers with
what was wrong. Every turn ends with ``end_turn`` (the server turns a cancelled one into
``cancelled``).
"""

from __future__ import annotations

import uuid

from acp_sidecar.agent.console import (
    BadCommand,
    CallTool,
    ShowHelp,
    available_commands,
    help_text,
    parse_command,
)
from acp_sidecar.agent.driver import Turn
from acp_sidecar.agent.toolset import LazyRegistry, RegistrySource
from acp_sidecar.bridge.runner import run_call
from acp_sidecar.protocol import (
    AgentMessageChunk,
    AvailableCommandsUpdate,
    PromptCapabilities,
    ResourceLinkContentBlock,
    StopReason,
    TextContentBlock,
)
from acp_sidecar.tools.content import text_of
from acp_sidecar.tools.registry import ToolRegistry


def prompt_text(turn: Turn) -> str:
    """The prompt's text: text blocks joined; resource links as their URI."""
    parts: list[str] = []
    for block in turn.prompt:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceLinkContentBlock):
            parts.append(block.uri)
    return "".join(parts)


def new_call_id() -> str:
    """A call id unique within a session (and across its reloads)."""
    return f"call_{uuid.uuid4().hex[:16]}"


class ConsoleDriver:
    """Runs each prompt as a console command against the server's registry."""

    prompt_capabilities = PromptCapabilities()

    def __init__(self, registry: RegistrySource) -> None:
        self._registry = LazyRegistry(registry)

    @property
    def registry(self) -> ToolRegistry:
        """The registry (resolved on first use, so making the driver stays cheap)."""
        return self._registry.get()

    def commands_update(self) -> AvailableCommandsUpdate:
        """The ``available_commands_update`` sent right after ``session/new``."""
        return AvailableCommandsUpdate(
            available_commands=available_commands(self.registry.visible())
        )

    async def run_turn(self, turn: Turn) -> StopReason:
        tools = self.registry.visible()
        command = parse_command(prompt_text(turn), tools)
        match command:
            case ShowHelp():
                await say(turn, help_text(tools))
            case BadCommand(message=message):
                await say(turn, message)
            case CallTool(name=name, arguments=arguments):
                result = await run_call(
                    self.registry, turn.scope, new_call_id(), name, arguments, record=turn.record
                )
                error = result.error
                if error is not None and error.code in ("INVALID_ARGS", "INVALID_INPUT"):
                    # The card shows it too; the message says how to fix the command.
                    await say(turn, f"`/{name}` failed: {text_of(result.content)}")
        return "end_turn"


async def say(turn: Turn, text: str) -> None:
    """Send an agent message (and record it for the session log)."""
    await turn.send(AgentMessageChunk(content=TextContentBlock(text=text)))
