"""The records the model driver keeps about a session's context: a response's usage (with the
session's cost so far) and a compaction's summary round-trip, and bad ones are damage."""

from __future__ import annotations

import json

import pytest

from acp_sidecar.store import (
    SCHEMA_VERSION,
    CompactionRecord,
    History,
    Record,
    SessionStore,
    UsageRecord,
    UserMessageRecord,
)
from acp_sidecar.store.codec import RecordDecodeError, decode_line, encode_record
from tests.store.samples import CREATED, CWD

USAGE = UsageRecord(
    model="gpt-4.1",
    prompt_tokens=1200,
    completion_tokens=40,
    cached_tokens=1000,
    context_window=128000,
    cost=0.0028,
    currency="USD",
)
BARE = UsageRecord(model="qwen3", prompt_tokens=10, completion_tokens=2)
COMPACTION = CompactionRecord(summary="The user wants the tests fixed; \u00e9 done.", turns=3)


@pytest.mark.parametrize("record", [USAGE, BARE, COMPACTION], ids=repr)
def test_round_trip(record: Record) -> None:
    assert decode_line(encode_record(record)) == record


def test_shapes_leave_unknowns_out() -> None:
    assert json.loads(encode_record(BARE)) == {
        "v": SCHEMA_VERSION,
        "type": "usage",
        "model": "qwen3",
        "promptTokens": 10,
        "completionTokens": 2,
    }
    assert json.loads(encode_record(USAGE))["cost"] == 0.0028
    assert json.loads(encode_record(COMPACTION)) == {
        "v": SCHEMA_VERSION,
        "type": "compaction",
        "summary": COMPACTION.summary,
        "turns": 3,
    }


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            b'{"v":1,"type":"usage","model":"m","promptTokens":-1,"completionTokens":2}',
            "at least 0",
        ),
        (b'{"v":1,"type":"usage","model":"m","promptTokens":1}', "completionTokens"),
        (
            b'{"v":1,"type":"usage","model":"m","promptTokens":1,"completionTokens":2,"cost":"x"}',
            "cost",
        ),
        (b'{"v":1,"type":"compaction","summary":"s","turns":true}', "turns"),
        (b'{"v":1,"type":"compaction","turns":1}', "summary"),
    ],
)
def test_bad_lines_are_damage(line: bytes, reason: str) -> None:
    with pytest.raises(RecordDecodeError, match=reason):
        decode_line(line)


def test_the_history_keeps_them_in_place(tmp_path: object) -> None:
    store = SessionStore(tmp_path)  # type: ignore[arg-type]
    prompt = UserMessageRecord(content=({"type": "text", "text": "hi"},))  # type: ignore[arg-type]
    with store.create("s1", CWD, created_at=CREATED) as writer:
        for record in (prompt, USAGE, COMPACTION):
            writer.append(record)
    with store.open_log("s1") as log:
        assert list(History(log)) == [prompt, USAGE, COMPACTION]
