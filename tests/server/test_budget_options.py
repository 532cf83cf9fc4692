"""The budget as config options and configured defaults, through the official SDK client: the
config file's defaults start each session's budget (a cost one only where prices are known,
the user told why otherwise), the options set and show it, ``/budget`` moves them too, and a
load restores what the log set, the starting defaults included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.model.budget import Spent
from acp_sidecar.server.loading import StoredState
from acp_sidecar.store import HeaderRecord, UsageRecord
from acp_sidecar.store.times import utc_now
from tests.agent.model.fake_openai import ScriptedOpenAI, answer, usage
from tests.fakes import AllowingEditor
from tests.in_process import sdk_served
from tests.sdk import new_session, prompt
from tests.server.test_budget_command import ENV, said
from tests.server.test_message_ids import model

PRICED = ("--model-info", "test-model:input=1,output=1,currency=USD")


def options_of(options: Any) -> dict[str, Any]:
    return {o.id: o for o in options}


def config_file(tmp_path: Path, text: str) -> tuple[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(text)
    path.chmod(0o600)
    return ("--config", str(path))


async def test_the_config_files_budget_starts_each_session_and_ends_its_turn(
    tmp_path: Path,
) -> None:
    config = config_file(tmp_path, "budget_tokens = 500\nbudget_time = 600\nbudget_cost = 3\n")
    async with ScriptedOpenAI(strict=True) as endpoint:
        big = answer("A long answer.")
        big.usage = usage(450, 100)
        endpoint.script(big)
        async with sdk_served(
            AllowingEditor(), *model(endpoint), *config, store=tmp_path / "store", env=ENV
        ) as (connection, wire):
            new = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])
            options = options_of(new.config_options)
            assert options["budget_tokens"].current_value == "500"
            assert options["budget_time"].current_value == "600.0"
            assert "budget_cost" not in options  # no prices: no cost budget can be counted
            assert await prompt(connection, new.session_id, "hello") == "max_tokens"
            shown = said(wire.updates)
            assert "configured cost budget (3) does not apply" in shown
            assert "budget is reached: tokens (500)" in shown


async def test_a_cost_budget_applies_where_the_models_prices_are_known(tmp_path: Path) -> None:
    async with (
        ScriptedOpenAI(strict=True) as endpoint,
        sdk_served(
            AllowingEditor(),
            *model(endpoint),
            *PRICED,
            "--budget-cost",
            "2",
            store=tmp_path / "store",
            env=ENV,
        ) as (connection, wire),
    ):
        new = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])
        cost = options_of(new.config_options)["budget_cost"]
        assert cost.current_value == "2.0"
        assert [v.name for v in cost.options][:3] == ["No limit", "0.50 USD", "1.00 USD"]
        assert await prompt(connection, new.session_id, "/budget") == "end_turn"
        assert "- cost: 0.0000 USD of 2.0000 USD" in said(wire.updates)


async def test_the_options_set_the_budget_and_a_load_restores_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with ScriptedOpenAI(strict=True) as endpoint:
        async with sdk_served(
            AllowingEditor(), *model(endpoint), "--budget-time", "10m", store=store, env=ENV
        ) as (connection, wire):
            session = await new_session(connection, tmp_path)
            answered = await connection.set_config_option(
                config_id="budget_tokens", session_id=session, value="200000"
            )
            assert options_of(answered.config_options)["budget_tokens"].current_value == "200000"
            with pytest.raises(Exception, match="is not a value of config option 'budget_tokens'"):
                await connection.set_config_option(
                    config_id="budget_tokens", session_id=session, value="12"
                )
            # /budget sets a value no preset has: the option lists it, and shows it.
            assert await prompt(connection, session, "/budget tokens 1234") == "end_turn"
            updates = [u for u in wire.updates if u["sessionUpdate"] == "config_option_update"]
            tokens = {o["id"]: o for o in updates[-1]["configOptions"]}["budget_tokens"]
            assert tokens["currentValue"] == "1234"
            assert "1234" in [v["value"] for v in tokens["options"]]
        async with sdk_served(
            AllowingEditor(), *model(endpoint), "--budget-time", "5m", store=store, env=ENV
        ) as (connection, wire):
            loaded = await connection.load_session(session_id=session, cwd=str(tmp_path))
            options = options_of(loaded.config_options)
            assert options["budget_tokens"].current_value == "1234"  # as the log set it
            assert options["budget_time"].current_value == "600.0"  # as it started


async def test_a_cost_budget_on_an_unpriced_model_is_refused_saying_why(tmp_path: Path) -> None:
    async with (
        ScriptedOpenAI(strict=True) as endpoint,
        sdk_served(AllowingEditor(), *model(endpoint), store=tmp_path / "s", env=ENV) as (
            connection,
            _wire,
        ),
    ):
        session = await new_session(connection, tmp_path)
        with pytest.raises(Exception, match="prices of the model `test-model` are unknown"):
            await connection.set_config_option(
                config_id="budget_cost", session_id=session, value="2.0"
            )


def test_the_spending_a_log_leaves_is_its_usage_records_summed() -> None:
    """Tokens and time add up, the cost is the last record's (a running total), and so is its
    currency; a record of time alone adds its time."""
    header = HeaderRecord(session_id="s", cwd="/w", created_at=utc_now())
    state = StoredState(header)
    records = [
        UsageRecord("m", 100, 10, cost=0.25, currency="USD", seconds=2.0),
        UsageRecord("m", 0, 0, cost=0.25, currency="USD", seconds=1.5),
        UsageRecord("m", 50, 5, cost=0.5, currency="USD"),
    ]
    assert list(state.watch(records)) == records
    assert state.spent == Spent(cost=0.5, tokens=165, time=3.5)
    assert state.currency == "USD"
