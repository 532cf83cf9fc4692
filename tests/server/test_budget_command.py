"""``/budget`` through the official SDK client: set in model mode, the turn stopped at the
limit, later prompts ended at once, the command still answering over budget, a raise letting
work go on, a cost budget refused for unpriced models, the console's answer, and a child's spending
counted against its parent's budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.agent.model.fake_openai import Reply, ScriptedOpenAI, answer, say, stop, usage
from tests.agent.model.fake_openai import tool_call as model_call
from tests.fakes import AllowingEditor
from tests.in_process import sdk_served
from tests.sdk import new_session, prompt
from tests.server.subagent_harness import RoutedOpenAI, of_kind, sidecar, task_call, updates_of
from tests.server.test_message_ids import model

PROMPT = "look into a"

ENV = {"OPENAI_API_KEY": "sk-test"}


def said(updates: list[dict[str, Any]]) -> str:
    return "".join(
        u["content"]["text"]
        for u in updates
        if u["sessionUpdate"] == "agent_message_chunk" and u["content"]["type"] == "text"
    )


async def test_a_token_budget_set_with_the_command_stops_and_holds_until_raised(
    tmp_path: Path,
) -> None:
    async with ScriptedOpenAI(strict=True) as endpoint:
        big = answer("A long answer.")
        big.usage = usage(1100, 100)
        after = answer("Going on.")
        after.usage = usage(100, 10)
        endpoint.script(big, after)
        async with sdk_served(
            AllowingEditor(), *model(endpoint), store=tmp_path / "store", env=ENV
        ) as (connection, wire):
            session = await new_session(connection, tmp_path)
            assert await prompt(connection, session, "/budget tokens 1000") == "end_turn"
            assert "- tokens: 0 of 1,000" in said(wire.updates)
            assert await prompt(connection, session, "hello") == "max_tokens"
            assert "budget is reached: tokens (1,000)" in said(wire.updates)
            before = len(wire.updates)
            assert await prompt(connection, session, "more") == "end_turn"
            assert len(endpoint.requests) == 1  # ended at once: the model was not asked
            assert "budget is reached" in said(wire.updates[before:])
            before = len(wire.updates)
            assert await prompt(connection, session, "/budget") == "end_turn"
            assert "- tokens: 1,200 of 1,000" in said(wire.updates[before:])
            before = len(wire.updates)
            assert await prompt(connection, session, "/budget cost 2.50") == "end_turn"
            assert "prices of the model `test-model` are unknown" in said(wire.updates[before:])
            assert await prompt(connection, session, "/budget tokens 5000") == "end_turn"
            before = len(wire.updates)
            assert await prompt(connection, session, "more") == "end_turn"
            assert "Going on." in said(wire.updates[before:])
            before = len(wire.updates)
            assert await prompt(connection, session, "/budget tokens lots") == "end_turn"
            assert "is not changed: `lots` is no number" in said(wire.updates[before:])


async def test_the_console_says_budgets_apply_to_model_work(tmp_path: Path) -> None:
    async with sdk_served(AllowingEditor(), store=tmp_path / "store") as (connection, wire):
        session = await new_session(connection, tmp_path)
        assert await prompt(connection, session, "/budget tokens 10") == "end_turn"
        assert "Budgets apply to model work" in said(wire.updates)


async def test_a_budget_and_its_spending_are_restored_by_a_load_and_a_resume(
    tmp_path: Path,
) -> None:
    """Limits come back from the log's records of ``/budget``; cost, tokens and model time
    spent from its usage records."""
    store = tmp_path / "store"
    async with ScriptedOpenAI(strict=True) as endpoint:
        first = answer("Some work.")
        first.usage = usage(700, 100)
        endpoint.script(first)
        async with sdk_served(AllowingEditor(), *model(endpoint), store=store, env=ENV) as (
            connection,
            _wire,
        ):
            session = await new_session(connection, tmp_path)
            assert await prompt(connection, session, "/budget tokens 1000") == "end_turn"
            assert await prompt(connection, session, "/budget time 10m") == "end_turn"
            assert await prompt(connection, session, "/budget time off") == "end_turn"
            assert await prompt(connection, session, "hello") == "end_turn"
        logged = [
            json.loads(line) for line in (store / f"{session}.jsonl").read_text().splitlines()
        ]
        seconds = sum(r["seconds"] for r in logged if r["type"] == "usage")
        assert seconds > 0
        for attach in ("load", "resume"):
            async with sdk_served(AllowingEditor(), *model(endpoint), store=store, env=ENV) as (
                connection,
                wire,
            ):
                if attach == "load":
                    await connection.load_session(session_id=session, cwd=str(tmp_path))
                else:
                    await connection.resume_session(session_id=session, cwd=str(tmp_path))
                before = len(wire.updates)
                assert await prompt(connection, session, "/budget") == "end_turn"
                shown = said(wire.updates[before:])
                assert "- tokens: 800 of 1,000" in shown, (attach, shown)
                assert f"- time: {seconds:.1f}s of none" in shown, shown  # set, then cleared


async def test_a_childs_spending_counts_against_the_sessions_budget(tmp_path: Path) -> None:
    """The parent asks once (100 tokens) and delegates; the child's first response (30) takes
    the session past its 120 tokens: the child ends at its step boundary, and so does the
    parent, without asking the model again."""
    (tmp_path / "a.txt").write_text("1\n")
    endpoint = RoutedOpenAI()
    job = "Report what a.txt says."
    endpoint.route(
        PROMPT,
        Reply([task_call(0, "call_a", "Read a", job), stop("tool_calls")], usage=usage(95, 5)),
    )
    read_a = model_call(0, "call_r", "read", '{"path": "a.txt"}')
    endpoint.route(job, Reply([read_a, stop("tool_calls")], usage=usage(25, 5)))
    async with endpoint, sidecar(endpoint, tmp_path / "store") as (client, _server):
        await client.initialize()
        session = await client.new_session(str(tmp_path))
        await client.next_response(await client.start_prompt(session, "/budget tokens 120"))
        answered = await client.next_response(await client.start_prompt(session, PROMPT))
    assert answered["result"]["stopReason"] == "max_tokens"
    assert endpoint.asked == [PROMPT, job]
    texts = [
        u["content"].get("text", "") for _s, u in of_kind(updates_of(client), "agent_message_chunk")
    ]
    assert any("budget is reached: tokens (120)" in text for text in texts)


async def test_the_meter_carries_the_budgets_figures_live_and_after_a_load(tmp_path: Path) -> None:
    store, figures_key = tmp_path / "store", "acp-sidecar/budget"
    windowed = ("--model-info", "test-model:context=8000")
    async with ScriptedOpenAI(strict=True) as endpoint:
        first, second = answer("One."), answer("Two.")
        first.usage, second.usage = usage(300, 20), usage(400, 30)
        endpoint.script(first, second)
        async with sdk_served(
            AllowingEditor(), *model(endpoint), *windowed, store=store, env=ENV
        ) as (connection, wire):
            session = await new_session(connection, tmp_path)
            assert await prompt(connection, session, "hello") == "end_turn"
            assert await prompt(connection, session, "/budget tokens 1000") == "end_turn"
            assert await prompt(connection, session, "again") == "end_turn"
        meters = [u for u in wire.updates if u["sessionUpdate"] == "usage_update"]
        assert "_meta" not in meters[0]  # no budget yet: the meter as it always was
        budget = meters[1]["_meta"][figures_key]
        assert budget["tokens"] == {"spent": 750, "limit": 1000}
        assert budget["cost"] == {"spent": 0.0, "limit": None, "currency": None}
        assert budget["time"]["limit"] is None and budget["time"]["spent"] > 0
        async with sdk_served(
            AllowingEditor(), *model(endpoint), *windowed, store=store, env=ENV
        ) as (connection, wire):
            await connection.load_session(session_id=session, cwd=str(tmp_path))
            assert await prompt(connection, session, "/budget") == "end_turn"
        loaded = [u for u in wire.updates if u["sessionUpdate"] == "usage_update"]
        assert loaded[-1]["_meta"][figures_key]["tokens"] == {"spent": 750, "limit": 1000}
        assert loaded[-1]["used"] == meters[-1]["used"]


async def test_the_80_percent_notice_a_child_reaches_is_the_parents_to_give(
    tmp_path: Path,
) -> None:
    """The child's step takes the session to 85 of 100 tokens: the child gives no notice (it
    would reach only the parent model), the parent's next step does; the time the child
    spent comes back with a load."""
    (tmp_path / "a.txt").write_text("1\n")
    store = tmp_path / "store"
    endpoint = RoutedOpenAI()
    job = "Report what a.txt says."
    endpoint.route(
        PROMPT,
        Reply([task_call(0, "call_a", "Read a", job), stop("tool_calls")], usage=usage(45, 5)),
        Reply([*say("Done."), stop()], usage=usage(5, 1)),
    )
    read_a = model_call(0, "call_r", "read", '{"path": "a.txt"}')
    endpoint.route(
        job,
        Reply([read_a, stop("tool_calls")], usage=usage(30, 5)),
        Reply([*say("a says 1."), stop()], usage=usage(1, 1)),
    )
    async with endpoint, sidecar(endpoint, store) as (client, server):
        await client.initialize()
        session = await client.new_session(str(tmp_path))
        await client.next_response(await client.start_prompt(session, "/budget tokens 100"))
        answered = await client.next_response(await client.start_prompt(session, PROMPT))
        live = server.sessions[session].budget.spent
    assert answered["result"]["stopReason"] == "end_turn"
    warned = [
        (s, u["content"]["text"])
        for s, u in of_kind(updates_of(client), "agent_message_chunk")
        if "80 % of the session's budget" in u["content"].get("text", "")
    ]
    assert [s for s, _text in warned] == [session]
    assert live.tokens == 93
    async with endpoint, sidecar(endpoint, store) as (client, server):
        await client.initialize()
        await client.result(
            "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        )
        assert server.sessions[session].budget.spent == live
