"""Every card carries the call's input as ``rawInput``, whatever kind of card it is.

Found with real clients: ``read`` and ``glob`` cards carried ``rawInput`` but the ``write``
(diff) and ``bash`` (terminal) cards did not, so clients that show a call's input had nothing
to show. Driven as found: the official ACP SDK client drives ``acp-sidecar`` (in process) with its built-in
tools and runs one call of each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp.schema import ClientCapabilities

from acp_sidecar.bridge.cards import call_start
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.tools import DiffCallView, FileDiff, GenericCallView, TerminalCallView
from acp_sidecar.tools.json_values import freeze_json
from tests.fakes import AllowingEditor
from tests.in_process import sdk_served
from tests.sdk import command, new_session, prompt


async def test_every_builtin_card_carries_its_arguments(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read", {"path": "a.txt"}),
        ("write", {"path": "b.txt", "content": "beta\n"}),
        ("edit", {"path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
        ("bash", {"command": "echo hi"}),
        ("grep", {"pattern": "ALPHA"}),
        ("glob", {"pattern": "*.txt"}),
    ]
    async with sdk_served(
        AllowingEditor(),
        store=tmp_path / ".store",
        capabilities=ClientCapabilities(field_meta={"terminal_output": True}),
    ) as (connection, wire):
        session = await new_session(connection, tmp_path)
        for name, arguments in calls:
            wire.cards()
            assert await prompt(connection, session, command(name, **arguments)) == "end_turn"
            start, *_rest, final = wire.cards()
            assert start["sessionUpdate"] == "tool_call"
            shown = start["rawInput"]  # grep's presenter fills in its defaults too
            assert {key: shown[key] for key in arguments} == arguments, name
            assert final["status"] == "completed", (name, final)


def test_a_generic_views_own_raw_input_wins() -> None:
    ctx = CardContext("/w")
    arguments = freeze_json({"path": "x", "content": "y"})
    views = [
        DiffCallView(card="diff", title="d", diffs=[FileDiff("x", None, "y")]),
        TerminalCallView(card="terminal", title="t"),
        GenericCallView(card="generic", title="g"),
    ]
    for view in views:
        assert call_start("c", view, ctx, arguments).raw_input == {"path": "x", "content": "y"}
    own = GenericCallView(card="generic", title="g", raw_input={"shown": True})
    assert call_start("c", own, ctx, arguments).raw_input == {"shown": True}
    assert call_start("c", views[0], ctx).raw_input is None
