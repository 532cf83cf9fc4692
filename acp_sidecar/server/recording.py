"""A session's log as the server keeps it: what each turn produces, written as it happens.

Invariants:
- A new session's log is created (header written and synced, lock taken) right after
  ``session/new`` is answered, in a worker thread (:meth:`SessionRecorder.create_soon`): a
  session that is never prompted can still be loaded by id, yet neither the store's import
  nor its first write sits on the cold-start path. Whatever needs the log first (a prompt, a
  mode switch, a load, closing) waits for that creation rather than racing it.
- Everything a turn produces is recorded in order: the prompt, each agent message and thought
  (coalesced per message), each notice (the sidecar's own word to the user, which the model's
  history leaves out), each tool call and result, the turn's end. A failure to write is
  logged and the turn goes on: losing the log must not lose the user's turn.
"""

from __future__ import annotations

import asyncio
import logging
import threading
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
        self._opening = threading.Lock()
        """Held while the log is created, so only one thread creates it."""
        self._closed = False

    @property
    def _store(self) -> SessionStore:
        return self._store_source()

    def writer(self) -> SessionWriter | None:
        """The open writer, creating the log if it is not yet (``None`` once writing failed)."""
        if self._writer is not None or self._failed:
            return self._writer
        with self._opening:
            if self._writer is None and not self._failed and not self._closed:
                from acp_sidecar.store import StoreError

                try:
                    self._writer = self._store.create(self._session_id, self._cwd, mode=self._mode)
                except (StoreError, OSError):
                    self._fail("could not create the session log")
        return self._writer

    async def create_soon(self) -> None:
        """Create the log in a worker thread (the event loop keeps serving meanwhile)."""
        await asyncio.to_thread(self.writer)

    def flush(self) -> None:
        """Make sure the log exists and holds everything recorded so far (for reading it)."""
        self._write(lambda w: w.end_message())

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
        """Record a switch of mode (a log not created yet will carry it in its header)."""
        with self._opening:  # a creation under way finishes first, with the mode it read
            self._mode = mode
            created = self._writer is not None
        if created:
            self._write(lambda w: w.mode_change(mode))

    def end_turn(self, stop_reason: str) -> None:
        """Record the turn's end (and sync, per the store's policy)."""
        self._write(lambda w: w.end_turn(stop_reason))

    def close(self) -> None:
        """Flush and close the log (after its creation, if that is under way); a log not yet
        created is not created any more."""
        with self._opening:
            self._closed = True
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
