"""Replay's fast paths draw what its one general path draws: a log's updates, record by record
through ``_Transcript.feed``, are the updates :func:`replay_updates` sends, in order."""

from __future__ import annotations

from collections.abc import Iterator

from acp_sidecar.bridge.modes import MODE_IDS
from acp_sidecar.bridge.replay import _Transcript, known_mode, replay_client, replay_updates
from acp_sidecar.protocol.converter import to_wire
from acp_sidecar.protocol.updates import CurrentModeUpdate, SessionUpdate
from acp_sidecar.store import (
    AgentMessageRecord,
    ModeChangeRecord,
    NoticeRecord,
    Record,
    TurnEndRecord,
)
from tests.bridge.test_replay_repeats import CTX, HEADER, NOTE, call, registry, result


def slow_replay(records: list[Record]) -> Iterator[SessionUpdate]:
    """Every record through ``feed``: the general path the fast ones must agree with."""
    tools = registry()
    transcript = _Transcript(HEADER.session_id, tools.get, CTX, replay_client())
    mode = known_mode(HEADER.mode)
    for position, record in enumerate(records, 1):
        if isinstance(record, ModeChangeRecord):
            mode = known_mode(record.mode)
        yield from transcript.feed(position, record)
    yield from transcript.finish()
    yield CurrentModeUpdate(current_mode_id=mode)


def mixed_log() -> list[Record]:
    note_meta = {"before": "x = 1\n", "after": "x = 2\n"}
    return [
        call("c1", "note", NOTE),
        NoticeRecord("held before a call", severity="warning"),  # flushed before c2's card
        call("c2", "look", {"path": "README.md"}),
        result("c1", note_meta),
        NoticeRecord("held before a result", severity="info"),  # flushed before c2's result
        result("c2"),
        result("c9"),  # no call open: draws nothing
        ModeChangeRecord(mode=MODE_IDS[-1]),
        AgentMessageRecord("between"),
        call("c3", "look", {"path": 42}),  # invalid: a generic card
        NoticeRecord("told at the end", severity="error"),
        TurnEndRecord("end_turn"),  # c3 interrupted, after the notice
        call("c4", "note", NOTE),  # never answered: interrupted at the finish
    ]


def test_replay_updates_draws_what_feeding_every_record_draws() -> None:
    records = mixed_log()
    fast = [
        to_wire(u) for u in replay_updates(HEADER, records, registry().get, CTX, replay_client())
    ]
    slow = [to_wire(u) for u in slow_replay(records)]
    assert fast == slow
    kinds = [u["sessionUpdate"] for u in fast]
    assert kinds.count("tool_call") == 4 and "notice" in kinds  # the log drew what it holds
    assert kinds.index("notice") < kinds.index("tool_call", 1)  # held notices go first
