"""A stored session as an export reads it: the ``session/load`` update stream, with times.

The only part of :mod:`acp_sidecar.export` that touches the store. Records are consumed as
read; a version-1 log (no times) gives ``at=None`` everywhere and otherwise exports alike.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import attrs

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.replay import known_mode, replay_client, replay_sessions
from acp_sidecar.bridge.translate import ToolLookup
from acp_sidecar.export.children import ChildTranscript, drawn_in_card
from acp_sidecar.protocol.converter import to_wire
from acp_sidecar.protocol.subagents import SessionMessage, SessionMessageChunk, SubagentUpdate
from acp_sidecar.protocol.tool_call import ToolCallProgress
from acp_sidecar.protocol.updates import (
    CurrentModeUpdate,
    SessionInfoUpdate,
)
from acp_sidecar.render.blocks import (
    Event,
    ModeSwitched,
    OptionChanged,
    PermissionDecided,
    TurnEnded,
)
from acp_sidecar.store import (
    ConfigChangeRecord,
    ModeChangeRecord,
    PermissionAnswerRecord,
    PermissionRememberedRecord,
    PermissionRuleRecord,
    Record,
    SessionLog,
    SessionRuleRecord,
    TurnEndRecord,
    UsageRecord,
    read_summary,
)


@attrs.frozen
class SessionHeading:
    """The facts a transcript's heading shows, from the log's header and its summary."""

    session_id: str
    cwd: str
    title: str | None
    """The first prompt's text, shortened (as ``session/list`` shows it); ``None`` if none."""
    created_at: datetime
    updated_at: datetime
    """The log's last change."""
    additional_directories: tuple[str, ...] = ()


@attrs.define
class SessionFacts:
    """What only the whole log tells; complete once the entries are exhausted."""

    mode: str
    """The mode the session was in at the end (the header's, then each switch)."""
    models: list[str] = attrs.Factory(list)
    """The models chosen or that answered, in the order first seen."""
    usage: UsageRecord | None = None
    """The last usage record, if any."""
    first_at: datetime | None = None
    last_at: datetime | None = None
    """The times of the first and last timed records (``None`` for a version-1 log)."""

    def note(self, record: Record) -> None:
        """Take what ``record`` tells about the whole session."""
        if record.at is not None:
            self.first_at = self.first_at or record.at
            self.last_at = record.at
        match record:
            case ModeChangeRecord(mode=mode):
                self.mode = known_mode(mode)
            case ConfigChangeRecord(config_id="model", value=model):
                self._saw_model(model)
            case UsageRecord(model=model):
                self._saw_model(model)
                self.usage = record if record.counted else self.usage
            case _:
                pass  # the rest describes the conversation, not the session

    def _saw_model(self, model: str) -> None:
        if model not in self.models:
            self.models.append(model)


@attrs.frozen
class Timed:
    """One entry of an export: wire JSON of a ``session/update``'s ``update``, or an event,
    with the time of the record it came from (``None`` when the log did not say)."""

    at: datetime | None
    item: Mapping[str, Any] | Event


def event_of(record: Record) -> Event | None:
    """The event a record shows in a transcript, if it is one the update stream leaves out."""
    match record:
        case ModeChangeRecord(mode=mode):
            return ModeSwitched(mode)
        case ConfigChangeRecord(config_id=config_id, value=value):
            return OptionChanged(config_id, value)
        case PermissionAnswerRecord(call_id=call_id, tool=tool, answer=answer):
            return PermissionDecided(call_id, tool, answer)
        case PermissionRememberedRecord(call_id=call_id, tool=tool, allowed=allowed):
            answer = "allow_always" if allowed else "reject_always"
            return PermissionDecided(call_id, tool, answer, remembered=True)
        case PermissionRuleRecord(call_id=call_id, tool=tool, verdict=verdict):
            rule = f"{record.rule} ({record.source})"
            return PermissionDecided(call_id, tool, f"rule_{verdict}", rule=rule)
        case SessionRuleRecord(rule=rule, removed=removed):
            return OptionChanged("session rule", f"{'removed' if removed else 'added'}: {rule}")
        case TurnEndRecord(stop_reason=reason) if reason != "end_turn":
            return TurnEnded(reason)
        case _:
            return None


class StoredSession:
    """A session log opened for export (a context manager; see the module invariants).

    ``lookup`` finds the tools that draw their cards (the registry's ``get``); the session is
    replayed as for a client that advertised ``_meta.terminal_output``, ``session.notices``
    and ``session.compaction``, each unless its flag is false.

    Raises:
        OSError: the log cannot be read.
        StoreError: its header is damaged or from a newer version.
    """

    def __init__(
        self,
        path: Path,
        lookup: ToolLookup,
        *,
        terminal_output: bool = True,
        notices: bool = True,
        compaction: bool = True,
    ) -> None:
        self._log = SessionLog(path)
        try:
            header = self._header = self._log.header
            summary = read_summary(path, header.session_id)
        except BaseException:
            self._log.close()
            raise
        self.heading = SessionHeading(
            session_id=header.session_id,
            cwd=header.cwd,
            title=summary.title,
            created_at=header.created_at,
            updated_at=summary.updated_at,
            additional_directories=summary.additional_directories,
        )
        self.facts = SessionFacts(mode=known_mode(header.mode))
        self._lookup = lookup
        # As a client with plan operations: a Markdown plan is drawn as the plan, not in its card.
        self._ctx = CardContext(
            cwd=header.cwd, terminal_output=terminal_output, plan_operations=True
        )
        # As a client that takes subagents: a child is drawn inside its task card.
        self._client = attrs.evolve(
            replay_client(notices=notices, compaction=compaction), subagents={}
        )

    def __enter__(self) -> StoredSession:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the log."""
        self._log.close()

    def entries(self) -> Iterator[Timed]:
        """The session's entries in log order (see the module invariants); read once."""
        pending: deque[Timed] = deque()
        latest: list[datetime | None] = [None]
        facts = self.facts

        def tap(records: Iterable[Record]) -> Iterator[Record]:
            for record in records:
                latest[0] = record.at
                facts.note(record)
                event = event_of(record)
                if event is not None:
                    pending.append(Timed(record.at, event))
                yield record

        parent = self._header.session_id
        children: dict[str, ChildTranscript] = {}
        replayed = replay_sessions(
            self._header, tap(self._log), self._lookup, self._ctx, self._client
        )
        for session_id, update in replayed:
            # Events come from records that send no update, read before this update's own.
            while pending:
                yield pending.popleft()
            if session_id != parent:
                children.setdefault(session_id, ChildTranscript()).hear(update)
                continue  # drawn inside its task card
            if isinstance(update, CurrentModeUpdate | SessionInfoUpdate):
                continue  # the session's state at the end: in the facts and heading
            if isinstance(update, SubagentUpdate):
                children.setdefault(update.session_id, ChildTranscript()).hear(update)
                continue  # a child's state: its task card shows what it used
            if isinstance(update, SessionMessage | SessionMessageChunk):
                continue  # a child's answer: the task card shows it
            if isinstance(update, ToolCallProgress):
                shown = drawn_in_card(update, children)
                if shown is None:
                    continue
                update = shown
            wire = to_wire(update)
            assert isinstance(wire, dict)
            yield Timed(latest[0], wire)
        yield from pending
