"""The export's view of a stored log: the load stream with times, events and session facts."""

from __future__ import annotations

import shutil
from pathlib import Path

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.export.source import StoredSession, Timed
from acp_sidecar.render.blocks import ModeSwitched, OptionChanged, PermissionDecided, TurnEnded
from acp_sidecar.store import (
    PermissionAnswerRecord,
    PermissionAskedRecord,
    PermissionRememberedRecord,
    SessionStore,
    UsageRecord,
)
from acp_sidecar.tools.content import TextContent
from acp_sidecar.tools.result import ToolExecutionResult

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LOOKUP = ToolsProvider(()).registry.get


def _write(directory: Path) -> Path:
    store = SessionStore(directory, fsync="never")
    with store.create("s1", "/work/p", mode="ask") as writer:
        writer.user_message([{"type": "text", "text": "hi"}])
        writer.tool_call("c1", "bash", {"command": "ls"})
        writer.append(PermissionAskedRecord("c1", "bash", ("allow_once", "reject_once")))
        writer.append(PermissionAnswerRecord("c1", "bash", "allow_once"))
        writer.tool_result(
            ToolExecutionResult(call_id="c1", content=[TextContent("a\n")], is_error=False)
        )
        writer.mode_change("auto")
        writer.config_change("model", "m-large")
        writer.append(
            UsageRecord("m-large", 1200, 30, context_window=8000, cost=0.5, currency="USD")
        )
        writer.tool_call("c2", "bash", {"command": "ls"})
        writer.append(PermissionRememberedRecord("c2", "bash", allowed=False))
        writer.end_turn("cancelled")
    return store.path_of("s1")


def _kinds(entries: list[Timed]) -> list[str]:
    return [
        e.item["sessionUpdate"] if isinstance(e.item, dict) else type(e.item).__name__
        for e in entries
    ]


def test_entries_are_the_load_stream_with_events_in_log_order_and_times(tmp_path: Path) -> None:
    with StoredSession(_write(tmp_path), LOOKUP) as session:
        entries = list(session.entries())
        facts = session.facts
        heading = session.heading
    assert _kinds(entries) == [
        "user_message_chunk",
        "tool_call",
        "PermissionDecided",
        "tool_call_update",
        "ModeSwitched",
        "OptionChanged",
        "usage_update",
        "tool_call",
        "PermissionDecided",
        "TurnEnded",
        "tool_call_update",  # the call the cancelled turn left open, completed as failed
    ]
    events = [e.item for e in entries if not isinstance(e.item, dict)]
    assert events == [
        PermissionDecided("c1", "bash", "allow_once"),
        ModeSwitched("auto"),
        OptionChanged("model", "m-large"),
        PermissionDecided("c2", "bash", "reject_always", remembered=True),
        TurnEnded("cancelled"),
    ]
    assert all(e.at is not None for e in entries)
    times = [e.at for e in entries if e.at is not None]
    assert times == sorted(times)
    assert entries[-1].item["status"] == "failed"  # type: ignore[index]
    assert facts.mode == "auto" and facts.models == ["m-large"]
    assert facts.usage is not None and facts.usage.context_window == 8000
    assert heading.title == "hi" and heading.cwd == "/work/p"


def test_a_version_1_log_exports_without_times_or_permission_events(tmp_path: Path) -> None:
    path = tmp_path / "v1.jsonl"
    shutil.copy(FIXTURES / "store" / "v1-golden.jsonl", path)
    with StoredSession(path, LOOKUP) as session:
        entries = list(session.entries())
    assert entries and all(e.at is None for e in entries)
    assert not any(isinstance(e.item, PermissionDecided) for e in entries)
    assert session.facts.first_at is None


def test_a_rule_decision_is_an_event_naming_the_rule() -> None:
    from acp_sidecar.export.document import answer_text
    from acp_sidecar.export.source import event_of
    from acp_sidecar.store import PermissionRuleRecord

    record = PermissionRuleRecord(
        call_id="c", tool="bash", verdict="deny", rule="deny bash rm *", source="session"
    )
    event = event_of(record)
    assert event == PermissionDecided("c", "bash", "rule_deny", rule="deny bash rm * (session)")
    assert not event.allowed
    assert answer_text(event.answer, event.remembered, event.rule) == (
        "refused by the rule deny bash rm * (session)"
    )
