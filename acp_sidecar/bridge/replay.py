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

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.message_ids import derived_message_id
from acp_sidecar.bridge.meter import usage_update
from acp_sidecar.bridge.modes import DEFAULT_MODE, MODE_IDS, ModeId
from acp_sidecar.bridge.notices import Paragraphs, UserMessage, user_updates
from acp_sidecar.bridge.translate import ToolLookup, translate_call, translate_result
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
    CompactionRecord,
    ConfigChangeRecord,
    DirectoriesChangeRecord,
    GapRecord,
    HeaderRecord,
    ModeChangeRecord,
    NoticeRecord,
    PermissionAnswerRecord,
    PermissionAskedRecord,
    PermissionRememberedRecord,
    Record,
    ToolCallRecord,
    ToolResultRecord,
    TurnEndRecord,
    UsageRecord,
    UserMessageRecord,
    interrupted_result,
)
from acp_sidecar.tools.json_values import thaw
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


def replay_updates(
    header: HeaderRecord,
    records: Iterable[Record],
    lookup: ToolLookup,
    ctx: CardContext,
    client: ClientCapabilities | None = None,
) -> Iterator[SessionUpdate]:
    """The updates that redraw a stored session, in order, ending with its mode, for a
    client with the capabilities ``client`` (``None``: one that advertised no session
    extension)."""
    capabilities = ClientCapabilities() if client is None else client
    compactions_shown = capabilities.shows_compaction
    mode = known_mode(header.mode)
    open_calls: dict[str, tuple[ToolCallRecord, ToolCallView]] = {}
    told: list[UserMessage] = []
    """Notices told outside the conversation, held until another record: told together."""
    told_id = ""
    """The message id the notices held were told under (the first one's)."""
    session_id = header.session_id
    paragraphs = Paragraphs()
    """The sidecar's own texts stand in paragraphs of their own, as they did live."""
    compactions = 0
    run: tuple[type[SessionUpdate], int, str] | None = None
    """The last message chunk drawn: its kind, its record's position and its id."""

    def message_id_of(kind: type[SessionUpdate], position: int, stored: str | None) -> str:
        # A record written before ids joins the message of the record just before it when
        # that one drew the same kind of chunk: live, that text was one message.
        nonlocal run
        if stored:
            found = stored
        elif run is not None and run[0] is kind and run[1] == position - 1:
            found = run[2]
        else:
            found = derived_message_id(session_id, position)
        run = (kind, position, found)
        return found

    def interrupt_open_calls() -> Iterator[SessionUpdate]:
        for call, view in open_calls.values():
            yield from translate_result(lookup, call, view, interrupted_result(call.call_id), ctx)
        open_calls.clear()

    for position, record in enumerate(records, 1):
        if told and not (isinstance(record, NoticeRecord) and record.severity is not None):
            yield from user_updates(capabilities, told, paragraphs, told_id)
            told.clear()
        match record:  # the commonest records first: a case costs a class test
            case ToolCallRecord(call_id=call_id):
                start, view = translate_call(lookup, record, ctx)
                open_calls[call_id] = (record, view)
                yield start
            case ToolResultRecord(result=result):
                opened = open_calls.pop(result.call_id, None)
                if opened is not None:
                    call, view = opened
                    yield from translate_result(lookup, call, view, result, ctx)
            case UserMessageRecord(content=content, message_id=message_id):
                paragraphs.new_message()
                message_id = message_id or derived_message_id(session_id, position)
                for block in content:
                    try:
                        decoded: ContentBlock = from_wire(thaw(block), ContentBlock)  # type: ignore[arg-type]
                        yield UserMessageChunk(content=decoded, message_id=message_id)
                    except ProtocolParamsError as exc:
                        logger.warning("skipped a stored prompt block: %s", exc)
            case AgentMessageRecord(text=text, message_id=message_id):
                message_id = message_id_of(AgentMessageChunk, position, message_id)
                chunk = AgentMessageChunk(
                    content=TextContentBlock(text=text), message_id=message_id
                )
                yield paragraphs.shown(chunk)
            case NoticeRecord(text=text, severity=severity, message_id=message_id):
                if severity is None:  # told in the agent's voice, to every client alike
                    message_id = message_id_of(AgentMessageChunk, position, message_id)
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
                    message_id = message_id or derived_message_id(session_id, position)
                    told_id = told_id if told else message_id
                    told.append(UserMessage(known_severity(severity), text))
            case AgentThoughtRecord(text=text, message_id=message_id):
                message_id = message_id_of(AgentThoughtChunk, position, message_id)
                yield AgentThoughtChunk(content=TextContentBlock(text=text), message_id=message_id)
            case GapRecord(reason=reason):
                shown = paragraphs.notice(gap_text(reason))
                yield AgentMessageChunk(
                    content=TextContentBlock(text=shown),
                    message_id=message_id_of(AgentMessageChunk, position, None),
                )
            case ModeChangeRecord(mode=changed):
                mode = known_mode(changed)
            case ConfigChangeRecord():
                pass  # restored into the session, not drawn (the load answer carries it)
            case TurnEndRecord():
                yield from interrupt_open_calls()
            case UsageRecord(context_window=size) if size is not None:
                yield usage_update(record, size)
            case CompactionRecord(summary=summary):
                compactions += 1
                if compactions_shown:
                    yield CompactionUpdate(
                        compaction_id=f"compaction_replayed_{compactions}",
                        status="completed",
                        summary=[TextContentBlock(text=summary)],
                    )
            case (
                HeaderRecord()
                | DirectoriesChangeRecord()
                | UsageRecord()
                | PermissionAskedRecord()
                | PermissionAnswerRecord()
                | PermissionRememberedRecord()
            ):
                pass  # session state, or decisions that were a request and its answer live
            case _:
                assert_never(record)
    yield from user_updates(capabilities, told, paragraphs, told_id)
    yield from interrupt_open_calls()
    yield CurrentModeUpdate(current_mode_id=mode)


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

    tail: tuple[SessionUpdate, ...] = () if info is None else (info,)
    replayed = replay_updates(header, records, lookup, ctx, client)
    for update in itertools.chain(replayed, tail):
        yield {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": to_wire(SessionNotification(session_id=session_id, update=update)),
        }
