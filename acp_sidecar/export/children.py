"""A session's children (subagents) in an export: each drawn inside its task card, as a short
transcript above the child's answer (its job, its tool calls and how they ended, what it said),
so a shared transcript shows what the delegated work did without a session view of its own."""

from __future__ import annotations

import attrs

from acp_sidecar.protocol.content import TextContentBlock
from acp_sidecar.protocol.subagents import (
    SessionMessageChunk,
    SubagentState,
    SubagentUpdate,
    TokenUsage,
)
from acp_sidecar.protocol.tool_call import (
    ToolCallContent,
    ToolCallContentBlock,
    ToolCallProgress,
    ToolCallSession,
    ToolCallStart,
)
from acp_sidecar.protocol.updates import (
    AgentMessageChunk,
    SessionUpdate,
)


@attrs.define
class ChildTranscript:
    """What one child did, folded from its replayed updates."""

    job: list[str] = attrs.Factory(list)
    calls: dict[str, list[str]] = attrs.Factory(dict)
    """Each call's ``[title, status]``, in call order."""
    said: list[str] = attrs.Factory(list)
    used: TokenUsage | None = None

    def hear(self, update: SessionUpdate) -> None:
        match update:
            case SessionMessageChunk(content=TextContentBlock(text=text)):
                self.job.append(text)
            case ToolCallStart(tool_call_id=call_id, title=title, status=status):
                self.calls[call_id] = [title, status or "pending"]
            case ToolCallProgress(tool_call_id=call_id, title=title, status=status):
                call = self.calls.get(call_id)
                if call is not None:
                    call[0] = title or call[0]
                    call[1] = status or call[1]
            case AgentMessageChunk(content=TextContentBlock(text=text)):
                self.said.append(text)
            case SubagentUpdate(state=SubagentState(usage=TokenUsage() as used)):
                self.used = used
            case _:
                pass

    def text(self) -> str:
        lines = ["Subagent's job:", "", *("> " + line for line in "".join(self.job).splitlines())]
        if self.calls:
            lines += ["", "Its tool calls:", ""]
            lines += [f"- {title} ({status})" for title, status in self.calls.values()]
        said = "".join(self.said).strip()
        if said:
            lines += ["", "It said:", "", said]
        if self.used is not None:
            used = self.used
            lines += [
                "",
                f"It used {used.total_tokens:,} tokens "
                f"({used.input_tokens:,} in, {used.output_tokens:,} out).",
            ]
        return "\n".join(lines)


def drawn_in_card(
    update: ToolCallProgress, children: dict[str, ChildTranscript]
) -> ToolCallProgress | None:
    """A task card's update with each link to a child replaced by the child's transcript;
    ``None`` for an update that only linked it (the transcript is drawn once it is whole)."""
    content = update.content or []
    if not any(isinstance(item, ToolCallSession) for item in content):
        return update
    drawn: list[ToolCallContent] = []
    for item in content:
        if isinstance(item, ToolCallSession):
            if update.status in ("completed", "failed"):
                child = children.get(item.session_id, ChildTranscript())
                drawn.append(ToolCallContentBlock(content=TextContentBlock(text=child.text())))
        else:
            drawn.append(item)
    if not drawn:
        return None
    return attrs.evolve(update, content=drawn)
