"""The export's fixture, ``tests/fixtures/export/recorded.jsonl``, is a real session log that
still reads and replays, and still holds everything the exports draw.

The log was written by ``acp-sidecar serve`` itself (the recipe is
``tests/fixtures/export/record_session.py``). These tests pin what it holds, record type by
record type, so a later change to the recipe cannot silently drop a case the golden exports
rely on; and its replay (the stream the exports read) must still be valid ACP.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.replay import load_notifications
from acp_sidecar.export.source import StoredSession
from acp_sidecar.render.blocks import ModeSwitched, OptionChanged, PermissionDecided, TurnEnded
from acp_sidecar.store import (
    AgentMessageRecord,
    AgentThoughtRecord,
    ConfigChangeRecord,
    HeaderRecord,
    ModeChangeRecord,
    PermissionAnswerRecord,
    PermissionAskedRecord,
    PermissionRememberedRecord,
    Record,
    SessionLog,
    ToolCallRecord,
    ToolResultRecord,
    TurnEndRecord,
    UsageRecord,
    UserMessageRecord,
)
from acp_sidecar.tools.json_values import thaw
from tests.acp_schema import validate_agent_message
from tests.in_process import Ran, run_cli

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "export" / "recorded.jsonl"
WORKSPACE = "/tmp/acp-sidecar-export-fixture/workspace"
MAX_BYTES = 60 * 1024

R = TypeVar("R")


@pytest.fixture(scope="module")
def log() -> Iterator[tuple[HeaderRecord, list[Record]]]:
    with SessionLog(FIXTURE) as opened:
        opened.check_versions()
        yield opened.header, list(opened)


def of(records: list[Record], kind: type[R]) -> list[R]:
    return [record for record in records if isinstance(record, kind)]


def sent_over_the_wire(header: HeaderRecord, records: list[Record]) -> list[dict[str, Any]]:
    """The ``session/update`` messages ``session/load`` sends for the fixture (before the
    session's info), as the JSON the client reads."""
    lookup = ToolsProvider().registry.get
    ctx = CardContext(cwd=header.cwd, terminal_output=True)
    messages = load_notifications(header.session_id, header, records, lookup, ctx)
    return [json.loads(json.dumps(message)) for message in messages]


def replay(*args: str, store: Path) -> Ran:
    """``acp-sidecar replay FIXTURE ARGS`` (the fixture named by its path), in process."""
    return run_cli(
        "replay",
        str(FIXTURE),
        *args,
        "--store",
        str(store),
        cwd=ROOT,
        env={"COLUMNS": "100", "NO_COLOR": "1"},
    )


def results(records: list[Record]) -> dict[str, ToolResultRecord]:
    return {record.call_id: record for record in of(records, ToolResultRecord)}


def calls(records: list[Record], name: str) -> list[ToolCallRecord]:
    return [call for call in of(records, ToolCallRecord) if call.name == name]


def test_the_fixture_is_a_small_timed_log_of_the_fixed_workspace(
    log: tuple[HeaderRecord, list[Record]],
) -> None:
    header, records = log
    assert FIXTURE.stat().st_size < MAX_BYTES
    assert header.cwd == WORKSPACE and header.mode == "ask"
    assert header.at is not None and all(record.at is not None for record in records)
    times = [record.at for record in records if record.at is not None]
    assert times == sorted(times)


def test_it_holds_the_prompts_thought_and_markdown_replies(
    log: tuple[HeaderRecord, list[Record]],
) -> None:
    _, records = log
    first, *later = of(records, UserMessageRecord)
    assert len(later) == 3
    (block,) = thaw(first.content)
    assert block["type"] == "text"
    assert block["text"].startswith("# ") and "**hello.py**" in block["text"]
    assert "```python\n" in block["text"]
    assert of(records, AgentThoughtRecord)
    reply = of(records, AgentMessageRecord)[0].text
    for part in ("## Done", "\n1. ", "```python\n", "| --- | --- |", "](https://"):
        assert part in reply, part


def test_it_holds_every_tool_the_exports_draw(log: tuple[HeaderRecord, list[Record]]) -> None:
    _, records = log
    done = results(records)

    (plan,) = calls(records, "plan")
    assert len(thaw(plan.arguments)["entries"]) == 3
    (write,) = calls(records, "write")
    assert thaw(done[write.call_id].result.meta)["created"] is True  # a new file
    edits = calls(records, "edit")
    assert len(edits) == 2 and not any(done[e.call_id].result.is_error for e in edits)
    assert calls(records, "read") and calls(records, "grep")

    bash = {
        thaw(call.arguments)["command"]: thaw(done[call.call_id].result.meta)
        for call in calls(records, "bash")
    }
    colour = bash["printf '\\033[32mok\\033[0m\\n'"]
    assert colour["output"] == "\x1b[32mok\x1b[0m\n" and colour["exit_code"] == 0
    failing = [meta for meta in bash.values() if meta and meta["exit_code"] == 2]
    assert len(failing) == 1
    assert bash["seq 1 400"]["output"].splitlines() == [str(n) for n in range(1, 401)]
    sleeping = bash["echo waiting; sleep 30"]
    assert sleeping["cancelled"] is True and sleeping["signal"] == "SIGTERM"


def test_it_holds_each_permission_answer_and_a_remembered_one(
    log: tuple[HeaderRecord, list[Record]],
) -> None:
    _, records = log
    asked = of(records, PermissionAskedRecord)
    answers = [(a.tool, a.answer) for a in of(records, PermissionAnswerRecord)]
    assert answers == [("write", "allow_once"), ("edit", "allow_always"), ("bash", "reject_once")]
    assert [a.call_id for a in asked] == [a.call_id for a in of(records, PermissionAnswerRecord)]
    (refused,) = [a for a in of(records, PermissionAnswerRecord) if a.answer == "reject_once"]
    result = results(records)[refused.call_id].result
    assert result.is_error and result.error is not None and result.error.code == "DENIED"
    (remembered,) = of(records, PermissionRememberedRecord)
    assert (remembered.tool, remembered.allowed) == ("edit", True)
    assert remembered.call_id == calls(records, "edit")[1].call_id  # the later call


def test_it_holds_a_mode_and_a_model_switch_usage_and_a_cancelled_turn(
    log: tuple[HeaderRecord, list[Record]],
) -> None:
    _, records = log
    assert [r.mode for r in of(records, ModeChangeRecord)] == ["auto"]
    assert [(r.config_id, r.value) for r in of(records, ConfigChangeRecord)] == [
        ("model", "big-model")
    ]
    usage = of(records, UsageRecord)
    assert {(u.model, u.context_window) for u in usage} == {
        ("test-model", 32768),
        ("big-model", 131072),
    }
    assert all(u.cost is not None and u.currency == "USD" for u in usage)
    assert [t.stop_reason for t in of(records, TurnEndRecord)] == [
        "end_turn",
        "end_turn",
        "cancelled",
        "end_turn",
    ]


def test_its_replay_is_valid_acp_with_every_card_settled(
    log: tuple[HeaderRecord, list[Record]],
) -> None:
    header, records = log
    messages = sent_over_the_wire(header, records)
    for message in messages:
        validate_agent_message(message)
    updates: list[dict[str, Any]] = [m["params"]["update"] for m in messages]
    kinds = Counter(u["sessionUpdate"] for u in updates)
    assert kinds["tool_call"] == kinds["tool_call_update"] == len(of(records, ToolCallRecord))
    assert kinds["plan"] == 1 and kinds["agent_thought_chunk"] == 1
    assert kinds["usage_update"] == len(of(records, UsageRecord))
    final = {
        u["toolCallId"]: u["status"] for u in updates if u["sessionUpdate"] == "tool_call_update"
    }
    failed = sorted(
        thaw(call.arguments).get("command", call.name)
        for call in of(records, ToolCallRecord)
        if final[call.call_id] == "failed"
    )
    assert failed == [
        "echo 'hello.py:1: missing test' >&2; exit 2",
        "echo waiting; sleep 30",
        "rm -rf build",
    ]
    assert set(final.values()) == {"completed", "failed"}


def test_the_cli_replays_it_by_path(log: tuple[HeaderRecord, list[Record]], tmp_path: Path) -> None:
    header, records = log
    as_json = replay("--json", store=tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    *sent, info = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert sent == sent_over_the_wire(header, records)
    assert info["params"]["update"]["sessionUpdate"] == "session_info_update"
    assert info["params"]["update"]["title"].startswith("# Add a greeting")

    drawn = replay(store=tmp_path)
    assert drawn.returncode == 0, drawn.stderr
    for shown in ("Add a greeting", "$ seq 1 400", "exit 2", "SIGTERM", "Never mind, leave it."):
        assert shown in drawn.stdout, shown


def test_the_exports_view_of_it_shows_every_event_and_fact() -> None:
    with StoredSession(FIXTURE, ToolsProvider().registry.get) as session:
        entries = list(session.entries())
        facts, heading = session.facts, session.heading
    events = [entry.item for entry in entries if not isinstance(entry.item, dict)]
    assert events == [
        PermissionDecided("call_write", "write", "allow_once"),
        PermissionDecided("call_edit", "edit", "allow_always"),
        PermissionDecided("call_rm", "bash", "reject_once"),
        PermissionDecided("call_edit_2", "edit", "allow_always", remembered=True),
        ModeSwitched("auto"),
        OptionChanged("model", "big-model"),
        TurnEnded("cancelled"),
    ]
    assert all(entry.at is not None for entry in entries)
    assert facts.mode == "auto" and facts.models == ["test-model", "big-model"]
    assert facts.usage is not None and facts.usage.model == "big-model"
    assert heading.cwd == WORKSPACE and heading.title is not None
