"""The store trusts nothing it finds: links, another session's header, repeated lines, a newer
record anywhere in the log."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_sidecar.store import (
    AgentMessageRecord,
    GapRecord,
    History,
    SessionLogUnsafeError,
    SessionStore,
    ToolCallRecord,
    ToolResultRecord,
    UnsupportedVersionError,
)
from tests.store.samples import CWD, ok_result


def stored(store: SessionStore, session_id: str = "s1") -> Path:
    with store.create(session_id, CWD) as log:
        log.user_message([{"type": "text", "text": "hi"}])
        log.tool_call("call-1", "run", {"cmd": "ls"})
        log.tool_result(ok_result("call-1"))
        log.agent_text("done")
        log.end_turn("end_turn")
    return store.path_of(session_id)


def test_a_symlinked_log_is_neither_read_nor_appended_to(
    store: SessionStore, tmp_path: Path
) -> None:
    path = stored(store)
    outside = tmp_path / "outside.jsonl"
    path.rename(outside)
    path.symlink_to(outside)
    before = outside.read_bytes()
    with pytest.raises(SessionLogUnsafeError, match="is a symbolic link"):
        store.open_log("s1")
    with pytest.raises(SessionLogUnsafeError, match="is a symbolic link"):
        store.reopen("s1")
    assert outside.read_bytes() == before
    assert not store.exists("s1") and store.list().sessions == ()


def test_a_hard_linked_log_is_neither_read_nor_appended_to_nor_listed(
    store: SessionStore, tmp_path: Path
) -> None:
    # A second name for the file: what is appended there is appended to the other file too,
    # and whoever can write it under that name can change the session under this one.
    path = stored(store)
    outside = tmp_path / "outside.jsonl"
    os.link(path, outside)
    before = outside.read_bytes()
    for attempt in (store.open_log, store.reopen, store.delete, store.summary):
        with pytest.raises(SessionLogUnsafeError, match="has 2 names"):
            attempt("s1")
    assert store.list().sessions == ()
    assert outside.read_bytes() == before and path.exists()
    outside.unlink()  # one name again: the log is the session's own
    assert [s.session_id for s in store.list().sessions] == ["s1"]
    with store.reopen("s1") as log:
        log.agent_text("more")


def test_a_header_naming_another_session_is_refused(store: SessionStore) -> None:
    path = stored(store)
    path.rename(store.path_of("s2"))
    with pytest.raises(SessionLogUnsafeError, match="holds session 's1', not 's2'"):
        store.open_log("s2")
    with pytest.raises(SessionLogUnsafeError, match="holds session 's1', not 's2'"):
        store.reopen("s2")
    assert store.list().sessions == ()


def test_repeated_call_ids_are_skipped_and_repeated_text_kept(store: SessionStore) -> None:
    path = stored(store)
    with store.open_log("s1") as log:
        expected = list(log)
    lines = path.read_bytes().splitlines(keepends=True)
    # The call and its result doubled in place and again later; the agent text doubled in
    # place and again later: text is kept (it is the user's or agent's own), cards are not.
    call, result, text = lines[2], lines[3], lines[4]
    path.write_bytes(b"".join([*lines[:3], call, result, result, text, *lines[4:], call, text]))
    with store.open_log("s1") as log:
        records = list(log)
    done = AgentMessageRecord(text="done")
    assert records == [*expected[:3], done, *expected[3:], done]
    assert sum(isinstance(r, ToolCallRecord) for r in records) == 1
    assert sum(isinstance(r, ToolResultRecord) for r in records) == 1


def test_a_prompt_retried_after_a_crash_is_kept_twice(store: SessionStore) -> None:
    # The process died right after recording the prompt; the user loads and sends it again.
    prompt = [{"type": "text", "text": "fix the failing test"}]
    crashed = store.create("s1", CWD)
    crashed.user_message(prompt)
    crashed.close()
    with store.reopen("s1") as log:
        log.user_message(prompt)
        log.agent_text("Done.")
        log.end_turn("end_turn")
    with store.open_log("s1") as log:
        kinds = [type(r).__name__ for r in log]
    assert kinds == [
        "UserMessageRecord",
        "UserMessageRecord",
        "AgentMessageRecord",
        "TurnEndRecord",
    ]
    with store.open_log("s1") as log:
        items = list(History(log))
    assert [type(i).__name__ for i in items] == kinds[:3]


@pytest.mark.parametrize(
    "newer",
    [
        b'{"v":3,"type":"agent_message","text":"x"}\n',
        b'{"v":1,"type":"agent_message","text":"x","v":3}\n',  # JSON lets the last key win
        b'{"v":2,"type":"agent_message","text":"x","v":3}\n',  # in today's form too
        b'{"v":1,"type":"agent_message","text":"x","v" :3}\n',  # spaced before the colon
        b'{"v":2,"type":"agent_message","text":"x","\\u0076":3}\n',  # "v" spelled escaped
    ],
)
def test_a_newer_record_anywhere_is_found_before_reading(store: SessionStore, newer: bytes) -> None:
    path = stored(store)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*lines[:3], newer, *lines[3:]]))
    with store.open_log("s1") as log, pytest.raises(UnsupportedVersionError, match="line 4"):
        log.check_versions()
    path.write_bytes(b"".join(lines))
    with store.open_log("s1") as log:
        log.check_versions()
        assert len(list(log)) == 5  # still iterable from the first record


def test_a_gap_marker_is_written_and_read_back(store: SessionStore) -> None:
    stored(store)
    with store.reopen("s1") as log:
        log.gap("could not append: [Errno 28] No space left on device")
    with store.open_log("s1") as log:
        assert list(log)[-1] == GapRecord(
            reason="could not append: [Errno 28] No space left on device"
        )
