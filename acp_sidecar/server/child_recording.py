"""A child conversation's records (a subagent's), written to its parent's log as they happen,
each tagged with the child's session id: the parent's recorder does the writing, so a failed
write is reported and retried as the parent's are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from acp_sidecar.protocol.content import ContentBlock, TextContentBlock
from acp_sidecar.protocol.updates import AgentMessageChunk, AgentThoughtChunk, SessionUpdate
from acp_sidecar.server.recording import DecisionRecords, SessionRecorder, stored_blocks

if TYPE_CHECKING:
    from acp_sidecar.store import ChildRecordable, CompactionRecord, ToolCallRecord, UsageRecord
    from acp_sidecar.tools.result import ToolExecutionResult


class ChildRecorder(DecisionRecords):
    """A child conversation's records, written to its parent's log as they happen, each
    tagged with the child's session id; its text is kept whole per message, as the parent's
    writer keeps the parent's (written when the child's next record, or its end, comes)."""

    def __init__(self, parent: SessionRecorder, session_id: str) -> None:
        self._parent = parent
        self.session_id = session_id
        self._text: list[str] = []
        self._text_kind: Literal["message", "thought"] | None = None
        self._text_id: str | None = None

    def _append(self, record: ChildRecordable) -> None:
        from acp_sidecar.store import ChildRecord

        self._end_text()
        tagged = ChildRecord(self.session_id, record)
        self._parent._write(lambda w: w.append(tagged))

    def _end_text(self) -> None:
        if self._text_kind is None:
            return
        from acp_sidecar.store import AgentMessageRecord, AgentThoughtRecord, ChildRecord

        kind, self._text_kind = self._text_kind, None
        text, message_id = "".join(self._text), self._text_id
        self._text.clear()
        if not text:
            return
        record: ChildRecordable = (
            AgentMessageRecord(text=text, message_id=message_id)
            if kind == "message"
            else AgentThoughtRecord(text=text, message_id=message_id)
        )
        tagged = ChildRecord(self.session_id, record)
        self._parent._write(lambda w: w.append(tagged))

    def _chunk(
        self, kind: Literal["message", "thought"], text: str, message_id: str | None
    ) -> None:
        if self._text_kind != kind or self._text_id != message_id:
            self._end_text()
            self._text_kind, self._text_id = kind, message_id
        self._text.append(text)

    def prompt(self, blocks: Sequence[ContentBlock], message_id: str) -> None:
        """The job the parent sent, under the id it went out with."""
        from acp_sidecar.store import UserMessageRecord

        self._append(UserMessageRecord(content=stored_blocks(blocks), message_id=message_id))

    def update(self, update: SessionUpdate) -> None:
        """As :meth:`SessionRecorder.update`."""
        match update:
            case AgentMessageChunk(content=TextContentBlock(text=text), message_id=message_id):
                self._chunk("message", text, message_id)
            case AgentThoughtChunk(content=TextContentBlock(text=text), message_id=message_id):
                self._chunk("thought", text, message_id)
            case _:
                pass

    def notice(
        self, text: str, message_id: str | None = None, blocks: Sequence[ContentBlock] = ()
    ) -> None:
        """A notice told in the child's voice (``blocks``: shown after its text)."""
        from acp_sidecar.store import NoticeRecord

        content = stored_blocks(blocks)
        self._append(NoticeRecord(text=text, message_id=message_id, content=content))

    async def record_call_event(
        self, call: ToolCallRecord, result: ToolExecutionResult | None
    ) -> None:
        """The child's calls and results."""
        from acp_sidecar.store import ToolResultRecord

        self._append(call if result is None else ToolResultRecord(result=result))

    def keep(self, record: UsageRecord | CompactionRecord) -> None:
        """The child's usage (a compaction's summary is the child's context only: not kept)."""
        from acp_sidecar.store import UsageRecord

        if isinstance(record, UsageRecord):
            self._append(record)

    def end(self, stop_reason: str) -> None:
        """The child's work ended."""
        from acp_sidecar.store import TurnEndRecord

        self._append(TurnEndRecord(stop_reason=stop_reason))
