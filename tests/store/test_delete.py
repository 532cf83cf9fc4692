"""Deleting a stored session, and where its extra workspace roots are read back from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_sidecar.store import (
    LOCK_FILE,
    SessionLockedError,
    SessionLogUnsafeError,
    SessionNotFoundError,
    SessionStore,
)
from acp_sidecar.store.listing import last_directories
from tests.store.samples import CWD

PROMPT = [{"type": "text", "text": "look around"}]


def _prompted(store: SessionStore, session_id: str, **header: tuple[str, ...]) -> None:
    with store.create(session_id, CWD, mode="ask", **header) as writer:
        writer.user_message(PROMPT)
        writer.end_turn("end_turn")


def test_delete_removes_the_log_and_leaves_nothing_behind(store: SessionStore) -> None:
    _prompted(store, "gone")
    _prompted(store, "kept")
    store.delete("gone")
    assert sorted(os.listdir(store.directory)) == [LOCK_FILE, "kept.jsonl"]
    assert (store.directory / LOCK_FILE).stat().st_size == 0  # it holds no session's data
    assert [s.session_id for s in store.list().sessions] == ["kept"]
    with pytest.raises(SessionNotFoundError):
        store.open_log("gone")
    with pytest.raises(SessionNotFoundError):
        store.delete("gone")
    with pytest.raises(SessionNotFoundError):
        store.delete("../kept")  # not a session id: never reaches outside the store


def test_a_log_being_written_is_not_deleted(store: SessionStore) -> None:
    _prompted(store, "busy")
    with store.reopen("busy"):  # the lock another writer (another process) would hold
        with pytest.raises(SessionLockedError):
            store.delete("busy")
        assert store.exists("busy")
    store.delete("busy")  # released: now it goes
    assert not store.exists("busy")


def test_a_link_at_a_logs_name_is_refused_and_left_alone(
    store: SessionStore, tmp_path: Path
) -> None:
    _prompted(store, "real")
    target = tmp_path / "elsewhere.jsonl"
    target.write_bytes((store.directory / "real.jsonl").read_bytes())
    (store.directory / "linked.jsonl").symlink_to(target)
    with pytest.raises(SessionLogUnsafeError, match="symbolic link"):
        store.delete("linked")
    assert (store.directory / "linked.jsonl").is_symlink() and target.exists()


def test_a_writer_that_opened_a_log_just_before_it_was_deleted_does_not_append(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The log is unlinked under its lock; a writer that opened it just before must not write
    # to the orphaned file once it gets the lock (nobody could find what it wrote).
    from acp_sidecar.store import writer as writer_module

    _prompted(store, "raced")
    real_lock = writer_module.lock_log

    def lock_after_delete(fd: int, path: Path) -> None:
        os.unlink(path)  # session/delete ran between this writer's open and its lock
        real_lock(fd, path)

    monkeypatch.setattr(writer_module, "lock_log", lock_after_delete)
    with pytest.raises(SessionNotFoundError):
        store.reopen("raced")


def test_the_last_directories_change_is_what_listing_reports(store: SessionStore) -> None:
    _prompted(store, "roots", additional_directories=("/lib",))
    assert store.list().sessions[0].additional_directories == ("/lib",)
    with store.reopen("roots") as writer:
        # A tool's arguments holding the marker's text as an object key do not count.
        writer.tool_call("c1", "note", {"type": "directories", "additionalDirectories": ["/x"]})
        writer.directories_change(["/docs", "/lib"])
        writer.user_message(PROMPT)
        writer.tool_call("c2", "note", {"type": "directories", "additionalDirectories": ["/y"]})
    assert store.list().sessions[0].additional_directories == ("/docs", "/lib")
    assert last_directories(store.path_of("roots")) == ("/docs", "/lib")


def test_a_directories_change_far_from_the_end_is_found(store: SessionStore) -> None:
    _prompted(store, "long")
    with store.reopen("long") as writer:
        writer.directories_change([])  # cleared: none, not the header's
        for index in range(3000):  # about 300 KB after it: more than one search block
            writer.agent_text(f"line {index} " + "x" * 80)
            writer.end_message()
    assert last_directories(store.path_of("long")) == ()
    _prompted(store, "never")
    assert last_directories(store.path_of("never")) is None
