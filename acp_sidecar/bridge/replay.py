"""Stored records → the ``session/update`` stream that redraws a session (``session/load``,
``acp-sidecar replay``, the exports), in the form the loading client takes.

Invariants: every tool card goes through the translator with the stored values, so a replayed
card is the one drawn live; records are consumed as they are read (memory does not grow with
the log); a call the log holds no result for ends as interrupted, never left spinning; every
message chunk carries the id stored with its record; a record written before ids takes the id
of the record just before it when both drew the same kind of chunk (one message live), else
one derived from its position (:mod:`acp_sidecar.bridge.message_ids`).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any, assert_never, get_args

from acp_sidecar.bridge import subagents
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.message_ids import derived_message_id
from acp_sidecar.bridge.meter import usage_update
from acp_sidecar.bridge.modes import DEFAULT_MODE, MODE_IDS, ModeId
from acp_sidecar.bridge.notices import Paragraphs, UserMessage, user_updates
from acp_sidecar.bridge.translate import (
    ResultUpdate,
    ToolLookup,
    translate_call,
    translate_result,
)
from acp_sidecar.protocol.content import ContentBlock, TextContentBlock
from acp_sidecar.protocol.converter import from_wire
from acp_sidecar.protocol.errors import ProtocolParamsError
from acp_sidecar.protocol.initialize import ClientCapabilities, ClientSessionCapabilities
from acp_sidecar.protocol.updates import (
    AgentMessageChunk,
    AgentThoughtChunk,
    CompactionUpdate,
    CurrentModeUpdate,
    NoticeSeverity,
    SessionInfoUpdate,
    SessionUpdate,
    UserMessageChunk,
)
from acp_sidecar.store import (
    AgentMessageRecord,
    AgentThoughtRecord,
    ChildRecord,
    CompactionRecord,
    ConfigChangeRecord,
    DirectoriesChangeRecord,
    FileChangeRecord,
    GapRecord,
    HeaderRecord,
    ModeChangeRecord,
    NoticeRecord,
    PermissionAnswerRecord,
    PermissionAskedRecord,
    PermissionRememberedRecord,
    PermissionRuleRecord,
    Record,
    SessionRuleRecord,
    ToolCallRecord,
    ToolResultRecord,
    TurnEndRecord,
    UndoRecord,
    UsageRecord,
    UserMessageRecord,
    interrupted_result,
)
from acp_sidecar.tools.json_values import FrozenDict, thaw
from acp_sidecar.tools.presentation import ToolCallView

logger = logging.getLogger(__name__)


def known_mode(mode: str | None) -> ModeId:
    """A stored mode id as one of ours (unknown or absent → the default)."""
    return next((m for m in MODE_IDS if m == mode), DEFAULT_MODE)


def gap_text(reason: str) -> str:
    """What replay shows where records were lost."""
    return f"\n\n[Some of this session was not recorded here: {reason}]\n\n"


def replay_client(*, notices: bool = True, compaction: bool = True) -> ClientCapabilities:
    """The capabilities of a client that advertised ``session.notices`` and
    ``session.compaction`` (each unless false): what a replay outside an editor draws for."""
    session = ClientSessionCapabilities(
        notices={} if notices else None, compaction={} if compaction else None
    )
    return ClientCapabilities(session=session)


def known_severity(severity: str) -> NoticeSeverity:
    """A stored notice's severity as one of ACP's (unknown → ``info``)."""
    return next((known for known in get_args(NoticeSeverity) if known == severity), "info")


class _Transcript:
    """What replaying one session's records keeps: its open calls, notices held, paragraphs,
    compactions and the message chunk drawn last (the parent's, and each child's, apart)."""

    def __init__(
        self, session_id: str, lookup: ToolLookup, ctx: CardContext, client: ClientCapabilities
    ) -> None:
        self.session_id = session_id
        self.lookup = lookup
        self.ctx = ctx
        self.capabilities = client
        self.compactions_shown = client.shows_compaction
        self.open_calls: dict[str, tuple[ToolCallRecord, ToolCallView]] = {}
        self.told: list[UserMessage] = []
        """Notices told outside the conversation, held until another record: told together."""
        self.told_id = ""
        """The message id the notices held were told under (the first one's)."""
        self.paragraphs = Paragraphs()
        """The sidecar's own texts stand in paragraphs of their own, as they did live."""
        self.compactions = 0
        self.run: tuple[type[SessionUpdate], int, str] | None = None
        """The last message chunk drawn: its kind, its record's position and its id."""

    def message_id_of(self, kind: type[SessionUpdate], position: int, stored: str | None) -> str:
        # A record written before ids joins the message of the record just before it when
        # that one drew the same kind of chunk: live, that text was one message.
        run = self.run
        if stored:
            found = stored
        elif run is not None and run[0] is kind and run[1] == position - 1:
            found = run[2]
        else:
            found = derived_message_id(self.session_id, position)
        self.run = (kind, position, found)
        return found

    def interrupt_open_calls(self) -> Iterator[SessionUpdate]:
        lookup, ctx = self.lookup, self.ctx
        for call, view in self.open_calls.values():
            yield from translate_result(lookup, call, view, interrupted_result(call.call_id), ctx)
        self.open_calls.clear()

    def flush_told(self) -> Iterator[SessionUpdate]:
        if self.told:
            yield from user_updates(self.capabilities, self.told, self.paragraphs, self.told_id)
            self.told.clear()

    def call(self, record: ToolCallRecord) -> SessionUpdate:
        """The card a call opens (:meth:`feed` of a call, with no notice held)."""
        start, view = translate_call(self.lookup, record, self.ctx)
        self.open_calls[record.call_id] = (record, view)
        return start

    def result(self, record: ToolResultRecord) -> list[ResultUpdate]:
        """What a result sends: none for a call not open (:meth:`feed` of a result, with no
        notice held)."""
        result = record.result
        opened = self.open_calls.pop(result.call_id, None)
        if opened is None:
            return []
        call, view = opened
        return translate_result(self.lookup, call, view, result, self.ctx)

    def feed(self, position: int, record: Record) -> Iterator[SessionUpdate]:
        """The updates ``record`` draws (session state changes are the caller's)."""
        if self.told and not (isinstance(record, NoticeRecord) and record.severity is not None):
            yield from self.flush_told()
        paragraphs = self.paragraphs
        match record:  # the commonest records first: a case costs a class test
            case ToolCallRecord():
                yield self.call(record)
            case ToolResultRecord():
                yield from self.result(record)
            case UserMessageRecord(content=content, message_id=message_id):
                paragraphs.new_message()
                message_id = message_id or derived_message_id(self.session_id, position)
                for decoded in _prompt_blocks(content):
                    yield UserMessageChunk(content=decoded, message_id=message_id)
            case AgentMessageRecord(text=text, message_id=message_id):
                message_id = self.message_id_of(AgentMessageChunk, position, message_id)
                chunk = AgentMessageChunk(
                    content=TextContentBlock(text=text), message_id=message_id
                )
                yield paragraphs.shown(chunk)
            case NoticeRecord(text=text, severity=severity, message_id=message_id):
                if severity is None:  # told in the agent's voice, to every client alike
                    message_id = self.message_id_of(AgentMessageChunk, position, message_id)
                    shown = paragraphs.notice(text)
                    yield AgentMessageChunk(
                        content=TextContentBlock(text=shown), message_id=message_id
                    )
                    for block in record.content:  # what it links to, in the same message
                        try:
                            linked: ContentBlock = from_wire(thaw(block), ContentBlock)  # type: ignore[arg-type]
                            yield AgentMessageChunk(content=linked, message_id=message_id)
                        except ProtocolParamsError as exc:
                            logger.warning("skipped a stored notice block: %s", exc)
                else:
                    message_id = message_id or derived_message_id(self.session_id, position)
                    self.told_id = self.told_id if self.told else message_id
                    self.told.append(UserMessage(known_severity(severity), text))
            case AgentThoughtRecord(text=text, message_id=message_id):
                message_id = self.message_id_of(AgentThoughtChunk, position, message_id)
                yield AgentThoughtChunk(content=TextContentBlock(text=text), message_id=message_id)
            case GapRecord(reason=reason):
                shown = paragraphs.notice(gap_text(reason))
                yield AgentMessageChunk(
                    content=TextContentBlock(text=shown),
                    message_id=self.message_id_of(AgentMessageChunk, position, None),
                )
            case TurnEndRecord():
                yield from self.interrupt_open_calls()
            case UsageRecord(context_window=size) if size is not None:
                yield usage_update(record, size)
            case CompactionRecord(summary=summary):
                self.compactions += 1
                if self.compactions_shown:
                    yield CompactionUpdate(
                        compaction_id=f"compaction_replayed_{self.compactions}",
                        status="completed",
                        summary=[TextContentBlock(text=summary)],
                    )
            case (
                HeaderRecord()
                | ModeChangeRecord()
                | ConfigChangeRecord()
                | DirectoriesChangeRecord()
                | UsageRecord()
                | PermissionAskedRecord()
                | PermissionAnswerRecord()
                | PermissionRememberedRecord()
                | FileChangeRecord()
                | UndoRecord()
                | PermissionRuleRecord()
                | SessionRuleRecord()
                | ChildRecord()
            ):
                pass  # session state, decisions that were a request and its answer live, a
                # file's hashes (never its blobs: the undo's own answer tells it), or a
                # child's record (the caller's)
            case _:
                assert_never(record)

    def finish(self) -> Iterator[SessionUpdate]:
        yield from user_updates(self.capabilities, self.told, self.paragraphs, self.told_id)
        self.told.clear()
        yield from self.interrupt_open_calls()


def _prompt_blocks(content: Iterable[Any]) -> Iterator[ContentBlock]:
    for block in content:
        # A text block with nothing else (most prompts' only one), as from_wire decodes it.
        text = block.get("text") if type(block) is FrozenDict and len(block) == 2 else None
        if type(text) is str and block.get("type") == "text":
            yield TextContentBlock(text=text)
            continue
        try:
            decoded: ContentBlock = from_wire(thaw(block), ContentBlock)  # type: ignore[arg-type]
        except ProtocolParamsError as exc:
            logger.warning("skipped a stored prompt block: %s", exc)
            continue
        yield decoded


def replay_updates(
    header: HeaderRecord,
    records: Iterable[Record],
    lookup: ToolLookup,
    ctx: CardContext,
    client: ClientCapabilities | None = None,
) -> Iterator[SessionUpdate]:
    """The updates that redraw a stored session, in order, ending with its mode, for a
    client with the capabilities ``client`` (``None``: one that advertised no session
    extension); a child's records draw nothing here (see :func:`replay_sessions`)."""
    capabilities = ClientCapabilities() if client is None else client
    transcript = _Transcript(header.session_id, lookup, ctx, capabilities)
    mode = known_mode(header.mode)
    feed, call, result = transcript.feed, transcript.call, transcript.result
    for position, record in enumerate(records, 1):
        # A tool record with no notice held draws what feed would, without the generator
        # feed makes for every record: they are most of a log.
        if type(record) is ToolCallRecord and not transcript.told:
            yield call(record)
        elif type(record) is ToolResultRecord and not transcript.told:
            yield from result(record)
        else:
            if type(record) is ModeChangeRecord:
                mode = known_mode(record.mode)
            yield from feed(position, record)
    yield from transcript.finish()
    yield CurrentModeUpdate(current_mode_id=mode)


def replay_sessions(
    header: HeaderRecord,
    records: Iterable[Record],
    lookup: ToolLookup,
    ctx: CardContext,
    client: ClientCapabilities,
) -> Iterator[tuple[str, SessionUpdate]]:
    """As :func:`replay_updates`, each update with the session it is for, to a client that
    takes subagents: a child's records redraw it under its own id, announced and linked to
    its task card as they were live (:mod:`acp_sidecar.bridge.subagents`)."""
    parent_id = header.session_id
    parent = _Transcript(parent_id, lookup, ctx, client)
    children = _Children(parent)
    mode = known_mode(header.mode)
    for position, record in enumerate(records, 1):
        if type(record) is ChildRecord:
            yield from children.feed(position, record)
            continue
        if type(record) is ModeChangeRecord:
            mode = known_mode(record.mode)
        if type(record) is TurnEndRecord:
            yield from children.settle(record.stop_reason)
        if type(record) is ToolResultRecord and record.call_id in children.by_call:
            child_id = children.by_call.pop(record.call_id)
            for update in parent.feed(position, record):
                for shown in subagents.task_card(update, parent_id, child_id):
                    yield parent_id, shown
            continue
        for update in parent.feed(position, record):
            yield parent_id, update
    yield from children.settle("cancelled")
    for update in parent.finish():
        yield parent_id, update
    yield parent_id, CurrentModeUpdate(current_mode_id=mode)


class _Children:
    """The children a parent's records name, drawn as they were live."""

    def __init__(self, parent: _Transcript) -> None:
        self.parent = parent
        self.drawn: dict[str, _Transcript] = {}
        self.by_call: dict[str, str] = {}
        """The task calls with a child, and the child's id."""
        self.idle: set[str] = set()
        """The children whose turn ended."""
        self.used: dict[str, list[UsageRecord]] = {}

    def feed(self, position: int, record: ChildRecord) -> Iterator[tuple[str, SessionUpdate]]:
        """The updates a child's record draws, the child announced first."""
        parent, parent_id = self.parent, self.parent.session_id
        child_id, inner = record.session_id, record.record
        child = self.drawn.get(child_id)
        if child is None:
            started = subagents.child_session_id
            calls = (c for c in parent.open_calls if started(parent_id, c) == child_id)
            call_id = next(calls, None)
            title = "Subagent"
            if call_id is not None:
                self.by_call[call_id] = child_id
                title = _task_title(parent.open_calls[call_id][0])
            child = self.drawn[child_id] = _Transcript(
                child_id, parent.lookup, parent.ctx, parent.capabilities
            )
            yield parent_id, subagents.announce(child_id, title)
            if call_id is not None:
                yield parent_id, subagents.link(call_id, child_id)
        match inner:
            case UserMessageRecord(content=content, message_id=message_id):
                child.paragraphs.new_message()
                message_id = message_id or derived_message_id(child_id, position)
                for update in subagents.message(
                    message_id, parent_id, child_id, _prompt_blocks(content)
                ):
                    yield child_id, update
            case PermissionAskedRecord():
                yield parent_id, subagents.state(child_id, "requires_action")
            case PermissionAnswerRecord():
                yield parent_id, subagents.state(child_id, "running")
            case TurnEndRecord(stop_reason=stop_reason):
                yield from self._end(child_id, stop_reason)
            case _:
                if type(inner) is UsageRecord:
                    self.used.setdefault(child_id, []).append(inner)
                for update in child.feed(position, inner):
                    yield child_id, update

    def settle(self, stop_reason: str) -> Iterator[tuple[str, SessionUpdate]]:
        """Each child still running when its parent's turn ended (a crash, a cancel, a
        fork's cut) drawn to its end and shown idle with the parent's stop reason, as a
        client saw it live."""
        for child_id in [c for c in self.drawn if c not in self.idle]:
            yield from self._end(child_id, stop_reason)

    def _end(self, child_id: str, stop_reason: str) -> Iterator[tuple[str, SessionUpdate]]:
        self.idle.add(child_id)
        for update in self.drawn[child_id].finish():
            yield child_id, update
        used = subagents.tokens_used(self.used.pop(child_id, ()))
        yield self.parent.session_id, subagents.state(child_id, "idle", stop_reason, used)


def _task_title(call: ToolCallRecord) -> str:
    """The child's title: its task's description (the call's arguments)."""
    arguments = call.arguments
    described = arguments.get("description") if isinstance(arguments, FrozenDict) else None
    return described if isinstance(described, str) and described else "Subagent"


def session_info(title: str | None, updated_at: datetime) -> SessionInfoUpdate:
    """The ``session_info_update`` that ends a load: the session's title (its first prompt's,
    when it has one) and its last activity, as ``session/list`` shows them."""
    from acp_sidecar.store import format_timestamp

    return SessionInfoUpdate(title=title, updated_at=format_timestamp(updated_at))


def load_notifications(
    session_id: str,
    header: HeaderRecord,
    records: Iterable[Record],
    lookup: ToolLookup,
    ctx: CardContext,
    info: SessionInfoUpdate | None = None,
    client: ClientCapabilities | None = None,
) -> Iterator[dict[str, Any]]:
    """The exact ``session/update`` messages ``session/load`` sends for a stored session to a
    client with the capabilities ``client``: the replay of its records, then ``info``
    (:func:`session_info`) when given."""
    from acp_sidecar.protocol.converter import to_wire
    from acp_sidecar.protocol.updates import SessionNotification

    tail: tuple[tuple[str, SessionUpdate], ...] = () if info is None else ((session_id, info),)
    if client is not None and client.takes_subagents:
        replayed: Iterable[tuple[str, SessionUpdate]] = replay_sessions(
            header, records, lookup, ctx, client
        )
    else:
        replayed = ((session_id, u) for u in replay_updates(header, records, lookup, ctx, client))
    for sent_to, update in itertools.chain(replayed, tail):
        yield {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": to_wire(SessionNotification(session_id=sent_to, update=update)),
        }
