"""Version 2 of the log: every record carries its time, and permission decisions are records.

The round trip is checked for every record type (the strategy below covers the whole
:data:`~acp_sidecar.store.Record` union, and a test says so), with and without a time."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, get_args

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_sidecar.store import (
    SCHEMA_VERSION,
    AgentMessageRecord,
    AgentThoughtRecord,
    ChildRecord,
    ChildRecordable,
    CompactionRecord,
    ConfigChangeRecord,
    DirectoriesChangeRecord,
    FileChangeRecord,
    GapRecord,
    HeaderRecord,
    History,
    ModeChangeRecord,
    NoticeRecord,
    PermissionAnswerRecord,
    PermissionAskedRecord,
    PermissionRememberedRecord,
    PermissionRuleRecord,
    Record,
    SessionRuleRecord,
    SessionStore,
    ToolCallRecord,
    ToolResultRecord,
    TurnEndRecord,
    UndoRecord,
    UsageRecord,
    UserMessageRecord,
    permission_records,
)
from acp_sidecar.store.codec import RecordDecodeError, decode_line, encode_record
from acp_sidecar.store.records import PERMISSION_ANSWERS, utc_now
from acp_sidecar.tools.json_values import freeze_json
from tests.store.samples import CREATED, CWD, failed_result, ok_result
from tests.store.test_records import json_values

times = st.none() | st.datetimes(
    min_value=datetime(1, 1, 2),
    max_value=datetime(9999, 12, 30),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30))]),
)
ids = st.text(max_size=12)

RECORD_STRATEGIES: dict[type[Any], st.SearchStrategy[Any]] = {
    HeaderRecord: st.builds(
        HeaderRecord,
        session_id=ids,
        cwd=ids,
        created_at=st.datetimes(timezones=st.just(UTC), min_value=datetime(1, 1, 2)),
        mode=st.none() | ids,
        at=times,
    ),
    UserMessageRecord: st.builds(
        lambda blocks, at: UserMessageRecord(content=freeze_json(blocks), at=at),  # type: ignore[arg-type]
        st.lists(st.dictionaries(ids, json_values, max_size=3), max_size=3),
        times,
    ),
    AgentMessageRecord: st.builds(AgentMessageRecord, text=st.text(), at=times),
    AgentThoughtRecord: st.builds(AgentThoughtRecord, text=st.text(), at=times),
    NoticeRecord: st.builds(NoticeRecord, text=st.text(), at=times),
    GapRecord: st.builds(GapRecord, reason=st.text(), at=times),
    ToolCallRecord: st.builds(
        lambda call_id, name, arguments, at: ToolCallRecord(
            call_id=call_id, name=name, arguments=freeze_json(arguments), at=at
        ),
        ids,
        ids,
        json_values,
        times,
    ),
    ToolResultRecord: st.builds(
        lambda call_id, failed, at: ToolResultRecord(
            result=(failed_result if failed else ok_result)(call_id), at=at
        ),
        ids,
        st.booleans(),
        times,
    ),
    ModeChangeRecord: st.builds(ModeChangeRecord, mode=ids, at=times),
    TurnEndRecord: st.builds(TurnEndRecord, stop_reason=ids, at=times),
    PermissionAskedRecord: st.builds(
        PermissionAskedRecord,
        call_id=ids,
        tool=ids,
        options=st.lists(ids, max_size=5).map(tuple),
        at=times,
    ),
    PermissionAnswerRecord: st.builds(
        PermissionAnswerRecord,
        call_id=ids,
        tool=ids,
        answer=st.sampled_from(PERMISSION_ANSWERS),
        at=times,
    ),
    PermissionRememberedRecord: st.builds(
        PermissionRememberedRecord, call_id=ids, tool=ids, allowed=st.booleans(), at=times
    ),
    PermissionRuleRecord: st.builds(
        PermissionRuleRecord,
        call_id=ids,
        tool=ids,
        verdict=st.sampled_from(("allow", "ask", "deny")),
        rule=ids,
        source=ids,
        at=times,
    ),
    DirectoriesChangeRecord: st.builds(
        DirectoriesChangeRecord,
        additional_directories=st.lists(ids, max_size=3).map(tuple),
        at=times,
    ),
    ConfigChangeRecord: st.builds(ConfigChangeRecord, config_id=ids, value=ids, at=times),
    UsageRecord: st.builds(
        UsageRecord,
        model=ids,
        prompt_tokens=st.integers(0, 2**31),
        completion_tokens=st.integers(0, 2**31),
        cached_tokens=st.none() | st.integers(0, 2**31),
        context_window=st.none() | st.integers(1, 2**31),
        cost=st.none() | st.floats(0, 1e6),
        currency=st.none() | ids,
        at=times,
    ),
    CompactionRecord: st.builds(
        CompactionRecord, summary=st.text(), turns=st.integers(0, 10_000), at=times
    ),
}
hashes = st.none() | st.binary().map(lambda data: hashlib.sha256(data).hexdigest())
RECORD_STRATEGIES[FileChangeRecord] = st.builds(
    FileChangeRecord,
    call_id=st.text(),
    path=st.text(),
    before=hashes,
    after=hashes,
    kept=st.booleans(),
    at=times,
)
RECORD_STRATEGIES[UndoRecord] = st.builds(
    UndoRecord,
    turns=st.lists(st.integers(1, 10_000)).map(tuple),
    redo=st.booleans(),
    at=times,
)
RECORD_STRATEGIES[SessionRuleRecord] = st.builds(
    SessionRuleRecord,
    rule=st.text(),
    risk=st.none() | st.tuples(st.booleans(), st.booleans()),
    removed=st.booleans(),
    at=times,
)
RECORD_STRATEGIES[ChildRecord] = st.builds(
    ChildRecord,
    st.text(min_size=1, max_size=12),
    st.one_of(*(RECORD_STRATEGIES[kind] for kind in get_args(ChildRecordable))),
)
any_record = st.one_of(*RECORD_STRATEGIES.values())


def test_the_round_trip_strategy_covers_every_record_type() -> None:
    assert set(RECORD_STRATEGIES) == set(get_args(Record))


@pytest.mark.parametrize(
    "kind", [k for k in get_args(Record) if k is not ChildRecord], ids=lambda kind: kind.__name__
)
def test_every_record_type_has_the_time_field(kind: type[Any]) -> None:
    field = attrs.fields_dict(kind)["at"]
    assert field.default is None and field.kw_only and not field.eq


@settings(max_examples=400, deadline=None)
@given(record=any_record)
def test_every_record_round_trips_with_its_time(record: Record) -> None:
    line = encode_record(record)
    assert line.isascii() and line.count(b"\n") == 1
    data = json.loads(line)
    assert data["v"] == SCHEMA_VERSION
    assert ("t" in data) == (record.at is not None)
    decoded = decode_line(line)
    assert decoded == record and type(decoded) is type(record)
    assert decoded.at == record.at  # the same instant (equality leaves the time out)
    assert decoded.at is None or decoded.at.tzinfo is UTC


@settings(max_examples=100, deadline=None)
@given(record=any_record, moment=st.datetimes(timezones=st.just(UTC)))
def test_the_time_given_to_the_encoder_is_written_only_when_the_record_has_none(
    record: Record, moment: datetime
) -> None:
    decoded = decode_line(encode_record(record, at=moment))
    assert decoded.at == (record.at if record.at is not None else moment)


def test_the_time_is_written_in_the_stores_form() -> None:
    line = encode_record(ModeChangeRecord(mode="m", at=CREATED))
    assert json.loads(line)["t"] == "2025-01-02T03:04:05.678901Z"


@pytest.mark.parametrize(
    ("t", "reason"),
    [
        ('"yesterday"', "'t' is not a timestamp"),
        ('"2025-01-02T03:04:05"', "has no time zone"),
        ("3", "'t' must be a string"),
    ],
)
def test_a_bad_time_is_damage(t: str, reason: str) -> None:
    line = b'{"v":2,"type":"mode_change","mode":"m","t":%s}\n' % t.encode()
    with pytest.raises(RecordDecodeError, match=reason):
        decode_line(line)


def test_an_offset_time_is_read_in_utc() -> None:
    line = b'{"v":2,"type":"mode_change","mode":"m","t":"2025-01-02T08:34:05+05:30"}\n'
    at = decode_line(line).at
    assert at == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC) and at is not None
    assert at.tzinfo is UTC


def test_a_version_1_record_has_no_time() -> None:
    record = decode_line(b'{"v":1,"type":"mode_change","mode":"m"}\n')
    assert record == ModeChangeRecord(mode="m") and record.at is None


def test_permission_record_shapes() -> None:
    def shape(record: Record) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(encode_record(record))
        return data

    assert shape(PermissionAskedRecord(call_id="c", tool="edit", options=("allow_once",))) == {
        "v": 2,
        "type": "permission_asked",
        "callId": "c",
        "tool": "edit",
        "options": ["allow_once"],
    }
    assert shape(PermissionAnswerRecord(call_id="c", tool="edit", answer="cancelled")) == {
        "v": 2,
        "type": "permission_answer",
        "callId": "c",
        "tool": "edit",
        "answer": "cancelled",
    }
    assert shape(PermissionRememberedRecord(call_id="c", tool="edit", allowed=False)) == {
        "v": 2,
        "type": "permission_remembered",
        "callId": "c",
        "tool": "edit",
        "allowed": False,
    }
    rule = PermissionRuleRecord(
        call_id="c", tool="bash", verdict="deny", rule="deny bash rm *", source="session"
    )
    assert shape(rule) == {
        "v": 2,
        "type": "permission_rule",
        "callId": "c",
        "tool": "bash",
        "verdict": "deny",
        "rule": "deny bash rm *",
        "source": "session",
    }


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"v":2,"type":"permission_asked","callId":"c","tool":"t","options":[1]}', "'options'"),
        (b'{"v":2,"type":"permission_asked","callId":"c","tool":"t"}', "'options'"),
        (b'{"v":2,"type":"permission_answer","callId":"c","tool":"t","answer":"yes"}', "'answer'"),
        (
            b'{"v":2,"type":"permission_remembered","callId":"c","tool":"t","allowed":1}',
            "'allowed'",
        ),
        (b'{"v":2,"type":"permission_remembered","tool":"t","allowed":true}', "'callId'"),
        (
            b'{"v":2,"type":"permission_rule","callId":"c","tool":"t","verdict":"maybe",'
            b'"rule":"r","source":"s"}',
            "'verdict'",
        ),
        (
            b'{"v":2,"type":"permission_rule","callId":"c","tool":"t","verdict":"ask",'
            b'"source":"s"}',
            "'rule'",
        ),
    ],
)
def test_damaged_permission_records_are_decode_errors(line: bytes, reason: str) -> None:
    with pytest.raises(RecordDecodeError, match=reason):
        decode_line(line + b"\n")


def test_the_writer_stamps_every_record_with_the_time_it_was_written(
    store: SessionStore,
) -> None:
    before = utc_now()
    with store.create("s1", CWD, created_at=CREATED) as writer:
        writer.user_message([{"type": "text", "text": "hi"}])
        writer.agent_text("hello")
        writer.tool_call("c1", "run", {"cmd": "ls"})
        writer.append(PermissionAskedRecord(call_id="c1", tool="run", options=("allow_once",)))
        writer.append(PermissionAnswerRecord(call_id="c1", tool="run", answer="allow_once"))
        writer.tool_result(ok_result("c1"))
        writer.append(ModeChangeRecord(mode="auto", at=CREATED))  # a time given is kept
        writer.end_turn("end_turn")
    after = utc_now()
    with store.open_log("s1") as log:
        assert log.header.at == CREATED  # the header's time is the session's creation
        records = list(log)
    assert len(records) == 8
    for record in records:
        assert record.at is not None
        if not isinstance(record, ModeChangeRecord):
            assert before <= record.at <= after
    assert records[6].at == CREATED
    times_in_order = [r.at for r in records if not isinstance(r, ModeChangeRecord)]
    assert times_in_order == sorted(times_in_order)  # type: ignore[type-var]


def test_permission_records_stay_out_of_the_history_and_are_read_back(
    store: SessionStore,
) -> None:
    decisions = [
        PermissionAskedRecord(call_id="c1", tool="run", options=("allow_once", "reject_once")),
        PermissionAnswerRecord(call_id="c1", tool="run", answer="allow_always"),
        PermissionRememberedRecord(call_id="c2", tool="run", allowed=True),
        PermissionRuleRecord(
            call_id="c2", tool="run", verdict="allow", rule="allow run", source="session"
        ),
    ]
    with store.create("s1", CWD) as writer:
        writer.user_message([{"type": "text", "text": "hi"}])
        writer.tool_call("c1", "run", {})
        writer.append(decisions[0])
        writer.append(decisions[1])
        writer.tool_result(ok_result("c1"))
        writer.tool_call("c2", "run", {})
        writer.append(decisions[2])
        writer.append(decisions[3])
        writer.tool_result(ok_result("c2"))
        writer.end_turn("end_turn")
    with store.open_log("s1") as log:
        items = list(History(log))
    assert [type(item).__name__ for item in items] == [
        "UserMessageRecord",
        "ToolCallRecord",
        "ToolResultRecord",
        "ToolCallRecord",
        "ToolResultRecord",
    ]
    with store.open_log("s1") as log:
        assert list(permission_records(log)) == decisions


def test_a_child_record_is_its_records_line_tagged_with_the_child() -> None:
    """A child's record is the record's own line plus ``"s"``, its time the inner one's; an
    empty tag, or a tag on a record a child cannot have, is damage."""
    inner = AgentMessageRecord(text="hi", message_id="m1", at=CREATED)
    line = encode_record(ChildRecord("p~task~c1", inner))
    data = json.loads(line)
    assert data["s"] == "p~task~c1" and data["type"] == "agent_message" and data["id"] == "m1"
    decoded = decode_line(line)
    assert decoded == ChildRecord("p~task~c1", inner) and decoded.at == CREATED
    for bad in (
        {**data, "s": ""},
        {**data, "s": 3},
        {"v": 2, "type": "gap", "reason": "x", "s": "c"},
    ):
        with pytest.raises(RecordDecodeError):
            decode_line(json.dumps(bad).encode())
