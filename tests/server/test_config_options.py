"""Session config options over the wire, through the official ACP SDK client (every message the
sidecar writes checked against the schema): the mode kept in step with session modes, the
model picker fed by the configuration and the endpoint's ``GET /models``, the reasoning
effort, and the choices surviving a reload in another process."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
import pytest

from acp_sidecar.agent.model import ModelConfig, ModelDriver
from acp_sidecar.agent.model.config import ModelProfile
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from tests.agent.model.fake_openai import Listing, ScriptedOpenAI, answer, listed
from tests.agent.model.harness import tool_registry
from tests.fakes import AllowingEditor
from tests.in_process import sdk_served
from tests.sdk import Wire, sdk_sidecar
from tests.server.wire import served

MODE_VALUES = ["ask", "auto", "read-only"]
BUDGETS = ["budget_tokens", "budget_time"]
"""The budget options of a model without prices (no cost budget can be counted)."""


def options_of(response: Any) -> dict[str, dict[str, Any]]:
    """A response's config options as wire JSON, by id (in order)."""
    return {
        option["id"]: option
        for option in (o.model_dump(by_alias=True, exclude_none=True) for o in response)
    }


def values(option: dict[str, Any]) -> list[str]:
    return [value["value"] for value in option["options"]]


async def until(check: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)
    assert check(), what


def updates_of(wire: Wire, kind: str) -> list[dict[str, Any]]:
    return [u for u in wire.updates if u["sessionUpdate"] == kind]


async def settled(connection: Any, session: str) -> None:
    """A round trip: whatever the sidecar announced before it has arrived."""
    await connection.set_session_mode(session_id=session, mode_id="ask")
    await connection.set_session_mode(session_id=session, mode_id="ask")


async def refused(call: Any) -> str:
    """The message of the ``-32602`` a request is refused with."""
    with pytest.raises(acp.RequestError) as raised:
        await call
    assert raised.value.code == -32602
    return str(raised.value)


# -- the console: only the mode ---------------------------------------------------------------


@pytest.mark.process  # the official SDK's client as the peer, for config options
async def test_the_console_offers_the_mode_kept_in_step_with_session_modes(
    tmp_path: Path,
) -> None:
    async with sdk_sidecar(AllowingEditor(), store=tmp_path / "store") as (connection, wire):
        new = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])
        session = new.session_id
        options = options_of(new.config_options)
        assert list(options) == ["mode", "permission_rules"]
        assert options["mode"]["category"] == "mode"
        assert options["mode"]["currentValue"] == "ask" == new.modes.current_mode_id
        assert values(options["mode"]) == MODE_VALUES == [m.id for m in new.modes.available_modes]

        # Set through the config option: clients that know only modes are told.
        answered = await connection.set_config_option(
            config_id="mode", session_id=session, value="auto"
        )
        assert options_of(answered.config_options)["mode"]["currentValue"] == "auto"
        await until(lambda: updates_of(wire, "current_mode_update"), "no current_mode_update")
        assert updates_of(wire, "current_mode_update") == [
            {"sessionUpdate": "current_mode_update", "currentModeId": "auto"}
        ]
        assert updates_of(wire, "config_option_update") == []

        # Set through modes: clients that know only config options are told.
        await connection.set_session_mode(session_id=session, mode_id="read-only")
        await until(lambda: updates_of(wire, "config_option_update"), "no config_option_update")
        (update,) = updates_of(wire, "config_option_update")
        assert [o["id"] for o in update["configOptions"]] == ["mode", "permission_rules"]
        assert update["configOptions"][0]["currentValue"] == "read-only"

        # Setting what is already set changes nothing and announces nothing.
        await connection.set_config_option(config_id="mode", session_id=session, value="read-only")
        await connection.set_session_mode(session_id=session, mode_id="read-only")
        await connection.list_sessions()
        assert len(updates_of(wire, "current_mode_update")) == 1
        assert len(updates_of(wire, "config_option_update")) == 1

        assert (
            await refused(
                connection.set_config_option(config_id="model", session_id=session, value="gpt-4.1")
            )
            == "Invalid params: configId: unknown config option 'model' (options: mode, permission_rules)"
        )
        assert await refused(
            connection.set_config_option(config_id="mode", session_id=session, value="yolo")
        ) == (
            "Invalid params: value: 'yolo' is not a value of config option 'mode' "
            "(values: ask, auto, read-only)"
        )

    # The mode is restored from the log either way, in both views.
    async with sdk_sidecar(AllowingEditor(), store=tmp_path / "store") as (connection, _wire):
        loaded = await connection.load_session(
            cwd=str(tmp_path), session_id=session, mcp_servers=[]
        )
        assert loaded.modes.current_mode_id == "read-only"
        assert options_of(loaded.config_options)["mode"]["currentValue"] == "read-only"


# -- with a model ---------------------------------------------------------------------------


@asynccontextmanager
async def model_sidecar(
    endpoint: ScriptedOpenAI, store: Path, *args: str
) -> AsyncIterator[tuple[Any, Wire]]:
    async with sdk_served(
        AllowingEditor(),
        "--model",
        "test-model",
        "--base-url",
        endpoint.base_url,
        *args,
        store=store,
    ) as (connection, wire):
        yield connection, wire


async def prompt(connection: Any, session: str, endpoint: ScriptedOpenAI) -> dict[str, Any]:
    """Run one prompt the endpoint answers; the request body the endpoint received."""
    endpoint.script(answer("ok"))
    done = await connection.prompt(session_id=session, prompt=[acp.text_block("hi")])
    assert done.stop_reason == "end_turn"
    body: dict[str, Any] = endpoint.requests[-1].body
    return body


def log_records(store: Path, session: str) -> list[dict[str, Any]]:
    (path,) = store.rglob(f"{session}*")
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_the_model_picker_offers_the_configured_and_listed_models_and_a_switch_persists(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    async with ScriptedOpenAI() as endpoint:
        endpoint.models = listed("test-model", "listed-model", context_length=65536)
        args = ("--models", "test-model,other", "--model-info", "other:context=1000")
        async with model_sidecar(endpoint, store, *args) as (connection, wire):
            new = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])
            session = new.session_id
            options = options_of(new.config_options)
            assert list(options) == [
                "mode",
                "permission_rules",
                "model",
                *BUDGETS,
            ]  # no effort: neither model takes one
            model = options["model"]
            assert model["category"] == "model" and model["currentValue"] == "test-model"
            assert values(model)[:2] == ["test-model", "other"]  # the configured, at once

            # The endpoint's list arrives after the answer and is announced.
            await until(lambda: updates_of(wire, "config_option_update"), "no listing announced")
            (update,) = updates_of(wire, "config_option_update")
            listed_options = {o["id"]: o for o in update["configOptions"]}
            assert values(listed_options["model"]) == ["test-model", "other", "listed-model"]
            assert listed_options["model"]["currentValue"] == "test-model"
            assert endpoint.listings == 1

            assert (await prompt(connection, session, endpoint))["model"] == "test-model"
            answered = await connection.set_config_option(
                config_id="model", session_id=session, value="listed-model"
            )
            assert options_of(answered.config_options)["model"]["currentValue"] == "listed-model"
            body = await prompt(connection, session, endpoint)
            assert body["model"] == "listed-model"  # the next request
            assert "reasoning_effort" not in body

            assert await refused(
                connection.set_config_option(config_id="model", session_id=session, value="gpt-9")
            ) == (
                "Invalid params: value: 'gpt-9' is not a value of config option 'model' "
                "(values: test-model, other, listed-model)"
            )
            # The client's own change is not announced back to it.
            assert len(updates_of(wire, "config_option_update")) == 1
            assert len(updates_of(wire, "current_mode_update")) == 0

        changes = [r for r in log_records(store, session) if r["type"] == "config_change"]
        assert [{k: v for k, v in r.items() if k != "t"} for r in changes] == [
            {"v": 2, "type": "config_change", "configId": "model", "value": "listed-model"}
        ]

        # Another process loads it: the choice is restored (waiting for the endpoint's list,
        # which is where the model comes from) and used.
        async with model_sidecar(endpoint, store, *args) as (connection, wire):
            loaded = await connection.load_session(
                cwd=str(tmp_path), session_id=session, mcp_servers=[]
            )
            assert options_of(loaded.config_options)["model"]["currentValue"] == "listed-model"
            assert (await prompt(connection, session, endpoint))["model"] == "listed-model"

        # The endpoint no longer lists it: the default is used, and the log says why.
        endpoint.models = None
        async with model_sidecar(endpoint, store, *args) as (connection, wire):
            loaded = await connection.load_session(
                cwd=str(tmp_path), session_id=session, mcp_servers=[]
            )
            assert options_of(loaded.config_options)["model"]["currentValue"] == "test-model"
            assert (await prompt(connection, session, endpoint))["model"] == "test-model"


async def test_reasoning_effort_is_offered_only_for_a_model_that_takes_it_and_is_sent(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    async with ScriptedOpenAI() as endpoint:
        args = ("--models", "test-model,thinker", "--model-info", "thinker:reasoning")
        async with model_sidecar(endpoint, store, *args) as (connection, wire):
            new = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])
            session = new.session_id
            assert list(options_of(new.config_options)) == [
                "mode",
                "permission_rules",
                "model",
                *BUDGETS,
            ]
            assert await refused(
                connection.set_config_option(
                    config_id="reasoning_effort", session_id=session, value="high"
                )
            ) == (
                "Invalid params: configId: unknown config option 'reasoning_effort' "
                "(options: mode, permission_rules, model, budget_tokens, budget_time)"
            )

            switched = await connection.set_config_option(
                config_id="model", session_id=session, value="thinker"
            )
            options = options_of(switched.config_options)
            assert list(options) == [
                "mode",
                "permission_rules",
                "model",
                "reasoning_effort",
                *BUDGETS,
            ]
            effort = options["reasoning_effort"]
            assert effort["category"] == "thought_level"
            assert values(effort) == ["default", "low", "medium", "high"]
            assert effort["currentValue"] == "default"
            body = await prompt(connection, session, endpoint)
            assert body["model"] == "thinker" and "reasoning_effort" not in body

            chosen = await connection.set_config_option(
                config_id="reasoning_effort", session_id=session, value="high"
            )
            assert options_of(chosen.config_options)["reasoning_effort"]["currentValue"] == "high"
            body = await prompt(connection, session, endpoint)
            assert (body["model"], body["reasoning_effort"]) == ("thinker", "high")
            assert await refused(
                connection.set_config_option(
                    config_id="reasoning_effort", session_id=session, value="max"
                )
            ) == (
                "Invalid params: value: 'max' is not a value of config option "
                "'reasoning_effort' (values: default, low, medium, high)"
            )

            back = await connection.set_config_option(
                config_id="model", session_id=session, value="test-model"
            )
            assert list(options_of(back.config_options)) == [
                "mode",
                "permission_rules",
                "model",
                *BUDGETS,
            ]  # hidden again
            body = await prompt(connection, session, endpoint)
            assert body["model"] == "test-model" and "reasoning_effort" not in body

            again = await connection.set_config_option(
                config_id="model", session_id=session, value="thinker"
            )
            assert options_of(again.config_options)["reasoning_effort"]["currentValue"] == (
                "default"  # the effort went with the model that did not take it
            )
            await connection.set_config_option(
                config_id="reasoning_effort", session_id=session, value="low"
            )
            await settled(connection, session)
            assert updates_of(wire, "config_option_update") == []  # no /models: nothing new

        async with model_sidecar(endpoint, store, *args) as (connection, wire):
            loaded = await connection.load_session(
                cwd=str(tmp_path), session_id=session, mcp_servers=[]
            )
            options = options_of(loaded.config_options)
            assert options["model"]["currentValue"] == "thinker"
            assert options["reasoning_effort"]["currentValue"] == "low"
            body = await prompt(connection, session, endpoint)
            assert (body["model"], body["reasoning_effort"]) == ("thinker", "low")


@pytest.mark.parametrize(
    "listing",
    [Listing(status=500), Listing([{"id": "late-model"}], delay=4.0)],
    ids=["failing", "slow"],
)
async def test_a_failing_or_slow_listing_leaves_the_configured_models(
    tmp_path: Path, listing: Listing
) -> None:
    async with ScriptedOpenAI() as endpoint:
        endpoint.models = listing
        async with model_sidecar(endpoint, tmp_path / "store", "--models", "test-model,b") as (
            connection,
            wire,
        ):
            new = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])
            assert endpoint.listings_answered == 0  # never waits for it
            assert values(options_of(new.config_options)["model"]) == ["test-model", "b"]
            session = new.session_id
            assert (await prompt(connection, session, endpoint))["model"] == "test-model"
            await until(lambda: endpoint.listings == 1, "the endpoint was not asked")
            await asyncio.sleep(2.5)  # past the listing's timeout
            await settled(connection, session)
            assert updates_of(wire, "config_option_update") == []
            again = await connection.set_config_option(
                config_id="model", session_id=session, value="b"
            )
            assert values(options_of(again.config_options)["model"]) == ["test-model", "b"]


async def test_a_recorded_model_no_longer_offered_falls_back_to_the_default_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SessionStore(tmp_path / "store")
    with store.create("s1", str(tmp_path), mode="ask") as writer:
        writer.config_change("model", "thinker")
        writer.config_change("reasoning_effort", "high")
        writer.config_change("model", "retired-model")
    async with ScriptedOpenAI() as endpoint:
        config = ModelConfig(
            model="test-model",
            base_url=endpoint.base_url,
            models=(ModelProfile(name="thinker", reasoning_effort=True),),
        )
        server = AcpServer(lambda: ModelDriver(config, tool_registry), store=lambda: store)
        async with served(server) as (client, _server):
            await client.initialize()
            loaded = await client.result(
                "session/load", {"sessionId": "s1", "cwd": str(tmp_path), "mcpServers": []}
            )
        options = {o["id"]: o for o in loaded["configOptions"]}
        assert list(options) == ["mode", "permission_rules", "model", *BUDGETS]  # no effort
        assert options["model"]["currentValue"] == "test-model"
        assert endpoint.listings == 1  # asked, in case the endpoint offers it
    assert (
        "session s1: its model 'retired-model' is no longer offered; it uses 'test-model'"
        in caplog.text
    )
