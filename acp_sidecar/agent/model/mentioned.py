"""The files a prompt mentions, opened for the model as calls before its first request.

One call and result per mention, in order, each its own message pair: what the log replays.
Embedded mentions are not opened again; at most :data:`OPENED_MAX` are.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection
from typing import Final

from acp_sidecar.agent.console import CallTool, open_mention
from acp_sidecar.agent.driver import Turn, new_call_id, send_notice
from acp_sidecar.agent.model.messages import (
    Message,
    SentCall,
    arguments_text,
    assistant_message,
    step_messages,
)
from acp_sidecar.agent.prompt_line import read_prompt
from acp_sidecar.bridge.runner import run_call
from acp_sidecar.tools.json_values import freeze_json
from acp_sidecar.tools.registry import ToolRegistry

OPENED_MAX: Final = 16
"""The most mentions one prompt opens for the model."""


async def open_mentions(
    turn: Turn, registry: ToolRegistry, claim: Callable[[str], str], names: Collection[str]
) -> list[Message]:
    """Open the prompt's mentions (``names``: the tools the model is given); the messages
    that tell the model so. Stops early when the turn is cancelled."""
    line = await asyncio.to_thread(read_prompt, turn.prompt, turn.cwd)
    calls = [
        opened
        for mention in line.mentions
        if mention.source == "link" or (mention.source == "typed" and mention.found)
        if isinstance(opened := open_mention(mention, set(names)), CallTool)
    ]
    if len(calls) > OPENED_MAX:
        await send_notice(
            turn,
            f"This prompt mentions {len(calls)} files; the first {OPENED_MAX} were opened for "
            "the model, which sees the others' names only.",
        )
        calls = calls[:OPENED_MAX]
    messages: list[Message] = []
    for call in calls:
        if turn.signal.cancelled:
            break
        call_id = claim(new_call_id())
        result = await run_call(
            registry, turn.scope, call_id, call.name, call.arguments, record=turn.record
        )
        sent = SentCall(call_id, call.name, arguments_text(freeze_json(call.arguments)))
        messages += [assistant_message("", [sent]), *step_messages([result])]
    return messages
