"""What every request of a turn carries whatever the history, and what the user is told when
that alone overfills the window (no summary can make room for it). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from acp_sidecar.agent.model.compaction import estimate_tokens
from acp_sidecar.agent.model.messages import Message


@attrs.frozen
class Room:
    """The estimated tokens of each thing every request of the turn carries."""

    system: int
    tools: int
    tool_count: int
    prompt: int
    steps: int
    """This turn's calls and results so far."""

    @property
    def fixed(self) -> int:
        """All of them."""
        return self.system + self.tools + self.prompt + self.steps


def room_of(
    head: Message, tools: Sequence[Mapping[str, Any]], prompt: Message, steps: Sequence[Message]
) -> Room:
    """The room the parts of a turn's fixed part take."""
    return Room(
        system=estimate_tokens([head]),
        tools=estimate_tokens([], tools) if tools else 0,
        tool_count=len(tools),
        prompt=estimate_tokens([prompt]),
        steps=estimate_tokens(steps) if steps else 0,
    )


@attrs.frozen
class Window:
    """What the sidecar knows of the model's context window for a request."""

    size: int
    """Its tokens."""
    budget: int
    """How many a request may use (the rest is kept for the answer and a margin)."""
    reserve: int
    """How many are kept for the answer."""


def overfilled(room: Room, window: Window | None, *, left_out: int, summary: bool) -> str:
    """What the user is told when the fixed part alone is more than a request may use
    (``window``: known, and the estimate says so) or was refused by the endpoint as too long
    (``window`` ``None``); ``left_out``: earlier turns left out of the request, ``summary``:
    a summary of even earlier ones was left out too."""
    parts = [f"the system prompt (about {room.system:,} tokens)"]
    if room.tool_count:
        tools = "tool" if room.tool_count == 1 else f"{room.tool_count} tools"
        parts.append(f"the definitions of its {tools} (about {room.tools:,})")
    parts.append(f"the prompt (about {room.prompt:,})")
    if room.steps:
        parts.append(f"this turn's tool calls and results (about {room.steps:,})")
    carried = ", ".join(parts[:-1]) + f" and {parts[-1]}"
    if window is not None:
        text = (
            f"The model's context window ({window.size:,} tokens) is too small for what every "
            f"request carries: {carried} take about {room.fixed:,}, more than the "
            f"{window.budget:,} tokens a request may use (the rest is kept for the answer)."
        )
    else:
        text = (
            "The endpoint refused the request as longer than the model's context window, and "
            f"it carried only what every request carries: {carried}, about {room.fixed:,} "
            "tokens in all."
        )
    if left_out or summary:
        text += " Nothing was summarised: a summary cannot make that room."
        turns = "The earlier turn" if left_out == 1 else f"The {left_out} earlier turns"
        if not left_out:
            gone = "The summary of the earlier turns was"
        elif summary:
            gone = f"{turns} and the summary before {'it' if left_out == 1 else 'them'} were"
        else:
            gone = f"{turns} {'was' if left_out == 1 else 'were'}"
        kept = "it" if left_out <= 1 and not (left_out and summary) else "them"
        text += f" {gone} left out of what the model is sent (the session keeps {kept})."
    advice = [
        "run the model with a larger context window (llama.cpp: --ctx-size; raise the "
        "model's `context` setting too if you gave one)",
        "offer fewer tools (an MCP server's count too)",
    ]
    if window is not None:
        advice.append(f"lower --max-tokens ({window.reserve:,} tokens are kept for the answer)")
    return text + " To make room: " + ", ".join(advice[:-1]) + f" or {advice[-1]}."
