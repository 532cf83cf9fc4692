"""Appending: coalesced agent text, the fsync policies, the lock, failed writes, bad calls."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from acp_sidecar.bridge.runner import EventSink
from acp_sidecar.store import (
    AgentMessageRecord,
    AgentThoughtRecord,
    InvalidSessionIdError,
    ModeChangeRecord,
    Record,
    SessionExistsError,
    SessionLockedError,
    SessionLog,
    SessionNotFoundError,
    SessionStore,
    StoreWriteError,
    ToolCallRecord,
    ToolResultRecord,
    TurnEndRecord,
    UserMessageRecord,
    WriterClosedError,
)
from acp_sidecar.store.codec import decode_line
from acp_sidecar.tools.json_values import freeze_json
from tests.store.samples import CWD, ok_result

ROOT = Path(__file__).resolve().parents[2]


def _records(store: SessionStore, session_id: str = "s1") -> list[Record]:
    with store.open_log(session_id) as log:
        return list(log)


def test_agent_chunks_coalesce_into_one_record_per_message(store: SessionStore) -> None:
    with store.create("s1", CWD) as writer:
        writer.user_message([{"type": "text", "text": "hi"}])
        for chunk in ["Hel", "", "lo"]:
            writer.agent_text(chunk)
        writer.agent_thought("think")
        writer.agent_thought("ing")
        writer.agent_text("A")
        writer.end_message()
        writer.agent_text("B")  # a new message after an explicit end
        writer.tool_call("c1", "read", {"path": "a"})
        writer.agent_text("after")
        writer.end_turn("end_turn")
        writer.agent_text("unterminated")  # written on close
    assert _records(store) == [
        UserMessageRecord(content=freeze_json([{"type": "text", "text": "hi"}])),  # type: ignore[arg-type]
        AgentMessageRecord(text="Hello"),
        AgentThoughtRecord(text="thinking"),
        AgentMessageRecord(text="A"),
        AgentMessageRecord(text="B"),
        ToolCallRecord(call_id="c1", name="read", arguments=freeze_json({"path": "a"})),
        AgentMessageRecord(text="after"),
        TurnEndRecord(stop_reason="end_turn"),
        AgentMessageRecord(text="unterminated"),
    ]


def test_each_record_is_in_the_file_when_its_method_returns(store: SessionStore) -> None:
    with store.create("s1", CWD) as writer:
        writer.mode_change("m")
        last = store.path_of("s1").read_bytes().splitlines(keepends=True)[-1]
        assert decode_line(last) == ModeChangeRecord("m")
        writer.agent_text("pending")  # coalescing: not yet
        assert b"pending" not in store.path_of("s1").read_bytes()


async def test_the_bridge_event_sink_records_calls_and_results(store: SessionStore) -> None:
    event = ToolCallRecord(call_id="call-1", name="run", arguments=freeze_json({"cmd": "ls"}))
    with store.create("s1", CWD) as writer:
        record: EventSink = writer.record_call_event  # what run_call(record=…) takes
        await record(event, None)
        await record(event, ok_result("call-1"))
    assert _records(store) == [
        ToolCallRecord(call_id="call-1", name="run", arguments=freeze_json({"cmd": "ls"})),
        ToolResultRecord(result=ok_result("call-1")),
    ]


def test_short_writes_are_completed_before_anything_else(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = store.create("s1", CWD)
    real_write = os.write
    sizes: list[int] = []

    def dribbling(fd: int, data: bytes) -> int:
        sizes.append(len(data))
        return real_write(fd, bytes(data[:7]))  # a pipe or a full disk may take only some

    monkeypatch.setattr(os, "write", dribbling)
    writer.user_message([{"type": "text", "text": "hi"}])
    writer.agent_text("a longer answer")
    writer.end_turn("end_turn")
    monkeypatch.undo()
    writer.close()
    assert len(sizes) > 3
    assert _records(store) == [
        UserMessageRecord(content=freeze_json([{"type": "text", "text": "hi"}])),  # type: ignore[arg-type]
        AgentMessageRecord(text="a longer answer"),
        TurnEndRecord(stop_reason="end_turn"),
    ]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # header (file + directory), the turn end; close has nothing new to sync
        ("turn", [2, 2, 3, 3]),
        ("record", [2, 5, 6, 6]),  # … and after every record instead of the turn end
        ("never", [0, 0, 0, 0]),
    ],
)
def test_fsync_policies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policy: str, expected: list[int]
) -> None:
    syncs = _count_syncs(monkeypatch)
    store = SessionStore(tmp_path, fsync=policy)  # type: ignore[arg-type]
    counts = []
    writer = store.create("s1", CWD)
    counts.append(len(syncs))
    writer.user_message([{"type": "text", "text": "hi"}])
    writer.agent_text("a")
    writer.tool_call("c", "n", None)  # writes the agent message, then the call
    counts.append(len(syncs))
    writer.end_turn("end_turn")
    counts.append(len(syncs))
    writer.close()
    counts.append(len(syncs))
    assert counts == expected


def _count_syncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The descriptor of each ``os.fsync`` from now on, in order (they still sync)."""
    calls: list[int] = []
    real_fsync = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return calls


def test_a_turn_that_wrote_nothing_new_is_not_synced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SessionStore(tmp_path)
    writer = store.create("s1", CWD)
    writer.user_message([{"type": "text", "text": "hi"}])
    writer.agent_text("hello")
    writer.end_turn("end_turn")
    syncs = _count_syncs(monkeypatch)
    writer.agent_text("")  # an empty chunk writes nothing
    writer.end_message()
    writer.sync()
    writer.close()
    assert syncs == []


def test_a_reopened_log_is_synced_once_even_if_nothing_is_appended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An earlier writer's records may never have been synced (its policy, its crash).
    SessionStore(tmp_path, fsync="never").create("s1", CWD).close()
    store = SessionStore(tmp_path)
    syncs = _count_syncs(monkeypatch)
    writer = store.reopen("s1")
    writer.sync()
    writer.sync()
    writer.close()
    assert len(syncs) == 1


def test_what_is_appended_after_a_sync_is_synced_at_the_next_turn_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SessionStore(tmp_path)
    writer = store.create("s1", CWD)
    writer.end_turn("end_turn")
    syncs = _count_syncs(monkeypatch)
    writer.agent_text("reply")
    writer.end_turn("end_turn")  # the turn did something: synced at its end
    assert len(syncs) == 1
    writer.agent_text("more")
    writer.close()  # the pending text is written, so synced
    assert len(syncs) == 2


def test_an_empty_turn_is_synced_with_the_next_turn_that_does_something(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SessionStore(tmp_path)
    writer = store.create("s1", CWD)
    syncs = _count_syncs(monkeypatch)
    writer.user_message([{"type": "text", "text": "ping"}])
    writer.end_turn("end_turn")  # only the prompt and its end: no sync
    assert syncs == []
    writer.user_message([{"type": "text", "text": "hi"}])
    writer.notice("the model is not configured")
    size = writer.path.stat().st_size
    writer.end_turn("end_turn")  # this one did something: one sync covers both turns
    assert len(syncs) == 1
    writer.user_message([{"type": "text", "text": "ping"}])
    writer.end_turn("cancelled")
    writer.close()  # close syncs the empty turn left unsynced
    assert len(syncs) == 2
    assert writer.path.stat().st_size > size
    assert [type(r).__name__ for r in _records(store)[-2:]] == [
        "UserMessageRecord",
        "TurnEndRecord",
    ]


def test_a_turn_continued_by_a_reopened_writer_is_synced_at_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A held log is released mid-turn when every held log is busy; the writer that reopens
    # it cannot know the turn did work, so the turn end is synced.
    store = SessionStore(tmp_path)
    writer = store.create("s1", CWD)
    writer.user_message([{"type": "text", "text": "hi"}])
    writer.agent_text("working on it")
    writer.close()
    writer = store.reopen("s1")
    syncs = _count_syncs(monkeypatch)
    writer.end_turn("end_turn")
    assert len(syncs) == 1
    writer.close()
    assert len(syncs) == 1


def test_an_unknown_fsync_policy_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="fsync policy must be one of"):
        SessionStore(tmp_path, fsync="sometimes")  # type: ignore[arg-type]


_SECOND_WRITER = """
import sys
from acp_sidecar.store import SessionStore, SessionLockedError
try:
    SessionStore(sys.argv[1]).reopen("s1").close()
except SessionLockedError as exc:
    print("locked:", exc)
else:
    print("opened")
"""


def _second_process(directory: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _SECOND_WRITER, str(directory)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
        timeout=30,
    )
    return done.stdout.strip()


@pytest.mark.process
def test_a_second_process_cannot_write_while_the_first_holds_the_log(
    store: SessionStore,
) -> None:
    with store.create("s1", CWD) as writer:
        answer = _second_process(store.directory)
        assert answer.startswith("locked: session log ")
        assert "open for writing in another acp-sidecar process" in answer
        writer.agent_text("still mine")
    assert _second_process(store.directory) == "opened"  # released on close


def test_a_second_writer_in_the_same_process_is_refused_too(store: SessionStore) -> None:
    with store.create("s1", CWD):
        with pytest.raises(SessionLockedError) as caught:
            store.reopen("s1")
        assert caught.value.path == store.path_of("s1")
    store.reopen("s1").close()


def test_creating_an_existing_session_is_refused(store: SessionStore) -> None:
    store.create("s1", CWD).close()
    with pytest.raises(SessionExistsError, match="already has a log"):
        store.create("s1", CWD)


@pytest.mark.parametrize("session_id", ["", "../escape", "a/b", ".hidden", "x" * 129, "é"])
def test_ids_that_cannot_name_a_file_are_refused(store: SessionStore, session_id: str) -> None:
    with pytest.raises(InvalidSessionIdError):
        store.create(session_id, CWD)
    with pytest.raises(SessionNotFoundError):
        store.open_log(session_id)
    with pytest.raises(SessionNotFoundError):
        store.reopen(session_id)
    assert not store.exists(session_id)


def test_unknown_sessions_are_not_found(store: SessionStore) -> None:
    for call in (store.open_log, store.reopen, store.summary):
        with pytest.raises(SessionNotFoundError, match="no stored session 'nope'"):
            call("nope")


def test_cwd_must_be_absolute(store: SessionStore) -> None:
    with pytest.raises(ValueError, match="must be absolute"):
        store.create("s1", "relative/dir")


def test_logs_are_private_to_the_user(store: SessionStore) -> None:
    store.create("s1", CWD).close()
    assert stat.S_IMODE(store.path_of("s1").stat().st_mode) == 0o600


def test_a_closed_writer_refuses_records(store: SessionStore) -> None:
    writer = store.create("s1", CWD)
    writer.close()
    writer.close()  # idempotent
    assert writer.closed
    with pytest.raises(WriterClosedError):
        writer.mode_change("m")
    with pytest.raises(WriterClosedError):
        writer.agent_text("x")


def test_a_failed_write_leaves_no_partial_line(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = store.create("s1", CWD)
    writer.mode_change("before")
    real_write = os.write

    def short_then_full_disk(fd: int, data: bytes | memoryview) -> int:
        real_write(fd, bytes(data[:10]))
        monkeypatch.setattr(os, "write", failing)
        return 10

    def failing(fd: int, data: bytes | memoryview) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", short_then_full_disk)
    with pytest.raises(StoreWriteError, match="No space left on device"):
        writer.mode_change("lost")
    monkeypatch.setattr(os, "write", real_write)
    writer.mode_change("after")
    writer.close()
    assert _records(store) == [ModeChangeRecord("before"), ModeChangeRecord("after")]


def test_a_short_write_is_completed(store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = os.write

    def dribble(fd: int, data: bytes | memoryview) -> int:
        return real_write(fd, bytes(data[:7]))

    with store.create("s1", CWD) as writer:
        monkeypatch.setattr(os, "write", dribble)
        writer.agent_text("a longer message than seven bytes")
        writer.end_message()
        monkeypatch.setattr(os, "write", real_write)
    assert _records(store) == [AgentMessageRecord("a longer message than seven bytes")]


def test_a_log_read_by_path_equals_one_read_by_id(store: SessionStore) -> None:
    with store.create("s1", CWD) as writer:
        writer.mode_change("m")
    path = store.locate("s1")
    assert store.locate(str(path)) == path
    with SessionLog(path) as log:
        assert list(log) == [ModeChangeRecord("m")]
    with pytest.raises(SessionNotFoundError):
        store.locate("nope")


def test_each_message_keeps_its_id_and_a_new_id_ends_the_text_before_it(
    store: SessionStore,
) -> None:
    with store.create("s1", CWD) as writer:
        writer.user_message([{"type": "text", "text": "hi"}], "u1")
        writer.agent_thought("think", "t1")
        writer.agent_text("Hel", "a1")
        writer.agent_text("lo", "a1")
        writer.agent_text("Next", "a2")  # the same kind, another message: another record
        writer.notice("told", None, "a2")
        writer.agent_text("old way")  # no id: as written before ids were
        writer.end_turn("end_turn")
    said = [r for r in _records(store) if not isinstance(r, TurnEndRecord)]
    assert [(type(r).__name__, getattr(r, "text", None), r.message_id) for r in said] == [  # type: ignore[union-attr]
        ("UserMessageRecord", None, "u1"),
        ("AgentThoughtRecord", "think", "t1"),
        ("AgentMessageRecord", "Hello", "a1"),
        ("AgentMessageRecord", "Next", "a2"),
        ("NoticeRecord", "told", "a2"),
        ("AgentMessageRecord", "old way", None),
    ]
    lines = [json.loads(line) for line in store.path_of("s1").read_bytes().splitlines()]
    assert [line.get("id") for line in lines[1:-1]] == ["u1", "t1", "a1", "a2", "a2", None]
    assert "id" not in lines[-2]  # a record without an id is written as before ids were
