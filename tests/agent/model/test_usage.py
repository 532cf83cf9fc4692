"""``usage_update`` after each model response: the context it filled and the model's window,
the session's cost only where prices are configured, cumulative across turns and reloads.

Turns run against the scripted OpenAI-compatible endpoint; every update the editor is sent is
checked against the ACP schema (:class:`tests.fakes.Editor`), and one test drives the whole
sidecar with the official ACP SDK client.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.model import ModelDriver
from acp_sidecar.agent.model.config import ModelProfile, Prices
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.replay import replay_updates
from acp_sidecar.store import UsageRecord
from tests.agent.model.fake_openai import Reply, ScriptedOpenAI, answer, calling, tool_call, usage
from tests.agent.model.harness import SESSION, RecordedSession, make_turn, tool_registry
from tests.fakes import AllowingEditor, Editor
from tests.sdk import new_session, prompt, sdk_sidecar

PRICES = Prices(input_per_mtok=2.0, output_per_mtok=10.0, currency="USD")


def with_usage(
    reply: Reply, prompt_tokens: int, completion: int, cached: int | None = None
) -> Reply:
    reply.usage = usage(prompt_tokens, completion, cached)
    return reply


def meters(editor: Editor) -> list[dict[str, Any]]:
    return [u for u in editor.updates if u["sessionUpdate"] == "usage_update"]


def profile(window: int | None = 8000, prices: Prices | None = None) -> tuple[ModelProfile, ...]:
    return (ModelProfile(name="test-model", context_window=window, prices=prices),)


async def test_each_response_reports_what_it_used_against_the_window(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], editor: Editor
) -> None:
    endpoint.script(
        with_usage(calling(tool_call(0, "call_1", "look", '{"path": "a"}')), 1200, 40, cached=1000),
        with_usage(answer("Done."), 1300, 25),
    )
    driver = make_driver(models=profile(8000))
    assert await driver.run_turn(make_turn(editor)) == "end_turn"
    # used is each response's prompt plus completion (the context it filled), not a sum
    assert meters(editor) == [
        {"sessionUpdate": "usage_update", "used": 1240, "size": 8000},
        {"sessionUpdate": "usage_update", "used": 1325, "size": 8000},
    ]
    for request in endpoint.requests:
        assert request.body["stream_options"] == {"include_usage": True}
    # the meter comes after the response's text
    kinds = [u["sessionUpdate"] for u in editor.updates]
    assert kinds[-2:] == ["agent_message_chunk", "usage_update"]


async def test_no_usage_update_without_a_known_window(
    endpoint: ScriptedOpenAI,
    make_driver: Callable[..., ModelDriver],
    editor: Editor,
    tmp_path: Path,
) -> None:
    endpoint.script(with_usage(answer("Hi."), 100, 5))
    session = RecordedSession(tmp_path)
    assert (
        await session.run(make_driver(models=profile(None, PRICES)), "hi", editor=editor)
        == "end_turn"
    )
    assert meters(editor) == []
    # the usage is still kept, with its cost: a later model with a window continues the sum
    (record,) = [r for r in session.recorder.history() if isinstance(r, UsageRecord)]
    assert (record.prompt_tokens, record.completion_tokens, record.context_window) == (100, 5, None)
    assert record.cost == pytest.approx((100 * 2 + 5 * 10) / 1e6) and record.currency == "USD"


async def test_no_usage_update_when_the_endpoint_sends_no_usage(
    endpoint: ScriptedOpenAI,
    make_driver: Callable[..., ModelDriver],
    editor: Editor,
    tmp_path: Path,
) -> None:
    endpoint.script(answer("Hi."))
    session = RecordedSession(tmp_path)
    assert (
        await session.run(make_driver(models=profile(8000, PRICES)), "hi", editor=editor)
        == "end_turn"
    )
    assert meters(editor) == []
    assert not [r for r in session.recorder.history() if isinstance(r, UsageRecord)]


async def test_no_cost_without_prices(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], editor: Editor
) -> None:
    endpoint.script(with_usage(answer("Hi."), 100, 5))
    assert await make_driver(models=profile(8000)).run_turn(make_turn(editor)) == "end_turn"
    assert meters(editor) == [{"sessionUpdate": "usage_update", "used": 105, "size": 8000}]


async def test_the_cost_is_the_sessions_across_turns_and_a_reload(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], tmp_path: Path
) -> None:
    endpoint.script(
        with_usage(answer("One."), 1000, 100),
        with_usage(answer("Two."), 2000, 200),
        with_usage(answer("Three."), 3000, 300),
    )
    driver = make_driver(models=profile(8000, PRICES))
    session = RecordedSession(tmp_path)
    editor = Editor()
    await session.run(driver, "one", editor=editor)
    await session.run(driver, "two", editor=editor)
    costs = [m["cost"] for m in meters(editor)]
    assert costs[0] == {"amount": pytest.approx(0.003), "currency": "USD"}
    assert costs[1] == {"amount": pytest.approx(0.003 + 0.006), "currency": "USD"}
    session.recorder.close()

    # loaded again (a new process: a new driver), the sum goes on from the log
    reloaded = RecordedSession(tmp_path, reopen=True)
    later = Editor()
    await reloaded.run(make_driver(models=profile(8000, PRICES)), "three", editor=later)
    (meter,) = meters(later)
    assert meter["used"] == 3300
    assert meter["cost"] == {"amount": pytest.approx(0.003 + 0.006 + 0.009), "currency": "USD"}
    reloaded.recorder.close()

    # replay redraws the meter as it was after each response
    with reloaded.store.open_log(SESSION) as log:
        header, records = log.header, list(log)
    replayed = [
        u
        for u in replay_updates(header, records, tool_registry().get, CardContext(cwd="/work"))
        if u.session_update == "usage_update"
    ]
    assert [(u.used, u.cost.amount if u.cost else None) for u in replayed] == [
        (1100, pytest.approx(0.003)),
        (2200, pytest.approx(0.009)),
        (3300, pytest.approx(0.018)),
    ]


async def test_an_unpriced_response_makes_the_total_unknown_from_then_on(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], tmp_path: Path
) -> None:
    endpoint.script(with_usage(answer("One."), 1000, 100), with_usage(answer("Two."), 10, 1))
    session = RecordedSession(tmp_path)
    priced, editor = Editor(), Editor()
    await session.run(make_driver(models=profile(8000)), "one", editor=priced)
    await session.run(make_driver(models=profile(8000, PRICES)), "two", editor=editor)
    assert "cost" not in meters(priced)[0]
    # a total that leaves the first response out would be a guess
    assert "cost" not in meters(editor)[0]


async def test_a_server_refusing_stream_options_is_asked_again_without(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], editor: Editor
) -> None:
    refusal = Reply(
        status=400,
        body={"error": {"message": "Unrecognized request argument supplied: stream_options"}},
    )
    endpoint.script(refusal, answer("Hi."), answer("Again."))
    driver = make_driver(models=profile(8000))
    assert await driver.run_turn(make_turn(editor)) == "end_turn"
    assert await driver.run_turn(make_turn(editor)) == "end_turn"
    first, second, third = endpoint.requests
    assert "stream_options" in first.body
    assert "stream_options" not in second.body and "stream_options" not in third.body
    assert meters(editor) == []


class MeterEditor(AllowingEditor):
    """Keeps the SDK's own parsed updates."""

    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


@pytest.mark.process
async def test_the_sdk_client_reads_the_meter_and_the_cost(tmp_path: Path) -> None:
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(with_usage(answer("One."), 1000, 100), with_usage(answer("Two."), 2500, 50))
        editor = MeterEditor()
        env = {
            "TEST_MODEL_BASE_URL": endpoint.base_url,
            "TEST_MODEL_WINDOW": "128000",
            "TEST_MODEL_PRICES": "2,10,EUR",
        }
        async with sdk_sidecar(
            editor,
            "--driver",
            "tests.agent.model.configured:driver",
            store=tmp_path / "store",
            env=env,
        ) as (connection, wire):
            session = await new_session(connection, tmp_path)
            assert await prompt(connection, session, "one") == "end_turn"
            assert await prompt(connection, session, "two") == "end_turn"
        typed = [u for u in editor.updates if type(u).__name__ == "UsageUpdate"]
        assert [(u.used, u.size) for u in typed] == [(1100, 128000), (2550, 128000)]
        assert typed[-1].cost.currency == "EUR"
        assert typed[-1].cost.amount == pytest.approx(0.003 + 0.0055)
        assert [u for u in wire.updates if u["sessionUpdate"] == "usage_update"]  # validated
