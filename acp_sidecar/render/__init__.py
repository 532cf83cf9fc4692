"""Terminal rendering of ACP ``session/update`` streams with ``rich``: the transcript a client
would show — messages, thoughts, and every tool card in its final state (coloured diffs, boxed
terminals with an exit pill, text).

Invariant: the renderer reads only wire JSON (what a client receives), never ACP classes or
store records, so what it draws is what an editor was sent; nothing it is fed makes it raise.
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
