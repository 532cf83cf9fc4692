"""Replay draws the same lines however often a log is replayed, and whatever a presenter
kept from the call before: interleaved calls, repeated arguments, invalid ones."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.replay import load_notifications
from acp_sidecar.store import HeaderRecord, Record, ToolCallRecord, ToolResultRecord
from acp_sidecar.tools import TextContent, ToolExecutionResult, ToolRegistry
from acp_sidecar.tools.json_values import FrozenDict, thaw
from tests.tooling import TOOLS

CTX = CardContext(cwd="/work", terminal_output=True)
HEADER = HeaderRecord(session_id="s", cwd="/work", created_at=datetime.now(UTC), mode="auto")
NOTE = FrozenDict({"path": "src/a.py", "old": "x = 1\n", "new": "x = 2\n"})


def registry() -> ToolRegistry:
    tools = ToolRegistry()
    for tool in TOOLS:
        tools.register(tool)
    return tools


def call(call_id: str, name: str, arguments: Any) -> ToolCallRecord:
    return ToolCallRecord(call_id=call_id, name=name, arguments=arguments)


def result(call_id: str, meta: Any = None) -> ToolResultRecord:
    return ToolResultRecord(
        ToolExecutionResult(call_id=call_id, content=[TextContent("ok")], is_error=False, meta=meta)
    )


def log(arguments: Any) -> list[Record]:
    """Interleaved calls; ``arguments`` makes each call's arguments from a dict."""
    note_meta = {"before": "x = 1\n", "after": "x = 2\n"}
    return [
        call("c1", "note", arguments(NOTE)),
        call("c2", "look", arguments({"path": "README.md"})),
        call("c3", "note", arguments(NOTE)),  # equal arguments, another object
        result("c2"),
        result("c1", note_meta),
        call("c4", "look", arguments({"path": 42})),  # invalid: a generic card
        result("c3", note_meta),
        result("c4"),
        call("c5", "note", arguments({**NOTE, "path": "b.py"})),
        result("c5", note_meta),
    ]


def replay(records: list[Record], tools: ToolRegistry) -> list[dict[str, Any]]:
    return list(load_notifications("s", HEADER, records, tools.get, CTX))


def test_a_log_replays_to_the_same_lines_every_time() -> None:
    tools = registry()
    # Plain dicts are narrowed by every presenter call: the lines as drawn without any reuse.
    expected = replay(log(lambda a: thaw(a)), registry())
    frozen = log(FrozenDict)
    assert replay(frozen, tools) == expected
    assert replay(frozen, tools) == expected  # the same records again, the same registry
    assert replay(log(FrozenDict), tools) == expected
    assert len(expected) == 11  # 5 cards opened, 5 completed, the mode
