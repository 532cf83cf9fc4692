"""The embedded default driver: a slash-command console for the registered tools.

A command's call runs through the registry's whole pipeline and is drawn exactly as a model's
call would be. Every turn ends ``end_turn`` (the server makes a cancelled one ``cancelled``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from acp_sidecar.agent.driver import DriverBase, Turn, new_call_id, send_notice
from acp_sidecar.protocol import AvailableCommandsUpdate, PromptCapabilities, StopReason

if TYPE_CHECKING:
    # The console and the bridge load with the first command, not when the driver is made
    # (for a first ``session/new``).
    from acp_sidecar.agent.console import CallTool
    from acp_sidecar.tools.registry import ToolRegistry


class ConsoleDriver(DriverBase):
    """Runs each prompt as a console command against the session's registry (the turn's
    ``tools``, else the server's)."""

    prompt_capabilities = PromptCapabilities(embedded_context=True)

    def __init__(self, registry: Callable[[], ToolRegistry]) -> None:
        self._registry = registry

    @property
    def registry(self) -> ToolRegistry:
        """The registry, asked for each time it is used: the server's tool set builds it on the
        first call, so making the driver (while ``initialize`` is answered) stays cheap."""
        return self._registry()

    def commands_update(self, tools: ToolRegistry | None = None) -> AvailableCommandsUpdate:
        """The ``available_commands_update`` sent right after ``session/new`` (and again when
        a session's tools change): ``tools``, the session's own registry, or the server's."""
        from acp_sidecar.agent.console import available_commands

        registry = self.registry if tools is None else tools
        return AvailableCommandsUpdate(available_commands=available_commands(registry.visible()))

    async def run_turn(self, turn: Turn) -> StopReason:
        from acp_sidecar.agent.console import (
            BadCommand,
            CallTool,
            OpenMentions,
            ShowHelp,
            help_text,
            parse_command,
        )
        from acp_sidecar.agent.prompt_line import read_prompt

        registry = self.registry if turn.tools is None else turn.tools
        tools = registry.visible()
        line = await asyncio.to_thread(read_prompt, turn.prompt, turn.cwd)
        command = parse_command(line, tools, turn.commands)
        match command:
            case ShowHelp():
                await say(turn, help_text(tools, turn.commands))
            case BadCommand(message=message):
                await say(turn, message)
            case CallTool():
                await self._call(registry, turn, command)
            case OpenMentions(calls=calls):
                for call in calls:
                    if turn.signal.cancelled:
                        break
                    await self._call(registry, turn, call)
        return "end_turn"

    async def _call(self, registry: ToolRegistry, turn: Turn, call: CallTool) -> None:
        from acp_sidecar.bridge.runner import run_call
        from acp_sidecar.tools.content import text_of

        result = await run_call(
            registry, turn.scope, new_call_id(), call.name, call.arguments, record=turn.record
        )
        error = result.error
        if error is not None and error.code in ("INVALID_ARGS", "INVALID_INPUT"):
            # The card shows it too; the message says how to fix the command.
            await say(turn, f"`/{call.name}` failed: {text_of(result.content)}")


async def say(turn: Turn, text: str) -> None:
    """Answer the user in the console's own voice: a notice (shown as an agent message and
    kept in the session log, but never part of a model's history if the session is later
    continued with a model)."""
    await send_notice(turn, text)
