"""Every record type round-trips through its JSONL line; the line shapes are the documented ones."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_sidecar.store import (
    SCHEMA_VERSION,
    AgentMessageRecord,
    AgentThoughtRecord,
    ConfigChangeRecord,
    DirectoriesChangeRecord,
    GapRecord,
    HeaderRecord,
    ModeChangeRecord,
    NoticeRecord,
    Record,
    SessionLog,
    SessionRuleRecord,
    SessionStore,
    ToolCallRecord,
    ToolResultRecord,
    TurnEndRecord,
    UserMessageRecord,
    format_timestamp,
    times,
)
from acp_sidecar.store.codec import (
    NewerVersion,
    RecordDecodeError,
    decode_line,
    encode_record,
)
from acp_sidecar.tools.json_values import FrozenDict, freeze_json
from tests.store.samples import CREATED, CWD, failed_result, ok_result

HEADER = HeaderRecord(session_id="s1", cwd=CWD, created_at=CREATED, mode="default")

RECORDS: list[Record] = [
    HEADER,
    HeaderRecord(session_id="s2", cwd=CWD, created_at=CREATED),
    UserMessageRecord(
        content=freeze_json(
            [
                {"type": "text", "text": "fix the tests"},
                {"type": "resource_link", "name": "app.py", "uri": "file:///work/project/app.py"},
            ]
        )  # type: ignore[arg-type]
    ),
    AgentMessageRecord(text="Sure — running them.\n"),
    AgentThoughtRecord(text="they fail on \udce9 bytes"),  # a lone surrogate survives
    ToolCallRecord(call_id="call-1", name="run", arguments=freeze_json({"cmd": ["pytest", "-q"]})),
    ToolCallRecord(call_id="call-x", name="odd", arguments=None),
    ToolResultRecord(result=ok_result()),
    ToolResultRecord(result=failed_result()),
    ModeChangeRecord(mode="architect"),
    TurnEndRecord(stop_reason="end_turn"),
    NoticeRecord(text="The model endpoint failed with HTTP 500."),
    GapRecord(reason="could not append to session log: [Errno 28] No space left on device"),
    DirectoriesChangeRecord(additional_directories=("/other",)),
    DirectoriesChangeRecord(additional_directories=()),
    ConfigChangeRecord(config_id="model", value="qwen3:8b"),
    UserMessageRecord(
        content=freeze_json([{"type": "text", "text": "/export md"}]),  # type: ignore[arg-type]
        command="export",
    ),
    NoticeRecord(
        text="Exported.",
        content=freeze_json(  # type: ignore[arg-type]
            [{"type": "resource_link", "name": "s1.md", "uri": "file:///store/s1.md"}]
        ),
    ),
]
HEADER_WITH_ROOTS = HeaderRecord(
    session_id="s3", cwd=CWD, created_at=CREATED, additional_directories=("/lib", "/docs")
)


@pytest.mark.parametrize("record", [*RECORDS, HEADER_WITH_ROOTS], ids=lambda r: type(r).__name__)
def test_every_record_round_trips_through_its_line(record: Record) -> None:
    line = encode_record(record)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert line.isascii()
    assert decode_line(line) == record


def test_a_whole_log_round_trips_in_order(store: SessionStore) -> None:
    with store.create("s1", CWD, mode="default", created_at=CREATED) as writer:
        for record in RECORDS[2:]:
            writer.append(record)
    with store.open_log("s1") as log:
        assert log.header == HEADER
        assert list(log) == RECORDS[2:]


def _shape(record: Record) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(encode_record(record))
    return data


def test_record_json_shapes() -> None:
    assert _shape(HEADER) == {
        "v": SCHEMA_VERSION,
        "type": "header",
        "sessionId": "s1",
        "cwd": CWD,
        "created": "2025-01-02T03:04:05.678901Z",
        "mode": "default",
    }
    assert _shape(RECORDS[5]) == {
        "v": SCHEMA_VERSION,
        "type": "tool_call",
        "callId": "call-1",
        "name": "run",
        "arguments": {"cmd": ["pytest", "-q"]},
    }
    assert _shape(RECORDS[8]) == {
        "v": SCHEMA_VERSION,
        "type": "tool_result",
        "result": {
            "callId": "call-2",
            "content": [{"type": "text", "text": "permission denied"}],
            "isError": True,
            "error": {"name": "ToolDeniedError", "code": "denied"},
        },
    }
    assert _shape(RECORDS[3]) == {
        "v": SCHEMA_VERSION,
        "type": "agent_message",
        "text": "Sure — running them.\n",
    }
    assert _shape(RECORDS[9]) == {"v": SCHEMA_VERSION, "type": "mode_change", "mode": "architect"}
    assert _shape(RECORDS[10]) == {
        "v": SCHEMA_VERSION,
        "type": "turn_end",
        "stopReason": "end_turn",
    }
    assert _shape(RECORDS[15]) == {
        "v": SCHEMA_VERSION,
        "type": "config_change",
        "configId": "model",
        "value": "qwen3:8b",
    }
    assert _shape(RECORDS[11]) == {
        "v": SCHEMA_VERSION,
        "type": "notice",
        "text": "The model endpoint failed with HTTP 500.",
    }
    assert _shape(HEADER_WITH_ROOTS)["additionalDirectories"] == ["/lib", "/docs"]
    assert "additionalDirectories" not in _shape(HEADER)  # none: the key is left out
    assert _shape(RECORDS[13]) == {
        "v": SCHEMA_VERSION,
        "type": "directories",
        "additionalDirectories": ["/other"],
    }


def test_a_header_written_before_extra_roots_has_none() -> None:
    line = b'{"v":1,"type":"header","sessionId":"s","cwd":"/w","created":"2025-01-02T03:04:05Z"}'
    header = decode_line(line)
    assert isinstance(header, HeaderRecord) and header.additional_directories == ()


def test_timestamps_are_utc_with_z() -> None:
    assert format_timestamp(CREATED) == "2025-01-02T03:04:05.678901Z"
    with pytest.raises(ValueError, match="timezone-aware"):
        format_timestamp(CREATED.replace(tzinfo=None))


def test_the_time_now_is_written_as_format_timestamp_writes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Within one second (the date and time of day are kept), and into the next ones.
    base = int(CREATED.replace(microsecond=0).timestamp()) * 10**9
    for offset_ns in (678_901_234, 999_999_999, 1_000_000_000, 1_000_000_999, 86_400 * 10**9):
        now = base + offset_ns
        monkeypatch.setattr(times.time, "time_ns", lambda now=now: now)
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=now // 1000)
        assert times.timestamp_now() == format_timestamp(moment)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"[1, 2]\n", "must be a JSON object"),
        (b'{"type": "agent_message", "text": "x"}\n', "'v' must be a positive integer"),
        (b'{"v": "1", "type": "agent_message", "text": "x"}\n', "'v' must be"),
        (b'{"v": 1, "type": "bogus"}\n', "unknown record type 'bogus'"),
        (b'{"v": 1, "type": "agent_message", "text": 3}\n', "'text' must be a string"),
        (b'{"v": 1, "type": "tool_result", "result": {"callId": "c"}}\n', "not a tool result"),
        (b'{"v": 1, "type": "user_message", "content": ["x"]}\n', "list of objects"),
        (b'{"v": 1, "type": "tool_call", "callId": "c", "name": "n", "arguments": NaN}\n', "NaN"),
        (b'{"v": 1, "type": "header", "sessionId": "s", "cwd": "/", "created": "x"}\n', "created"),
        (b'{"v": 1, "type": "directories"}\n', "'additionalDirectories' must be a list"),
        (b'{"v": 1, "type": "directories", "additionalDirectories": [1]}\n', "list of strings"),
        (b'{"v": 2, "type": "session_rule"}\n', "'rule' must be a string"),
        (b'{"v": 2, "type": "session_rule", "rule": "allow x", "risk": [true]}\n', "two booleans"),
        (b'{"v": 2, "type": "session_rule", "rule": "allow x", "risk": [1, 0]}\n', "two booleans"),
        (b'{"v": 2, "type": "session_rule", "rule": "a", "removed": "yes"}\n', "'removed' must"),
        (b"\xff\xfe\n", "not JSON"),
        (b'{"v": 1, "type": "agent_mes', "not JSON"),
    ],
)
def test_damaged_lines_are_decode_errors(line: bytes, reason: str) -> None:
    with pytest.raises(RecordDecodeError, match=reason):
        decode_line(line)


def test_a_session_rule_is_written_with_only_what_it_has() -> None:
    plain, risky = (
        SessionRuleRecord(rule="allow edit"),
        SessionRuleRecord(rule="allow write", risk=(True, False), removed=True),
    )
    assert json.loads(encode_record(plain)) == {
        "v": 2,
        "type": "session_rule",
        "rule": "allow edit",
    }
    assert json.loads(encode_record(risky)) == {
        "v": 2,
        "type": "session_rule",
        "rule": "allow write",
        "risk": [True, False],
        "removed": True,
    }
    assert decode_line(encode_record(risky)) == risky


MODE = b'{"v":1,"type":"mode_change","mode":"m"}'


@pytest.mark.parametrize(
    "line",
    [
        MODE + b"\n",
        MODE,
        b" \t" + MODE + b"\n",
        MODE + b" \r\n",
        MODE + b"\n\n",
        MODE + b'{"v":3}\n',
        MODE + b" x\n",
        MODE + b"\x0b\n",
        MODE + b"\n" + MODE + b"\n",
        b"\n",
        b"",
        b'{"v":1,"type":"mode_change","mode":"m","x":NaN}\n',
        b'{"v":1,"type":"mode_change","mode":"m","x":' + b"[" * 100_000 + b"\n",
        b'{"v":1,"type":"mode_change","mode":"m","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
    ],
)
def test_a_line_is_json_exactly_as_json_loads_reads_it(line: bytes) -> None:
    try:
        json.loads(line, parse_constant=lambda name: 1 / 0)
    except (ValueError, ZeroDivisionError, RecursionError):
        with pytest.raises(RecordDecodeError, match=r"not JSON|not a JSON number"):
            decode_line(line)
    else:
        assert decode_line(line) == ModeChangeRecord(mode="m")


def test_a_newer_version_is_not_damage() -> None:
    with pytest.raises(NewerVersion) as caught:
        decode_line(b'{"v": 3, "type": "whatever"}\n')
    assert caught.value.found == 3


@pytest.mark.parametrize(
    ("version", "found"),
    [(b"3.0", 3), (b"1e1", 10), (b"2.5", 2.5), (b"30E-1", 3), (b"1e20", 10**20)],
)
def test_a_newer_version_written_as_any_json_number_is_newer(version: bytes, found: float) -> None:
    # JSON has one kind of number: 3.0 and 1e1 are the numbers 3 and 10, not damage.
    with pytest.raises(NewerVersion) as caught:
        decode_line(b'{"v": ' + version + b', "type": "agent_message", "text": "x"}\n')
    assert caught.value.found == found and type(caught.value.found) is type(found)


@pytest.mark.parametrize("version", [b"1.0", b"2.0", b"2e0", b"0.2e1"])
def test_a_version_this_one_reads_written_as_a_float_is_that_version(version: bytes) -> None:
    line = b'{"v": ' + version + b', "type": "mode_change", "mode": "m"}\n'
    assert decode_line(line) == ModeChangeRecord(mode="m")


@pytest.mark.parametrize("version", [b"0.5", b"1.5", b"0", b"-3.0", b"true", b"1e400"])
def test_a_version_that_names_none_is_damage(version: bytes) -> None:
    with pytest.raises(RecordDecodeError, match="'v' must be a positive integer"):
        decode_line(b'{"v": ' + version + b', "type": "mode_change", "mode": "m"}\n')


def test_unknown_keys_within_version_1_are_ignored() -> None:
    line = b'{"v": 1, "type": "mode_change", "mode": "m", "addedLater": true}\n'
    assert decode_line(line) == ModeChangeRecord(mode="m")


def test_non_json_payloads_are_refused_before_writing(store: SessionStore) -> None:
    with store.create("s1", CWD) as writer:
        with pytest.raises(ValueError):
            writer.tool_call("c", "n", {"x": float("nan")})
        with pytest.raises(ValueError):
            writer.user_message([{"type": "text", "text": {1, 2}}])
        with pytest.raises(ValueError, match="exactly one header"):
            writer.append(HEADER)
    with SessionLog(store.path_of("s1")) as log:
        assert list(log) == []


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(arguments=json_values, name=st.text(), text=st.text())
def test_any_json_payload_round_trips(arguments: object, name: str, text: str) -> None:
    call = ToolCallRecord(call_id="c", name=name, arguments=freeze_json(arguments))
    assert decode_line(encode_record(call)) == call
    message = AgentMessageRecord(text=text)
    assert decode_line(encode_record(message)) == message


def _deep_frozen(value: object) -> bool:
    if type(value) is FrozenDict:
        return all(type(key) is str and _deep_frozen(item) for key, item in value.items())
    if type(value) is tuple:
        return all(_deep_frozen(item) for item in value)
    return type(value) in (type(None), bool, int, float, str)


@settings(max_examples=200, deadline=None)
@given(arguments=json_values, meta=json_values)
def test_decoded_payloads_are_deep_frozen(arguments: object, meta: object) -> None:
    call = ToolCallRecord(call_id="c", name="n", arguments=freeze_json(arguments))
    decoded = decode_line(encode_record(call))
    assert isinstance(decoded, ToolCallRecord) and _deep_frozen(decoded.arguments)
    result = ToolResultRecord(result=attrs.evolve(ok_result(), meta=meta, additional_context=meta))
    back = decode_line(encode_record(result))
    assert isinstance(back, ToolResultRecord) and back == result
    assert _deep_frozen(back.result.meta) and _deep_frozen(back.result.additional_context)
    prompt = UserMessageRecord(content=freeze_json([{"type": "text", "x": arguments}]))  # type: ignore[arg-type]
    again = decode_line(encode_record(prompt))
    assert isinstance(again, UserMessageRecord) and _deep_frozen(again.content)


def test_session_log_requires_a_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        SessionLog(tmp_path / "missing.jsonl")


SAID = [
    UserMessageRecord(content=(), message_id="m1"),
    AgentMessageRecord(text="hi", message_id="m2"),
    AgentThoughtRecord(text="hm", message_id="m3"),
    NoticeRecord(text="told", severity="warning", message_id="m4"),
]


@pytest.mark.parametrize("record", SAID, ids=lambda r: type(r).__name__)
def test_a_messages_id_round_trips_and_a_record_without_one_reads_as_none(
    record: Record,
) -> None:
    line = encode_record(record)
    assert json.loads(line)["id"] == record.message_id  # type: ignore[union-attr]
    assert decode_line(line).message_id == record.message_id  # type: ignore[union-attr]
    old = json.loads(line)
    del old["id"]  # as written before ids were
    assert decode_line(json.dumps(old).encode()).message_id is None  # type: ignore[union-attr]
    with pytest.raises(RecordDecodeError, match="'id' must be a string"):
        decode_line(json.dumps({**old, "id": 7}).encode())


def test_a_command_and_a_notice_s_blocks_are_optional_members() -> None:
    prompt = json.loads(encode_record(UserMessageRecord(content=(), command="export")))
    assert prompt["command"] == "export"
    del prompt["command"]  # as written before session commands
    assert decode_line(json.dumps(prompt).encode()) == UserMessageRecord(content=())
    notice = {"v": 2, "type": "notice", "text": "told"}
    assert decode_line(json.dumps(notice).encode()) == NoticeRecord(text="told")
    assert "content" not in json.loads(encode_record(NoticeRecord(text="told")))
    with pytest.raises(RecordDecodeError, match="'content' must be a list of objects"):
        decode_line(json.dumps({**notice, "content": ["x"]}).encode())
    with pytest.raises(RecordDecodeError, match="'command' must be a string"):
        decode_line(json.dumps({**prompt, "command": 1}).encode())
