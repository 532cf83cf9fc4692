"""A log written by version 1 of the store (no times, no permission records) still loads and
replays exactly as it did: the golden log and the updates version 1 drew from it are committed
under ``tests/fixtures/store``."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

from acp_sidecar.bridge.message_ids import derived_message_id
from acp_sidecar.bridge.replay import load_notifications
from acp_sidecar.store import (
    AgentMessageRecord,
    AgentThoughtRecord,
    GapRecord,
    History,
    NoticeRecord,
    SessionStore,
    ToolCallRecord,
    UserMessageRecord,
)
from tests.acp_schema import validate_agent_message
from tests.bridge.test_replay_repeats import CTX, registry

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "store"
SESSION = "v1-golden"


def golden_store(tmp_path: Path) -> SessionStore:
    store = SessionStore(tmp_path / "sessions", fsync="never")
    store.directory.mkdir(parents=True)
    shutil.copyfile(FIXTURES / f"{SESSION}.jsonl", store.path_of(SESSION))
    return store


def test_the_fixture_is_a_version_1_log() -> None:
    lines = (FIXTURES / f"{SESSION}.jsonl").read_bytes().splitlines()
    assert len(lines) == 18
    assert all(json.loads(line)["v"] == 1 and "t" not in json.loads(line) for line in lines)


_CHUNKS = ("user_message_chunk", "agent_message_chunk", "agent_thought_chunk")


def _chunk_kind(record: object) -> str | None:
    """The chunk a record draws on the agent's side, if it draws one in the conversation."""
    if isinstance(record, AgentThoughtRecord):
        return "thought"
    if isinstance(record, AgentMessageRecord | GapRecord):
        return "message"
    if isinstance(record, NoticeRecord) and record.severity is None:
        return "message"
    return None


def test_a_version_1_log_replays_to_the_updates_version_1_drew(tmp_path: Path) -> None:
    """What version 1 drew, plus what ACP added since: each chunk's ``messageId`` (derived
    from the record's position: the log has none) and each card's tool ``name``."""
    store = golden_store(tmp_path)
    drawn: list[dict[str, Any]] = json.loads((FIXTURES / f"{SESSION}.replay.json").read_text())
    with store.open_log(SESSION) as log:
        log.check_versions()
        assert log.header.at is None and log.header.mode == "ask"
        updates = list(load_notifications(SESSION, log.header, log, registry().get, CTX))
    with store.open_log(SESSION) as log:
        records = list(log)
    ids: list[str] = []  # each chunk's, one per prompt block
    run: tuple[str, int] | None = None  # the kind and position of the last agent-side chunk
    for position, record in enumerate(records, 1):
        own = derived_message_id(SESSION, position)
        kind = _chunk_kind(record)
        if isinstance(record, UserMessageRecord):
            ids += [own] * len(record.content)
        elif kind is not None:  # text that followed text of its kind was one message
            joins = run is not None and run[0] == kind and run[1] == position - 1
            ids.append(ids[-1] if joins else own)
            run = (kind, position)
        elif isinstance(record, NoticeRecord):
            ids.append(own)
    chunk_ids = iter(ids)
    names = iter(record.name for record in records if isinstance(record, ToolCallRecord))
    expected = copy.deepcopy(drawn)
    for message in expected:
        update = message["params"]["update"]
        if update["sessionUpdate"] in _CHUNKS:
            update["messageId"] = next(chunk_ids)
        elif update["sessionUpdate"] == "tool_call":
            update["name"] = next(names)
    assert next(chunk_ids, None) is None and next(names, None) is None
    assert updates == expected
    for message in updates:
        validate_agent_message(message)
    with store.open_log(SESSION) as log:  # a second load names every message alike
        assert list(load_notifications(SESSION, log.header, log, registry().get, CTX)) == updates


def test_a_version_1_log_has_no_times_and_the_same_history(tmp_path: Path) -> None:
    store = golden_store(tmp_path)
    with store.open_log(SESSION) as log:
        records = list(log)
    assert len(records) == 17 and all(record.at is None for record in records)
    with store.open_log(SESSION) as log:
        items = list(History(log))
    prompts = [item for item in items if isinstance(item, UserMessageRecord)]
    calls = [item.call_id for item in items if isinstance(item, ToolCallRecord)]
    assert len(prompts) == 3 and calls == ["call-1", "call-2", "call-3", "call-4"]


def test_a_version_1_log_is_continued_in_version_2(tmp_path: Path) -> None:
    store = golden_store(tmp_path)
    with store.reopen(SESSION) as writer:
        writer.agent_text("continued")
        writer.end_turn("end_turn")
    lines = store.path_of(SESSION).read_bytes().splitlines()
    assert [json.loads(line)["v"] for line in lines[-2:]] == [2, 2]
    assert all("t" in json.loads(line) for line in lines[-2:])
    with store.open_log(SESSION) as log:
        log.check_versions()
        records = list(log)
    assert records[-1].at is not None and records[-3].at is None
    assert store.summary(SESSION).title == "Fix the failing test in app.py, please"
