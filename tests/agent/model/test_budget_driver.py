"""The model driver against a session's budget, with the scripted OpenAI-compatible endpoint:
each limit reached mid-turn ends the turn at the next step boundary, the 80 % notice comes
once, a later prompt ends before any request, and a raised limit lets work go on."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from acp_sidecar.agent.driver import Turn
from acp_sidecar.agent.model import ModelDriver
from acp_sidecar.agent.model.budget import BudgetGate, Limits
from acp_sidecar.agent.model.config import ModelProfile, Prices
from tests.agent.model.fake_openai import Reply, ScriptedOpenAI, answer, calling, tool_call, usage
from tests.agent.model.harness import make_turn
from tests.fakes import Editor

PRICES = Prices(input_per_mtok=1_000_000.0, output_per_mtok=1_000_000.0, currency="EUR")
"""One EUR a token: cost figures read as token counts."""


def used(reply: Reply, prompt: int, completion: int) -> Reply:
    reply.usage = usage(prompt, completion)
    return reply


def step(n: int, tokens: int) -> Reply:
    return used(calling(tool_call(0, f"call_{n}", "look", '{"path": "a"}')), tokens - 10, 10)


def models(prices: Prices | None = None) -> tuple[ModelProfile, ...]:
    return (ModelProfile(name="test-model", context_window=100_000, prices=prices),)


def budgeted(editor: Editor, gate: BudgetGate, prompt: str = "go") -> Turn:
    return attrs.evolve(make_turn(editor, prompt), budget=gate)


def texts(editor: Editor) -> str:
    return "".join(
        u["content"]["text"]
        for u in editor.updates
        if u["sessionUpdate"] == "agent_message_chunk" and u["content"]["type"] == "text"
    )


class Ticks:
    """A clock that moves ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


async def test_the_token_budget_ends_the_turn_with_max_tokens_at_a_step_boundary(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], editor: Editor
) -> None:
    endpoint.script(step(1, 600), step(2, 600), answer("never asked"))
    gate = BudgetGate(Limits(tokens=1000))
    driver = make_driver(models=models())
    assert await driver.run_turn(budgeted(editor, gate)) == "max_tokens"
    assert len(endpoint.requests) == 2  # the second step's tools ran, then no third request
    assert gate.spent.tokens == 1200
    assert "budget is reached: tokens (1,000)" in texts(editor)
    assert texts(editor).count("80 %") == 0  # reached past the mark in one step: no warning


async def test_the_cost_budget_ends_the_turn_with_a_notice(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], editor: Editor
) -> None:
    endpoint.script(step(1, 500), step(2, 500), answer("never asked"))
    gate = BudgetGate(Limits(cost=900.0))
    driver = make_driver(models=models(PRICES))
    assert await driver.run_turn(budgeted(editor, gate)) == "end_turn"
    assert len(endpoint.requests) == 2
    assert "budget is reached: cost (900.0000 EUR)" in texts(editor)


async def test_the_time_budget_counts_model_work_on_the_given_clock(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], editor: Editor
) -> None:
    endpoint.script(step(1, 50), step(2, 50), step(3, 50), answer("never asked"))
    gate = BudgetGate(Limits(time=5.0), clock=Ticks(2.0))  # each request: 2 s on this clock
    driver = make_driver(models=models())
    assert await driver.run_turn(budgeted(editor, gate)) == "end_turn"
    assert gate.spent.time == 6.0
    assert len(endpoint.requests) == 3
    assert "budget is reached: time (5.0s)" in texts(editor)
    assert texts(editor).count("80 % of the session's budget is spent: time") == 1


async def test_the_80_percent_notice_comes_once(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], editor: Editor
) -> None:
    endpoint.script(step(1, 820), step(2, 50), used(answer("done"), 40, 10))
    gate = BudgetGate(Limits(tokens=1000))
    driver = make_driver(models=models())
    assert await driver.run_turn(budgeted(editor, gate)) == "end_turn"
    assert texts(editor).count("80 % of the session's budget is spent") == 1
    assert gate.stop() is None


async def test_a_prompt_after_the_limit_ends_at_once_until_it_is_raised(
    endpoint: ScriptedOpenAI, make_driver: Callable[..., ModelDriver], editor: Editor
) -> None:
    endpoint.script(step(1, 1200), used(answer("after the raise"), 90, 10))
    gate = BudgetGate(Limits(tokens=1000))
    driver = make_driver(models=models())
    assert await driver.run_turn(budgeted(editor, gate)) == "max_tokens"
    assert len(endpoint.requests) == 1
    again = Editor()
    assert await driver.run_turn(budgeted(again, gate, "more")) == "end_turn"
    assert len(endpoint.requests) == 1  # nothing was asked of the model
    assert "budget is reached" in texts(again)
    gate.set("tokens", 5000)
    raised = Editor()
    assert await driver.run_turn(budgeted(raised, gate, "more")) == "end_turn"
    assert len(endpoint.requests) == 2
    assert "after the raise" in texts(raised)
