"""The ``plan`` tool as an editor meets it: each call replaces the plan, sent as a ``plan``
update beside a one-line card, never asked about (it changes nothing), and replayed.

Driven by the official ACP SDK client on ``acp-sidecar`` in process (no model: the console, where
``/plan {json}`` calls it); every message the sidecar writes is checked against the vendored
schema by the SDK wire's observer, and the SDK parses each update into its own models.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import AgentPlanUpdate

from tests.in_process import run_cli, sdk_served
from tests.sdk import ROOT, Wire, command, new_session, prompt

ENTRIES = [
    {"content": "Read the failing test", "priority": "high", "status": "completed"},
    {"content": "Fix the parser", "priority": "high", "status": "in_progress"},
    {"content": "Update the changelog", "priority": "low", "status": "pending"},
]


class PlanEditor:
    """Keeps the plans the SDK parsed; a permission dialog fails the test."""

    def __init__(self) -> None:
        self.plans: list[AgentPlanUpdate] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentPlanUpdate):
            self.plans.append(update)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the plan tool changes nothing: it is never asked about")


def plan_and_cards(wire: Wire) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The plan updates and the tool-call updates since the last look."""
    plans = [u for u in wire.updates if u["sessionUpdate"] == "plan"]
    return plans, wire.cards()


@pytest.mark.parametrize("mode", [None, "read-only"])  # None: the default, ``ask``
async def test_the_console_sets_the_plan_without_asking(tmp_path: Path, mode: str | None) -> None:
    editor = PlanEditor()
    async with sdk_served(editor, store=tmp_path / ".store") as (connection, wire):
        session = await new_session(connection, tmp_path, mode)
        assert await prompt(connection, session, command("plan", entries=ENTRIES)) == "end_turn"
        order = [
            u["sessionUpdate"]
            for u in wire.updates
            if u["sessionUpdate"] not in ("usage_update", "session_info_update")
        ]
        assert order[-2:] == ["tool_call_update", "plan"]  # the plan follows its card's end
        plans, cards = plan_and_cards(wire)
        assert plans == [{"sessionUpdate": "plan", "entries": ENTRIES}]
        assert cards[0]["sessionUpdate"] == "tool_call"
        assert cards[0]["title"] == "Update plan"
        assert cards[-1]["status"] == "completed"
        assert cards[-1]["title"] == "Plan: 3 entries, 1 in progress, 1 completed"
        assert cards[-1]["content"] == []  # the plan is drawn as the plan, not in the card

        # A second call replaces the whole plan; an empty one clears it.
        assert await prompt(connection, session, command("plan", entries=ENTRIES[:1])) == "end_turn"
        assert await prompt(connection, session, command("plan", entries=[])) == "end_turn"
        plans, _cards = plan_and_cards(wire)
        assert [p["entries"] for p in plans] == [ENTRIES[:1], []]
    parsed = [
        [e.model_dump(mode="json", exclude_none=True) for e in p.entries] for p in editor.plans
    ]
    assert parsed == [ENTRIES, ENTRIES[:1], []]


async def test_a_bad_plan_fails_its_card_and_sends_no_plan(tmp_path: Path) -> None:
    async with sdk_served(PlanEditor(), store=tmp_path / ".store") as (connection, wire):
        session = await new_session(connection, tmp_path)
        blank = [{"content": "  ", "priority": "high", "status": "pending"}]
        await prompt(connection, session, command("plan", entries=blank))
        plans, cards = plan_and_cards(wire)
        assert plans == []
        assert cards[-1]["status"] == "failed"
        assert "/entries/0/content: must not be blank" in json.dumps(cards[-1]["content"])
        wrong = [{"content": "x", "priority": "urgent", "status": "pending"}]
        await prompt(connection, session, command("plan", entries=wrong))
        plans, cards = plan_and_cards(wire)
        assert plans == [] and cards[-1]["status"] == "failed"


async def test_the_plan_replays_on_load_and_in_the_replay_command(tmp_path: Path) -> None:
    store = tmp_path / ".store"
    async with sdk_served(PlanEditor(), store=store) as (connection, wire):
        session = await new_session(connection, tmp_path)
        await prompt(connection, session, command("plan", entries=ENTRIES))
        await prompt(connection, session, command("plan", entries=ENTRIES[1:]))
        live = [u for u in wire.updates if u["sessionUpdate"] in ("plan", "tool_call_update")]
    editor = PlanEditor()
    async with sdk_served(editor, store=store) as (connection, wire):
        await connection.load_session(cwd=str(tmp_path), session_id=session, mcp_servers=[])
        replayed = [u for u in wire.updates if u["sessionUpdate"] in ("plan", "tool_call_update")]
    # Live cards also had their ``in_progress`` step; the completions and plans are the same.
    assert [u for u in live if u.get("status") != "in_progress"] == replayed
    assert [len(p.entries) for p in editor.plans] == [3, 2]

    env = {"COLUMNS": "100", "NO_COLOR": "1"}
    argv = ["replay", session, "--store", str(store)]
    as_json = run_cli(*argv, "--json", cwd=ROOT, env=env)
    assert as_json.returncode == 0, as_json.stderr
    updates = [json.loads(line)["params"]["update"] for line in as_json.stdout.splitlines()]
    assert [u["entries"] for u in updates if u["sessionUpdate"] == "plan"] == [
        ENTRIES,
        ENTRIES[1:],
    ]
    drawn = run_cli(*argv, cwd=ROOT, env=env)
    assert drawn.returncode == 0, drawn.stderr
    assert "Plan" in drawn.stdout and "Fix the parser" in drawn.stdout
    assert "Update the changelog" in drawn.stdout


def test_the_sdk_knows_the_plan_update() -> None:
    """The pinned SDK parses the update the bridge sends (guards the version this relies on)."""
    parsed = acp.schema.AgentPlanUpdate.model_validate(
        {"sessionUpdate": "plan", "entries": ENTRIES}
    )
    assert [e.status for e in parsed.entries] == ["completed", "in_progress", "pending"]
