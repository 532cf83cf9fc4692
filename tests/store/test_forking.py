"""Forking a stored log: what is copied, where a running turn is cut, what is left alone."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.store import (
    LOCK_FILE,
    HeaderRecord,
    SessionExistsError,
    SessionLockedError,
    SessionNotFoundError,
    SessionStore,
    SessionWriter,
    TurnEndRecord,
    UnsupportedVersionError,
)
from acp_sidecar.store.codec import decode_line, encode_record
from acp_sidecar.store.forking import FORK_STOP_REASON, fork_title
from acp_sidecar.store.listing import TITLE_MAX
from acp_sidecar.tools.content import TextContent
from acp_sidecar.tools.result import ToolExecutionResult
from tests.store.samples import CWD

PROMPT = [{"type": "text", "text": "look around"}]
FORK_CWD = "/elsewhere"


def result(call_id: str) -> ToolExecutionResult:
    return ToolExecutionResult(call_id=call_id, content=[TextContent("ok")], is_error=False)


def finished_turn(writer: SessionWriter) -> None:
    writer.user_message(PROMPT)
    writer.agent_text("looked")
    writer.tool_call("call_a", "look", {"path": "a"})
    writer.tool_result(result("call_a"))
    writer.agent_text("done")
    writer.end_turn("end_turn")


def lines(store: SessionStore, session_id: str) -> list[bytes]:
    return store.path_of(session_id).read_bytes().splitlines(keepends=True)


def kinds(store: SessionStore, session_id: str) -> list[tuple[str, Any]]:
    out = []
    for line in lines(store, session_id)[1:]:
        data = json.loads(line)
        what = data.get("text") or data.get("callId") or data.get("stopReason")
        out.append((data["type"], what or data.get("result", {}).get("callId")))
    return out


def test_a_fork_of_finished_turns_copies_every_record_byte_for_byte(store: SessionStore) -> None:
    with store.create("parent", CWD, mode="auto") as writer:
        finished_turn(writer)
        writer.mode_change("read-only")
        finished_turn(writer)
    before = store.path_of("parent").read_bytes()
    store.fork("parent", "child", FORK_CWD, title="Fork: look around")
    assert store.path_of("parent").read_bytes() == before
    assert lines(store, "child")[1:] == lines(store, "parent")[1:]
    header = decode_line(lines(store, "child")[0])
    assert isinstance(header, HeaderRecord)
    assert (header.session_id, header.cwd, header.mode) == ("child", FORK_CWD, "auto")
    assert header.title == "Fork: look around"
    assert store.summary("child").title == "Fork: look around"
    assert store.summary("parent").title == "look around"
    assert sorted(os.listdir(store.directory)) == [LOCK_FILE, "child.jsonl", "parent.jsonl"]


def test_the_forks_roots_are_its_own(store: SessionStore) -> None:
    with store.create("parent", CWD, additional_directories=("/lib",)) as writer:
        finished_turn(writer)
        writer.directories_change(["/other"])
    store.fork("parent", "child", FORK_CWD, additional_directories=("/mine",))
    assert ("directories", None) not in kinds(store, "child")
    assert [k for k, _ in kinds(store, "child")] == [k for k, _ in kinds(store, "parent")][:-1]
    assert store.summary("child").additional_directories == ("/mine",)
    store.fork("parent", "bare", FORK_CWD)
    assert store.summary("bare").additional_directories == ()


def test_a_running_turn_is_cut_after_its_last_finished_tool_batch(store: SessionStore) -> None:
    with store.create("parent", CWD) as writer:
        finished_turn(writer)
        writer.user_message(PROMPT)
        writer.tool_call("call_b", "look", {})
        writer.tool_call("call_c", "look", {})
        writer.tool_result(result("call_b"))
        writer.tool_result(result("call_c"))  # the batch is finished here
        writer.agent_text("next")
        writer.tool_call("call_d", "look", {})
        writer.tool_call("call_e", "look", {})
        writer.tool_result(result("call_d"))  # call_e still runs
        before = store.path_of("parent").read_bytes()
        store.fork("parent", "child", FORK_CWD)  # the parent's writer holds its lock meanwhile
        assert store.path_of("parent").read_bytes() == before
        with pytest.raises(SessionLockedError):
            store.reopen("parent")
    copied = kinds(store, "child")
    assert copied[6:] == [
        ("user_message", None),
        ("tool_call", "call_b"),
        ("tool_call", "call_c"),
        ("tool_result", "call_b"),
        ("tool_result", "call_c"),
        ("turn_end", FORK_STOP_REASON),
    ]
    assert lines(store, "child")[1:-1] == lines(store, "parent")[1:12]
    assert isinstance(decode_line(lines(store, "child")[-1]), TurnEndRecord)


def test_a_running_turn_without_a_finished_step_is_left_out(store: SessionStore) -> None:
    with store.create("parent", CWD) as writer:
        finished_turn(writer)
        writer.user_message(PROMPT)
        writer.agent_text("thinking")
        writer.tool_call("call_b", "look", {})  # writes the text: on disk, not finished
        store.fork("parent", "child", FORK_CWD)
    assert lines(store, "child")[1:] == lines(store, "parent")[1:7]
    assert kinds(store, "child")[-1] == ("turn_end", "end_turn")


def test_records_between_turns_are_finished_steps(store: SessionStore) -> None:
    with store.create("parent", CWD) as writer:
        writer.mode_change("auto")
        writer.config_change("model", "small")
    store.fork("parent", "child", FORK_CWD)
    assert lines(store, "child")[1:] == lines(store, "parent")[1:]


def test_damage_and_a_torn_tail_are_not_copied(store: SessionStore) -> None:
    with store.create("parent", CWD) as writer:
        finished_turn(writer)
    with open(store.path_of("parent"), "ab") as log:
        log.write(b"not json\n")
        log.write(encode_record(TurnEndRecord(stop_reason="end_turn")))
        log.write(b'{"v":2,"type":"user_mes')
    store.fork("parent", "child", FORK_CWD)
    copied = lines(store, "child")[1:]
    assert b"not json\n" not in copied
    assert copied == [*lines(store, "parent")[1:7], lines(store, "parent")[8]]


def test_a_newer_record_refuses_the_fork_and_leaves_nothing(store: SessionStore) -> None:
    with store.create("parent", CWD) as writer:
        finished_turn(writer)
    with open(store.path_of("parent"), "ab") as log:
        log.write(b'{"v":99,"type":"hologram"}\n')
    with pytest.raises(UnsupportedVersionError):
        store.fork("parent", "child", FORK_CWD)
    assert sorted(os.listdir(store.directory)) == [LOCK_FILE, "parent.jsonl"]


def test_unknown_parents_and_taken_ids_are_refused(store: SessionStore) -> None:
    with pytest.raises(SessionNotFoundError):
        store.fork("nobody", "child", FORK_CWD)
    with pytest.raises(SessionNotFoundError):
        store.fork("../escape", "child", FORK_CWD)
    with store.create("parent", CWD) as writer:
        finished_turn(writer)
    store.create("taken", CWD).close()
    taken = store.path_of("taken").read_bytes()
    with pytest.raises(SessionExistsError):
        store.fork("parent", "taken", FORK_CWD)
    assert store.path_of("taken").read_bytes() == taken
    with pytest.raises(ValueError, match="absolute"):
        store.fork("parent", "child", "relative")
    assert not [name for name in os.listdir(store.directory) if name.endswith(".fork")]


def test_a_fork_is_a_session_like_any(store: SessionStore) -> None:
    with store.create("parent", CWD) as writer:
        finished_turn(writer)
    store.fork("parent", "child", FORK_CWD)
    with store.reopen("child") as writer:
        writer.user_message([{"type": "text", "text": "more"}])
        writer.end_turn("end_turn")
    assert {s.session_id for s in store.list().sessions} == {"parent", "child"}
    store.delete("child")
    assert [s.session_id for s in store.list().sessions] == ["parent"]


def test_the_header_title_is_optional_and_decodes_both_ways() -> None:
    line = b'{"v":2,"type":"header","sessionId":"s","cwd":"/w","created":"2026-01-01T00:00:00Z"}'
    old = decode_line(line)
    assert isinstance(old, HeaderRecord) and old.title is None
    assert b'"title"' not in encode_record(old)  # logs without a fork stay as they were
    titled = decode_line(line[:-1] + b',"title":"Fork: x"}')
    assert isinstance(titled, HeaderRecord) and titled.title == "Fork: x"
    assert decode_line(encode_record(titled)) == titled


def test_fork_titles() -> None:
    assert fork_title("fix the bug") == "Fork: fix the bug"
    assert fork_title("Fork: fix the bug") == "Fork: Fork: fix the bug"
    assert fork_title(None) is None
    long = fork_title("word " * 40)
    assert long is not None and long.startswith("Fork: word") and len(long) <= TITLE_MAX


def test_a_fork_is_written_aside_then_linked(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader never sees a half-copied fork: the name appears with the whole log."""
    with store.create("parent", CWD) as writer:
        for _ in range(50):
            finished_turn(writer)
    seen: list[int] = []
    real_link = os.link

    def link(source: Any, target: Any) -> None:
        seen.append(len(Path(source).read_bytes().splitlines()))
        assert not Path(target).exists()
        real_link(source, target)

    monkeypatch.setattr(os, "link", link)
    store.fork("parent", "child", FORK_CWD)
    assert seen == [len(lines(store, "parent"))]
