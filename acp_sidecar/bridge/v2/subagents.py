"""The v2 form of the core's child sessions (``task`` subagents, unstable): the parent's
``subagent_update`` and the messages between the sessions have v1's shapes; what differs is
the link. v2 has no ``session`` tool-call content (the child is linked by its
``subagent_update`` alone), so the task card's link is taken out of every card update.

Invariant: pure, as the card encoder is; a card update whose content was only the link
changes nothing a v2 client draws, so it leaves the content unchanged (omitted), never
clears it.
"""

from __future__ import annotations

from typing import Any

from acp_sidecar.protocol.encoding import to_wire
from acp_sidecar.protocol.subagents import SessionMessage, SessionMessageChunk, SubagentUpdate
from acp_sidecar.protocol.tool_call import ToolCallContent, ToolCallSession


def child_update(update: SubagentUpdate | SessionMessage | SessionMessageChunk) -> dict[str, Any]:
    """A child's announcement or state, or an inter-session message, in its v2 form."""
    return to_wire(update)  # v2's unstable shapes are v1's


def unlinked(content: list[ToolCallContent] | None) -> list[ToolCallContent] | None:
    """A card's content without its links to child sessions (``None``: unchanged, also when
    the link was all it held)."""
    if content is None:
        return None
    kept: list[ToolCallContent] = [i for i in content if not isinstance(i, ToolCallSession)]
    if not kept and content:
        return None
    return kept
