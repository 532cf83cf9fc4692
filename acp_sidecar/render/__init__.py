"""Terminal rendering of ACP ``session/update`` streams with ``rich``: the transcript a client
would show. It reads only wire JSON, never ACP classes or records; nothing fed makes it raise.
"""

from __future__ import annotations

from acp_sidecar.render.fold import CardState, TerminalState, apply_tool_update
from acp_sidecar.render.transcript import TranscriptRenderer, render_transcript

__all__ = [
    "CardState",
    "TerminalState",
    "TranscriptRenderer",
    "apply_tool_update",
    "render_transcript",
]
