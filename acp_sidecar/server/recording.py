"""A session's log as the server keeps it: what each turn produces, written as it happens.

Invariants:
- The log is opened on first use (a new session's header is written then), so neither the
  store's import nor its first write sits on the ``session/new`` cold-start path.
- Everything a turn produces is recorded in order: the prompt, each agent message and thought
  (coalesced per message), each notice (the sidecar's own word to the user, which the model's
  history leaves out), each tool call and result, the turn's end. A failure to write is
  logged and the turn goes on: losing the log must not lose the user's turn.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from acp_sidecar.protocol.content import ContentBlock, TextContentBlock
from acp_sidecar.protocol.converter import to_wire
from acp_sidecar.protocol.updates import AgentMessageChunk, AgentThoughtChunk, SessionUpdate

if TYPE_CHECKING:
    from acp_sidecar.bridge.translate import ToolCallEvent
    from acp_sidecar.store import HistoryItem, SessionStore, SessionWriter
    from acp_sidecar.tools.execution import ToolExecutionResult

logger = logging.getLogger(__name__)


class SessionRecorder:
    """Writes one session's log through its :class:`~acp_sidecar.store.SessionWriter`."""

    def __init__(
        self,
        store: Callable[[], SessionStore],
        session_id: str,
        cwd: str,
        mode: str,
        *,
        writer: SessionWriter | None = None,
    ) -> None:
        self._store_source = store
        self._session_id = session_id
        self._cwd = cwd
        self._mode = mode
        self._writer = writer
        self._failed = False

    @property
    def _store(self) -> SessionStore:
        return self._store_source()

    def writer(self) -> SessionWriter | None:
        """The open writer, creating the log on first use (``None`` once writing failed)."""
        if self._writer is None and not self._failed:
            from acp_sidecar.store import StoreError

            try:
                self._writer = self._store.create(self._session_id, self._cwd, mode=self._mode)
            except (StoreError, OSError):
                self._fail("could not create the session log")
        return self._writer

    def history(self) -> tuple[HistoryItem, ...]:
        """The conversation so far, read back from the log."""
        from acp_sidecar.store import History, StoreError

        writer = self.writer()
        if writer is None:
            return ()
        try:
            writer.end_message()
            with self._store.open_log(self._session_id) as log:
                return tuple(History(log))
        except (StoreError, OSError):
            logger.exception("could not read the history of session %s", self._session_id)
            return ()

    def prompt(self, blocks: Sequence[ContentBlock]) -> None:
        """Record the user's prompt as the ACP content-block JSON it arrived as."""
        self._write(lambda w: w.user_message([to_wire(block) for block in blocks]))

    def update(self, update: SessionUpdate) -> None:
        """Record what an update adds to the conversation (agent text and thoughts)."""
        match update:
            case AgentMessageChunk(content=TextContentBlock(text=text)):
                self._write(lambda w: w.agent_text(text))
            case AgentThoughtChunk(content=TextContentBlock(text=text)):
                self._write(lambda w: w.agent_thought(text))
            case _:
                pass  # tool cards are recorded as calls and results

    def notice(self, text: str) -> None:
        """Record a notice: shown as an agent message, never sent to a model as one."""
        self._write(lambda w: w.notice(text))

    async def record_call_event(
        self, event: ToolCallEvent, result: ToolExecutionResult | None
    ) -> None:
        """The bridge's event sink: a tool call, then its result."""
        writer = self.writer()
        if writer is not None:
            try:
                await writer.record_call_event(event, result)
            except Exception:
                self._fail("could not record a tool call")

    def mode_change(self, mode: str) -> None:
        """Record a switch of mode (before the log exists, its header will carry it)."""
        self._mode = mode
        if self._writer is not None:
            self._write(lambda w: w.mode_change(mode))

    def end_turn(self, stop_reason: str) -> None:
        """Record the turn's end (and sync, per the store's policy)."""
        self._write(lambda w: w.end_turn(stop_reason))

    def close(self) -> None:
        """Flush and close the log."""
        if self._writer is not None:
            try:
                self._writer.close()
            except Exception:
                logger.exception("closing the log of session %s failed", self._session_id)

    def _write(self, action: Callable[[SessionWriter], object]) -> None:
        writer = self.writer()
        if writer is None:
            return
        try:
            action(writer)
        except Exception:
            self._fail("could not write to the session log")

    def _fail(self, what: str) -> None:
        logger.exception("%s of session %s; the session goes on unrecorded", what, self._session_id)
        self._failed = True
