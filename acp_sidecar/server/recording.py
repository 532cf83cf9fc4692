"""A session's log as the server keeps it: what each turn produces, written as it happens.

The log is created in a worker thread right after ``session/new`` answers
(:meth:`SessionRecorder.create_soon`), off the cold-start path; whatever needs it first waits.
A failed write never stops the turn and is never silent: the user is told (not recorded), later
records retry, and the first that succeeds is preceded by a gap marker. The session's claim is
kept until :meth:`SessionRecorder.close`, also while :class:`~acp_sidecar.server.held.HeldLogs`
has released its log. Failure reports go out on the event loop's thread only.
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
from acp_sidecar.server.held import HeldLogs

if TYPE_CHECKING:
    from acp_sidecar.bridge.rules import Rule, Verdict
    from acp_sidecar.store import (
        ChildRecordable,
        CompactionRecord,
        FileChangeRecord,
        HistoryItem,
        SessionClaim,
        SessionStore,
        SessionWriter,
        ToolCallRecord,
        UndoRecord,
        UsageRecord,
    )
    from acp_sidecar.store.records import PermissionAnswer
    from acp_sidecar.tools.json_values import FrozenDict
    from acp_sidecar.tools.result import ToolExecutionResult

logger = logging.getLogger(__name__)


class DecisionRecords:
    """The permission decisions a recorder logs, each one record given to :meth:`_append`."""

    def _append(self, record: ChildRecordable) -> None:
        raise NotImplementedError

    def permission_asked(self, call_id: str, tool: str, options: Sequence[str]) -> None:
        """Record that the user is asked about a call (the option ids offered)."""
        from acp_sidecar.store import PermissionAskedRecord

        self._append(PermissionAskedRecord(call_id=call_id, tool=tool, options=tuple(options)))

    def permission_answered(self, call_id: str, tool: str, answer: PermissionAnswer) -> None:
        """Record the user's answer about a call."""
        from acp_sidecar.store import PermissionAnswerRecord

        self._append(PermissionAnswerRecord(call_id=call_id, tool=tool, answer=answer))

    def permission_ruled(self, call_id: str, tool: str, verdict: Verdict, rule: Rule) -> None:
        """Record that a permission rule decided a call."""
        from acp_sidecar.store import PermissionRuleRecord

        source = str(rule.origin)
        ruled = PermissionRuleRecord(
            call_id=call_id, tool=tool, verdict=verdict, rule=rule.text, source=source
        )
        self._append(ruled)


class SessionRecorder(DecisionRecords):
    """Writes one session's log through its :class:`~acp_sidecar.store.SessionWriter`."""

    def __init__(
        self,
        store: Callable[[], SessionStore],
        session_id: str,
        cwd: str,
        mode: str,
        *,
        held: HeldLogs | None = None,
        tell: Callable[[str], None] | None = None,
        writer: SessionWriter | None = None,
        claim: SessionClaim | None = None,
        additional_directories: tuple[str, ...] = (),
    ) -> None:
        """``held``: the logs held open with this one (default: only this one); ``tell``:
        shows the user a message now (the server sends an agent message; default: the
        message is only logged, for callers without a client); ``writer`` and ``claim``: the
        log already open and the session's claim (released on :meth:`close`);
        ``additional_directories``: the session's extra roots, for the header of a log not
        created yet."""
        self._store_source = store
        self._session_id = session_id
        self._cwd = cwd
        self._mode = mode
        self._directories = additional_directories
        self._held = HeldLogs(1) if held is None else held
        self._tell = logger.warning if tell is None else tell
        """Shows the user a message now (an agent message; called on the loop's thread)."""
        self._writer = writer
        self._claim = claim
        """Holds the session for this process, from its log's first opening to close."""
        self._created = writer is not None
        """Whether the log exists on disk (from then on it is re-opened, never created)."""
        self._lost: str | None = None
        """Why records were lost since the last one written (a gap marker goes first)."""
        self._failing = False
        """Whether the user was told recording fails, and not yet that it resumed."""
        self._untold: list[str] = []
        self._opening = threading.Lock()
        """Held while the log is created, opened or released, by one thread at a time."""
        self._closed = False
        self._turn = False
        """Whether a turn is being recorded (its prompt written, not yet its end)."""
        if writer is not None:
            self._held.touch(self)

    @property
    def _store(self) -> SessionStore:
        return self._store_source()

    def _open(self) -> SessionWriter | None:
        """The open writer, creating or re-opening the log if needed (any thread); ``None``
        when that failed (the reason is kept for :meth:`_report`) or the recorder is closed."""
        writer = self._writer
        if writer is not None:
            # The common case, once per streamed chunk, so no lock: an open writer is only
            # ever taken away on the loop's thread, the thread that uses it.
            return writer
        from acp_sidecar.store import StoreError

        with self._opening:
            if self._writer is not None or self._closed:
                return self._writer
            try:
                store = self._store
                if self._claim is None:
                    self._claim = store.claim(self._session_id)
                if self._created:
                    self._writer = store.reopen(self._session_id, claim=self._claim)
                else:
                    self._writer = store.create(
                        self._session_id,
                        self._cwd,
                        mode=self._mode,
                        additional_directories=self._directories,
                        claim=self._claim,
                    )
                    self._created = True
            except (StoreError, OSError) as exc:
                what = "re-open" if self._created else "create"
                self._problem(f"could not {what} the session log", exc)
            return self._writer

    def writer(self) -> SessionWriter | None:
        """The open writer (on the loop's thread), creating or re-opening the log if needed;
        ``None`` when that failed (the user is told)."""
        writer = self._writer  # open: _open's common case, without its call
        if writer is None:
            writer = self._open()
        if writer is not None:
            self._held.touch(self)
        if self._untold:
            self._report()
        return writer

    async def create_soon(self) -> None:
        """Create the log in a worker thread (the event loop keeps serving meanwhile)."""
        writer = await asyncio.to_thread(self._open)
        if writer is not None and not self._closed:
            self._held.touch(self)
        self._report()

    @property
    def busy(self) -> bool:
        """Whether a turn is being recorded (:class:`HeldLogs` releases such logs last)."""
        return self._turn

    def release(self) -> None:
        """Write what is pending, sync, unlock and close the log; it re-opens on next use.

        Called on the loop's thread (by :class:`HeldLogs` while another session is used, or
        after a failed write); a failure is told to this session's user at once."""
        with self._opening:
            writer, self._writer = self._writer, None
        if writer is not None:
            try:
                writer.close()
            except Exception as exc:
                self._problem("could not write the session log before releasing it", exc)
                self._report()

    def flush(self) -> None:
        """Make sure the log exists and holds everything recorded so far (for reading it)."""
        self._write(lambda w: w.end_message())

    def history(self) -> tuple[HistoryItem, ...]:
        """The conversation so far, read back from the log."""
        from acp_sidecar.store import History, StoreError

        self.flush()
        if self._writer is None:
            return ()
        try:
            with self._store.open_log(self._session_id) as log:
                return tuple(History(log))
        except (StoreError, OSError):
            logger.exception("could not read the history of session %s", self._session_id)
            return ()

    def prompt(
        self,
        blocks: Sequence[ContentBlock],
        message_id: str | None = None,
        command: str | None = None,
    ) -> None:
        """Record the user's prompt as the ACP content-block JSON it arrived as, under the
        message id the agent gave it; ``command``: the session command it runs (its turn is
        kept out of every model's history)."""
        self._turn = True
        wire = [to_wire(block) for block in blocks]
        self._write(lambda w: w.user_message(wire, message_id, command))

    def update(self, update: SessionUpdate) -> None:
        """Record what an update adds to the conversation (agent text and thoughts, with the
        id of the message they are part of)."""
        match update:
            case AgentMessageChunk(content=TextContentBlock(text=text), message_id=message_id):
                self._write(lambda w: w.agent_text(text, message_id))
            case AgentThoughtChunk(content=TextContentBlock(text=text), message_id=message_id):
                self._write(lambda w: w.agent_thought(text, message_id))
            case _:
                pass  # tool cards are recorded as calls and results

    def notice(
        self,
        text: str,
        severity: str | None = None,
        message_id: str | None = None,
        blocks: Sequence[ContentBlock] = (),
    ) -> None:
        """Record a notice, never sent to a model as something it said: told in the agent's
        voice, or (``severity``) outside the conversation (see ``NoticeRecord.severity``);
        ``message_id``: the agent message it was told in; ``blocks``: shown after its text."""
        wire = [to_wire(block) for block in blocks]
        self._write(lambda w: w.notice(text, severity, message_id, wire))

    async def record_call_event(
        self, call: ToolCallRecord, result: ToolExecutionResult | None
    ) -> None:
        """The bridge's event sink: a tool call, then its result."""
        if result is None:
            self._write(lambda w: w.append(call))
        else:
            self._write(lambda w: w.tool_result(result))

    def keep(self, record: UsageRecord | CompactionRecord) -> None:
        """Record what the driver learned about the context (usage and cost, a summary)."""
        self._write(lambda w: w.append(record))

    def undo_record(self, record: FileChangeRecord | UndoRecord) -> None:
        """Record a file a call (or an undo) changed, or an undo itself."""
        self._write(lambda w: w.append(record))

    def session_rule(self, rule: Rule, removed: bool) -> None:
        """Record a rule of the session's own kept (or, ``removed``, taken out), so a load,
        resume or fork has it again."""
        from acp_sidecar.store import SessionRuleRecord

        kept = SessionRuleRecord(rule=rule.text, risk=rule.risk, removed=removed)
        self._write(lambda w: w.append(kept))

    def mode_change(self, mode: str) -> None:
        """Record a switch of mode (a log not created yet will carry it in its header)."""
        with self._opening:  # a creation under way finishes first, with the mode it read
            self._mode = mode
            created = self._created
        if created:
            self._write(lambda w: w.mode_change(mode))

    def directories_change(self, additional_directories: tuple[str, ...]) -> None:
        """Record that the session's extra roots are now ``additional_directories``."""
        self._write(lambda w: w.directories_change(additional_directories))

    def config_change(self, config_id: str, value: str) -> None:
        """Record a change of one config option (creating the log if it is not yet)."""
        self._write(lambda w: w.config_change(config_id, value))

    def _append(self, record: ChildRecordable) -> None:
        self._write(lambda w: w.append(record))

    def end_turn(self, stop_reason: str) -> None:
        """Record the turn's end (and sync, per the store's policy)."""
        self._turn = False
        self._write(lambda w: w.end_turn(stop_reason))

    def close(self) -> None:
        """Flush and close the log, creating it first if that has not happened yet (it is
        created after ``session/new`` is answered, and every answered session is stored),
        and let the session go (its claim)."""
        if not self._created:
            self._open()
        with self._opening:
            self._closed = True
        self._held.forget(self)
        with self._opening:
            writer, self._writer = self._writer, None
            claim, self._claim = self._claim, None
        try:
            if writer is not None:
                writer.close()
        except Exception:
            logger.exception("closing the log of session %s failed", self._session_id)
        finally:
            if claim is not None:
                claim.release()

    def _write(self, action: Callable[[SessionWriter], object]) -> None:
        if self._closed:
            return
        writer = self.writer()
        if writer is None:
            return  # the record is lost: _open kept why, and the user was told
        try:
            if self._lost is not None:
                writer.gap(self._lost)
                self._lost = None
            action(writer)
        except Exception as exc:
            self._problem("could not write to the session log", exc)
            self.release()  # a fresh descriptor on the next try; pending text is lost too
        else:
            if self._failing:
                self._failing = False
                self._untold.append(
                    "Recording of this session resumed; its log marks where records are missing."
                )
        if self._untold:
            self._report()

    def _problem(self, what: str, exc: BaseException) -> None:
        """Records are being lost (any thread): keep why, for the gap marker and the user."""
        logger.warning(
            "%s of session %s: %s; recording is retried with the next record",
            what,
            self._session_id,
            exc,
        )
        self._lost = f"{what}: {exc}"
        if not self._failing:
            self._failing = True
            self._untold.append(
                f"Warning: this session is not being recorded ({what}: {exc}). What happens "
                "now may be missing when the session is loaded again; recording is retried "
                "with every update."
            )

    def _report(self) -> None:
        """Tell the user what went wrong or right since the last report (loop thread only)."""
        while self._untold:
            self._tell(self._untold.pop(0))


def stored_blocks(blocks: Sequence[ContentBlock]) -> tuple[FrozenDict, ...]:
    """ACP content blocks as a record holds them."""
    from acp_sidecar.tools.json_values import FrozenDict, freeze_json

    frozen = freeze_json([to_wire(block) for block in blocks])
    assert isinstance(frozen, tuple)
    return tuple(block for block in frozen if isinstance(block, FrozenDict))
