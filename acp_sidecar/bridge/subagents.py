"""A child conversation (a subagent) as ``protocol/v1/subagents`` shows it to a client that
advertised ``clientCapabilities.subagents``: the updates live and replay both send.

Invariants: the parent's announcing ``subagent_update`` goes before anything carrying the
child's id; the child's id, and the ids of the messages between the sessions, are functions of
the parent's id and the delegating call's id, so a replay sends the ids sent live; the task
card keeps its link to the child (``session`` content) in every update that sets its content.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Final

import attrs

from acp_sidecar.protocol.content import ContentBlock, TextContentBlock
from acp_sidecar.protocol.subagents import (
    SessionCancelCapabilities,
    SessionMessage,
    SessionMessageChunk,
    SubagentSessionCapabilities,
    SubagentState,
    SubagentStateName,
    SubagentUpdate,
    TokenUsage,
)
from acp_sidecar.protocol.tool_call import ToolCallContentBlock, ToolCallProgress, ToolCallSession
from acp_sidecar.protocol.updates import SessionUpdate

if TYPE_CHECKING:
    from acp_sidecar.store.records import UsageRecord

CHILD_MARK: Final = "~task~"
"""Between the parent's id and the call's in a child's session id."""

CHILD_CAPABILITIES: Final = SubagentSessionCapabilities(cancel=SessionCancelCapabilities())
"""What a client may send for a child: ``session/cancel`` (it stops the child alone)."""


def child_session_id(parent_id: str, call_id: str) -> str:
    """The session id of the child that the call ``call_id`` of ``parent_id`` started."""
    return f"{parent_id}{CHILD_MARK}{call_id}"


def answer_message_id(child_id: str) -> str:
    """The id of the child's answer as the parent's transcript holds it."""
    return f"{child_id}~answer"


def announce(child_id: str, title: str) -> SubagentUpdate:
    """The parent's first ``subagent_update`` about a child: its title, what may be sent for
    it, and that it runs."""
    return SubagentUpdate(
        session_id=child_id,
        title=title,
        capabilities=CHILD_CAPABILITIES,
        state=SubagentState("running"),
    )


def state(
    child_id: str,
    name: SubagentStateName,
    stop_reason: str | None = None,
    usage: TokenUsage | None = None,
) -> SubagentUpdate:
    """The parent's ``subagent_update`` with the child's new state."""
    snapshot = SubagentState(name, stop_reason=stop_reason, usage=usage)
    return SubagentUpdate(session_id=child_id, state=snapshot)


def tokens_used(used: Iterable[UsageRecord]) -> TokenUsage | None:
    """What a child's model responses used, summed (``None``: none reported tokens)."""
    records = [record for record in used if record.counted]
    if not records:
        return None
    sent = sum(r.prompt_tokens for r in records)
    answered = sum(r.completion_tokens for r in records)
    cached = [r.cached_tokens for r in records if r.cached_tokens is not None]
    return TokenUsage(
        total_tokens=sent + answered,
        input_tokens=sent,
        output_tokens=answered,
        cached_read_tokens=sum(cached) if cached else None,
    )


def link(call_id: str, child_id: str) -> ToolCallProgress:
    """The task card's content: a link to the child."""
    return ToolCallProgress(tool_call_id=call_id, content=[ToolCallSession(session_id=child_id)])


def message(
    message_id: str, sender: str, recipient: str, blocks: Iterable[ContentBlock]
) -> Iterator[SessionUpdate]:
    """An inter-session message, on the session it is shown in: who sent it to whom, then
    its blocks."""
    yield SessionMessage(
        message_id=message_id, sender_session_id=sender, recipient_session_id=recipient
    )
    for block in blocks:
        yield SessionMessageChunk(message_id=message_id, content=block)


def task_card(update: SessionUpdate, parent_id: str, child_id: str) -> Iterator[SessionUpdate]:
    """An update of the task card as an opted-in client gets it: the link to the child kept
    in front of any content, and a completed card preceded by the child's answer, delivered to
    the parent as a message (the card's text)."""
    if not isinstance(update, ToolCallProgress) or update.content is None:
        yield update
        return
    if update.status == "completed":
        answer = [
            item.content
            for item in update.content
            if isinstance(item, ToolCallContentBlock) and isinstance(item.content, TextContentBlock)
        ]
        yield from message(answer_message_id(child_id), child_id, parent_id, answer)
    yield attrs.evolve(update, content=[ToolCallSession(session_id=child_id), *update.content])
