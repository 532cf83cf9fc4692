"""Crash damage: torn tails, damaged lines, newer versions, missing headers, SIGKILL mid-write."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acp_sidecar.store import (
    AgentMessageRecord,
    CorruptLogError,
    ModeChangeRecord,
    SessionLog,
    SessionStore,
    ToolCallRecord,
    TurnEndRecord,
    UnsupportedVersionError,
)
from acp_sidecar.store.codec import decode_line, encode_record
from tests.store.samples import CWD

ROOT = Path(__file__).resolve().parents[2]


def _log_with(store: SessionStore, *texts: str) -> Path:
    with store.create("s1", CWD) as writer:
        for text in texts:
            writer.agent_text(text)
            writer.end_message()
    return store.path_of("s1")


def _texts(path: Path) -> list[str]:
    with SessionLog(path) as log:
        return [r.text for r in log if isinstance(r, AgentMessageRecord)]


def test_torn_last_line_is_dropped_with_a_warning(
    store: SessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    path = _log_with(store, "one", "two")
    line = encode_record(AgentMessageRecord(text="three"))
    with open(path, "ab") as stream:
        stream.write(line[: len(line) // 2])  # the process died mid-write
    with caplog.at_level(logging.WARNING, logger="acp_sidecar.store"):
        assert _texts(path) == ["one", "two"]
    assert "line 4: dropped a torn last record" in caplog.text
    assert "no newline" in caplog.text


def test_a_whole_json_line_without_its_newline_is_not_committed(
    store: SessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    path = _log_with(store, "one")
    with open(path, "ab") as stream:
        stream.write(encode_record(AgentMessageRecord(text="two")).rstrip(b"\n"))
    with caplog.at_level(logging.WARNING):
        assert _texts(path) == ["one"]
    assert "torn last record" in caplog.text


def test_invalid_json_as_last_line_is_a_torn_tail(
    store: SessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    path = _log_with(store, "one")
    with open(path, "ab") as stream:
        stream.write(b'{"v":1,"type":"agent_mess\n')
    with caplog.at_level(logging.WARNING):
        assert _texts(path) == ["one"]
    assert "line 3: dropped a torn last record" in caplog.text


def test_a_damaged_middle_line_is_skipped_with_a_warning(
    store: SessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    path = _log_with(store, "one", "two", "three")
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = b'{"v":1,"type":"agent_message","te\x00garbage\n'
    lines.insert(3, b'{"v":1,"type":"unknown_kind"}\n')
    lines.insert(3, b"\n")
    lines.insert(3, encode_record(ModeChangeRecord(mode="m")).replace(b'"v":2', b'"v":0'))
    path.write_bytes(b"".join(lines))
    with caplog.at_level(logging.WARNING):
        assert _texts(path) == ["one", "three"]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 4
    assert all("skipped a damaged record" in w for w in warnings)
    assert "line 3:" in warnings[0] and "line 6:" in warnings[3]


def test_a_second_header_is_skipped(store: SessionStore, caplog: pytest.LogCaptureFixture) -> None:
    path = _log_with(store, "one")
    first = path.read_bytes().splitlines(keepends=True)[0]
    with open(path, "ab") as stream:
        stream.write(first + encode_record(AgentMessageRecord(text="two")))
    with caplog.at_level(logging.WARNING):
        assert _texts(path) == ["one", "two"]
    assert "skipped a second header" in caplog.text


def test_loading_never_crashes_on_garbage(store: SessionStore, tmp_path: Path) -> None:
    path = _log_with(store, "one")
    with open(path, "ab") as stream:
        stream.write(os.urandom(4096).replace(b"\n", b"") + b"\n" + b"[" * 100_000 + b"\n")
        stream.write(encode_record(AgentMessageRecord(text="two")))
    assert _texts(path) == ["one", "two"]


def _newer(path: Path, version: int) -> None:
    with open(path, "ab") as stream:
        stream.write(b'{"v":%d,"type":"agent_message","text":"from the future"}\n' % version)


def test_a_newer_record_raises_naming_both_versions(store: SessionStore) -> None:
    path = _log_with(store, "one")
    _newer(path, 7)
    with SessionLog(path) as log:
        records = iter(log)
        assert isinstance(next(records), AgentMessageRecord)
        with pytest.raises(UnsupportedVersionError) as caught:
            next(records)
    error = caught.value
    assert (error.found, error.supported, error.line) == (7, 2, 3)
    assert "schema version 7" in str(error) and "versions up to 2" in str(error)
    assert str(path) in str(error)


def test_a_newer_header_is_refused_on_open(store: SessionStore) -> None:
    path = _log_with(store, "one")
    path.write_bytes(path.read_bytes().replace(b'"v":2', b'"v":3', 1))
    with pytest.raises(UnsupportedVersionError, match="schema version 3"):
        store.open_log("s1")
    with pytest.raises(UnsupportedVersionError):
        store.reopen("s1")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "the log is empty"),
        (b'{"v":1,"type":"header","sessionId":"s1"', "torn"),
        (b'{"v":1,"type":"mode_change","mode":"m"}\n', "first record is not a header"),
        (b"garbage\n", "not JSON"),
    ],
)
def test_a_log_without_a_readable_header_is_corrupt(
    store: SessionStore, content: bytes, reason: str
) -> None:
    store.directory.mkdir(parents=True)
    store.path_of("s1").write_bytes(content)
    with pytest.raises(CorruptLogError, match=reason):
        store.open_log("s1")


def test_reopening_cuts_a_torn_tail_before_appending(
    store: SessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    path = _log_with(store, "one")
    with open(path, "ab") as stream:
        stream.write(b'{"v":1,"type":"agent_message","text":"tw')
    with caplog.at_level(logging.WARNING), store.reopen("s1") as writer:
        writer.agent_text("three")
    assert "cut off a torn last record (40 bytes)" in caplog.text
    caplog.clear()
    assert _texts(path) == ["one", "three"]
    assert caplog.text == ""  # the log is whole again


_KILLED_WRITER = """
import sys
from acp_sidecar.store import SessionStore
store = SessionStore(sys.argv[1], fsync="never")
with store.create("victim", "/work/project") as writer:
    print("ready", flush=True)
    for n in range(10_000_000):
        writer.tool_call(f"call-{n}", "run", {"n": n, "pad": "x" * 3000})
        if n % 50 == 49:
            writer.end_turn("end_turn")
"""


@pytest.mark.process
def test_sigkill_mid_write_loses_nothing_committed(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _KILLED_WRITER, str(tmp_path)],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None
    assert child.stdout.readline() == b"ready\n"
    path = tmp_path / "victim.jsonl"
    deadline = time.monotonic() + 60  # a hang guard
    while path.stat().st_size < 2_000_000:
        assert time.monotonic() < deadline, "the writer never wrote 2 MB"
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL

    data = path.read_bytes()
    committed = data.count(b"\n") - 1  # the header
    whole = data.rfind(b"\n") + 1
    with SessionLog(path) as log:
        records = list(log)
    assert len(records) == committed > 500
    calls = [r for r in records if isinstance(r, ToolCallRecord)]
    assert [c.call_id for c in calls] == [f"call-{n}" for n in range(len(calls))]
    assert all(isinstance(r, TurnEndRecord) for r in records[50::51])

    # The session continues in a new process: the log is appended to, not clobbered.
    store = SessionStore(tmp_path, fsync="never")
    with store.reopen("victim") as writer:
        writer.agent_text("continued")
    added = path.read_bytes()[whole:]
    assert path.read_bytes()[:whole] == data[:whole]
    assert added.count(b"\n") == 1 and decode_line(added) == AgentMessageRecord(text="continued")
    with SessionLog(path) as log:
        assert list(log)[-1] == AgentMessageRecord(text="continued")
