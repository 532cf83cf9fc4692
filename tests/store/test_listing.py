"""Listing: newest first, cwd filter, titles, cursor paging, damaged logs, the directory."""

from __future__ import annotations

import logging
import os
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.store import (
    STORE_ENV,
    InvalidCursorError,
    SessionStore,
    default_store_dir,
    read_summary,
    resolve_store_dir,
    shorten,
)
from acp_sidecar.store.listing import last_directories
from tests.store.samples import CREATED, CWD

OTHER = "/work/other"
BASE_NS = 1_700_000_000 * 10**9


IMAGE_ONLY = [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]


def _session(
    store: SessionStore,
    session_id: str,
    cwd: str,
    minute: int,
    prompt: str | list[dict[str, str]] | None = None,
) -> None:
    with store.create(session_id, cwd, mode="default", created_at=CREATED) as writer:
        writer.mode_change("code")
        writer.config_change("model", "qwen3:8b")  # a choice, like a mode, is no prompt
        if prompt is not None:
            blocks = [{"type": "text", "text": prompt}] if isinstance(prompt, str) else prompt
            writer.user_message(blocks)
            writer.agent_text("reply")
            writer.user_message([{"type": "text", "text": "second prompt"}])
    mtime = BASE_NS + minute * 60 * 10**9
    os.utime(store.path_of(session_id), ns=(mtime, mtime))


@pytest.fixture
def listed(store: SessionStore) -> SessionStore:
    _session(store, "a", CWD, 1, "first of a")
    _session(store, "b", OTHER, 5, "first of b")
    _session(store, "c", CWD, 3, "first of c")
    _session(store, "d", CWD, 3, IMAGE_ONLY)  # ties with c: ordered by id; no title
    _session(store, "e", CWD, 9, "  fix\n the   tests  ")
    _session(store, "f", CWD, 12, None)  # never prompted: loadable, not listed
    return store


def test_sessions_are_listed_newest_first_with_titles(listed: SessionStore) -> None:
    page = listed.list()
    assert [s.session_id for s in page.sessions] == ["e", "b", "c", "d", "a"]
    assert page.next_cursor is None
    first = page.sessions[0]
    assert first.title == "fix the tests"
    assert first.cwd == CWD and first.mode == "default"
    assert first.created_at == CREATED
    assert first.updated_at == datetime.fromtimestamp((BASE_NS + 9 * 60 * 10**9) / 1e9, UTC)
    assert first.path == listed.path_of("e")
    assert page.sessions[3].title is None  # prompted, but with no text to name it by


def test_a_session_never_prompted_is_not_listed(listed: SessionStore) -> None:
    assert "f" not in [s.session_id for s in listed.list().sessions]
    assert "f" not in [s.session_id for s in listed.list(cwd=CWD, limit=1).sessions]
    summary = listed.summary("f")
    assert (summary.prompted, summary.title) == (False, None)
    with listed.open_log("f") as log:  # yet it is there to load
        assert log.header.cwd == CWD


def test_listing_filters_by_cwd(listed: SessionStore) -> None:
    assert [s.session_id for s in listed.list(cwd=CWD).sessions] == ["e", "c", "d", "a"]
    assert [s.session_id for s in listed.list(cwd=OTHER + "/").sessions] == ["b"]
    assert listed.list(cwd="/nowhere").sessions == ()


def test_cursor_paging_visits_every_session_once(listed: SessionStore) -> None:
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = listed.list(cwd=CWD, cursor=cursor, limit=1)
        seen += [s.session_id for s in page.sessions]
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == ["e", "c", "d", "a"]
    assert pages == 4


def test_a_session_updated_between_pages_is_not_repeated(listed: SessionStore) -> None:
    first = listed.list(limit=2)
    assert [s.session_id for s in first.sessions] == ["e", "b"]
    with listed.reopen("e") as writer:  # e moves on; it is not shown again on page two
        writer.agent_text("more")
    second = listed.list(cursor=first.next_cursor, limit=10)
    assert [s.session_id for s in second.sessions] == ["c", "d", "a"]


@pytest.mark.parametrize("cursor", ["", "garbage!", "W10", "WzIsMSwiYSJd"])
def test_foreign_cursors_are_refused(listed: SessionStore, cursor: str) -> None:
    with pytest.raises(InvalidCursorError, match="invalid session list cursor"):
        listed.list(cursor=cursor)


def test_damaged_logs_are_left_out_with_a_warning(
    listed: SessionStore, caplog: pytest.LogCaptureFixture
) -> None:
    listed.path_of("a").write_bytes(b"not a header\n")
    listed.path_of("c").write_bytes(listed.path_of("c").read_bytes().replace(b'"v":2', b'"v":9'))
    (listed.directory / "notes.txt").write_text("ignored")
    (listed.directory / "..bad.jsonl").write_text("ignored")
    (listed.directory / "dir.jsonl").mkdir()
    with caplog.at_level(logging.WARNING):
        assert [s.session_id for s in listed.list().sessions] == ["e", "b", "d"]
    assert "a.jsonl left out of the listing" in caplog.text
    assert "c.jsonl left out of the listing" in caplog.text


def test_a_title_survives_a_newer_record_after_it(store: SessionStore) -> None:
    _session(store, "a", CWD, 1, "hello")
    with open(store.path_of("a"), "ab") as stream:
        stream.write(b'{"v":3,"type":"x"}\n')
    assert store.summary("a").title == "hello"


def test_listing_reads_only_the_head_of_a_log(store: SessionStore) -> None:
    _session(store, "big", CWD, 1, "the title")
    with open(store.path_of("big"), "ab") as stream:
        stream.write(b"\xff garbage that would warn if it were read\n" * 1000)
    assert read_summary(store.path_of("big")).title == "the title"


def test_an_empty_or_missing_store_lists_nothing(tmp_path: Path) -> None:
    assert SessionStore(tmp_path / "never-created").list().sessions == ()


def test_titles_are_shortened_at_a_word() -> None:
    assert shorten("short") == "short"
    long = "word " * 40
    short = shorten(long)
    assert len(short) <= 80 and short.endswith("word…")
    assert shorten("x" * 200) == "x" * 79 + "…"


def test_titles_fall_back_to_a_resource_name(store: SessionStore) -> None:
    with store.create("r", CWD) as writer:
        writer.user_message([{"type": "resource_link", "name": "app.py", "uri": "file:///a"}])
    assert store.summary("r").title == "app.py"


def test_store_directory_override(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(STORE_ENV, raising=False)
    assert SessionStore().directory == default_store_dir()
    assert default_store_dir().parts[-2:] == ("acp-sidecar", "sessions")
    monkeypatch.setenv(STORE_ENV, str(tmp_path / "from-env"))
    assert SessionStore().directory == tmp_path / "from-env"
    assert SessionStore(tmp_path / "explicit").directory == tmp_path / "explicit"
    assert resolve_store_dir(env={STORE_ENV: "~/x"}) == Path.home() / "x"
    assert resolve_store_dir(env={STORE_ENV: ""}) == default_store_dir()


def test_the_env_store_is_where_sessions_land(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(STORE_ENV, str(tmp_path / "env-store"))
    SessionStore(fsync="never").create("s1", CWD).close()
    assert (tmp_path / "env-store" / "s1.jsonl").is_file()


def test_a_notice_before_the_first_prompt_keeps_the_title(store: SessionStore) -> None:
    """A failed MCP server is told (and logged as a notice) before the user says anything."""
    with store.create("n", CWD) as writer:
        writer.notice("The MCP server `git` could not start: no such file.")
        writer.mode_change("code")
        writer.notice("The MCP server `time` could not start either.")
        writer.user_message([{"type": "text", "text": "fix the build"}])
        writer.agent_text("done")
    with store.create("quiet", CWD) as writer:
        writer.notice("The MCP server `git` could not start: no such file.")
    summary = store.summary("n")
    assert (summary.prompted, summary.title) == (True, "fix the build")
    # A notice alone is not a prompt: the session stays out of listings until it has one.
    assert (store.summary("quiet").prompted, store.summary("quiet").title) == (False, None)
    assert [s.session_id for s in store.list().sessions] == ["n"]


# ---- cost: a big log, many sessions ---------------------------------------------------------


def _big(store: SessionStore, session_id: str = "big", megabytes: int = 4) -> None:
    """A session whose first prompt is one line of ``megabytes`` MB (a pasted file)."""
    with store.create(session_id, CWD) as writer:
        writer.user_message([{"type": "text", "text": "x" * (megabytes << 20)}])
        writer.end_turn("end_turn")


class Reads:
    """Counts what the store reads: logs opened, bytes read by position, directory scans."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened: list[str] = []
        self.pread = 0
        self.scans = 0
        real_open, real_pread, real_scandir = os.open, os.pread, os.scandir

        def counting_open(path: Any, *args: Any, **kwargs: Any) -> int:
            if str(path).endswith(".jsonl"):
                self.opened.append(os.path.basename(path))
            return real_open(path, *args, **kwargs)

        def counting_pread(fd: int, size: int, offset: int) -> bytes:
            data = real_pread(fd, size, offset)
            self.pread += len(data)
            return data

        def counting_scandir(path: Any) -> Any:
            self.scans += 1
            return real_scandir(path)

        monkeypatch.setattr(os, "open", counting_open)
        monkeypatch.setattr(os, "pread", counting_pread)
        monkeypatch.setattr(os, "scandir", counting_scandir)

    def clear(self) -> None:
        self.opened.clear()
        self.pread = self.scans = 0


def test_searching_a_long_line_for_the_roots_holds_a_block_not_the_line(
    store: SessionStore,
) -> None:
    _big(store)
    tracemalloc.start()
    try:
        assert last_directories(store.path_of("big")) is None
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20  # the line is 4 MiB; a copy of it (or of a growing part) is not held


def test_a_log_that_did_not_change_is_not_read_again(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _big(store)
    _session(store, "a", CWD, 1, "hello")
    first = store.list()
    reads = Reads(monkeypatch)
    assert store.list() == first
    assert reads.opened == [] and reads.pread == 0


def test_a_log_appended_to_is_searched_from_where_the_last_listing_stopped(
    store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _big(store)
    assert store.list().sessions[0].additional_directories == ()
    size = store.path_of("big").stat().st_size
    with store.reopen("big") as writer:
        writer.directories_change(["/work/extra"])
        writer.end_turn("end_turn")
    appended = store.path_of("big").stat().st_size - size
    reads = Reads(monkeypatch)
    (summary,) = store.list().sessions
    assert summary.additional_directories == ("/work/extra",)
    assert summary.title is not None and summary.title.startswith("xxx")
    assert reads.pread <= appended + 16 * 1024  # a few small reads, not the 4 MiB prompt again


def test_a_log_rewritten_in_place_is_read_again(store: SessionStore) -> None:
    _session(store, "a", CWD, 1, "hello")
    with store.reopen("a") as writer:
        writer.directories_change(["/work/one"])
    assert store.list().sessions[0].additional_directories == ("/work/one",)
    path = store.path_of("a")
    stamp = path.stat()
    path.write_bytes(path.read_bytes().replace(b"/work/one", b"/work/two") + b"\n")
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert store.list().sessions[0].additional_directories == ("/work/two",)


def test_pages_after_the_first_come_from_the_first_pages_scan(
    listed: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = Reads(monkeypatch)
    seen: list[str] = []
    cursor = None
    while True:
        page = listed.list(cursor=cursor, limit=2)
        seen += [s.session_id for s in page.sessions]
        if (cursor := page.next_cursor) is None:
            break
    assert seen == ["e", "b", "c", "d", "a"]
    assert reads.scans == 1


def test_a_session_deleted_or_added_between_pages_is_not_shown_on_later_ones(
    listed: SessionStore,
) -> None:
    first = listed.list(limit=2)
    listed.delete("c")
    _session(listed, "g", CWD, 0, "older than every other, yet new")
    second = listed.list(cursor=first.next_cursor, limit=10)
    assert [s.session_id for s in second.sessions] == ["d", "a"]
    assert "g" in [s.session_id for s in listed.list().sessions]  # a fresh listing has it


def test_a_cursor_from_another_process_pages_the_same(listed: SessionStore) -> None:
    first = listed.list(limit=2)
    elsewhere = SessionStore(listed.directory)  # knows nothing of the first page's scan
    second = elsewhere.list(cursor=first.next_cursor, limit=10)
    assert [s.session_id for s in second.sessions] == ["c", "d", "a"]
