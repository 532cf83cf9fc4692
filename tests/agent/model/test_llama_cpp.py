"""Against what a real llama.cpp server sends (:mod:`tests.agent.model.fake_llama`): a small
context that the system prompt and the tools alone overfill, an answer stopped by a full
context, a server that dies mid-answer or is down, and the context it reports in ``/models``
(a router's only once the model is loaded).

Turns run against the scripted endpoint over real HTTP, logged by the server's own recorder
where the log matters; every update the editor is sent is checked against the ACP schema.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest

from acp_sidecar.agent.model import ModelConfig, ModelDriver
from acp_sidecar.agent.model.catalog import ListedModel, listed_model
from acp_sidecar.agent.model.compaction import SUMMARY_INSTRUCTIONS, request_budget
from acp_sidecar.agent.model.config import ModelProfile
from acp_sidecar.agent.model.instructions import InstructionsReader
from acp_sidecar.agent.model.messages import system_message, tool_specs, user_message
from acp_sidecar.agent.model.room import room_of
from acp_sidecar.bridge.policy import install_policy
from acp_sidecar.store import CompactionRecord
from acp_sidecar.tools.builtin import builtin_tools
from acp_sidecar.tools.registry import ToolRegistry
from tests.agent.model.fake_llama import LlamaServer, broken, context_full, model_entry
from tests.agent.model.fake_openai import (
    Reply,
    ScriptedOpenAI,
    answer,
    call,
    say,
    stop,
    usage,
)
from tests.agent.model.harness import CWD, RecordedSession, make_turn
from tests.fakes import Editor

MODEL = "qwen2.5-coder-0.5b"
MakeDriver = Callable[..., ModelDriver]


def builtin_registry() -> ToolRegistry:
    registry = ToolRegistry()
    for tool in builtin_tools():
        registry.register(tool)
    install_policy(registry)
    return registry


def is_summary_request(request: object) -> bool:
    return bool(request.messages[0]["content"] == SUMMARY_INSTRUCTIONS)  # type: ignore[attr-defined]


# -- a context the fixed part alone overfills ------------------------------------------------


async def test_a_context_the_system_prompt_and_tools_overfill_is_explained_not_summarised(
    tmp_path: Path,
) -> None:
    # The set-up: a 2,048-token context, the built-in tools, a small model that
    # would invent a summary if asked for one.
    async with LlamaServer(n_ctx=2048) as server:
        server.script(answer("SUMMARY: the user asked for a poem about the sea."))
        config = ModelConfig(
            model=MODEL,
            base_url=server.base_url,
            max_retries=0,
            models=(ModelProfile(name=MODEL, context_window=2048),),
        )
        registry = builtin_registry()
        driver = ModelDriver(config, lambda: registry)
        session = RecordedSession(tmp_path)
        editors = [Editor() for _ in range(3)]
        try:
            for prompt, editor in zip(("hello", "write a poem", "again"), editors, strict=True):
                assert await session.run(driver, prompt, editor=editor) == "end_turn"
        finally:
            await driver.aclose()

    # no summary was asked for or kept; each prompt made one request, refused for its length
    assert not [r for r in server.requests if is_summary_request(r)]
    assert len(server.requests) == server.too_long == 3
    assert not [r for r in session.recorder.history() if isinstance(r, CompactionRecord)]
    for turn, editor in enumerate(editors):
        said = editor.text()
        assert said.count("Nothing was summarised") == (1 if turn else 0), said
        assert said.count("context window (2,048 tokens)") == 1, said
        assert re.search(
            r"the system prompt \(about [\d,]+ tokens\), the definitions of its 7 tools "
            r"\(about [\d,]+\) and the prompt \(about [\d,]+\) take about [\d,]+, more than "
            r"the 922 tokens a request may use",
            said,
        ), said
        assert "To make room:" in said and "--ctx-size" in said and "--max-tokens" in said
        left_out = {0: None, 1: "The earlier turn was", 2: "The 2 earlier turns were"}[turn]
        if left_out is not None:
            assert f"{left_out} left out of what the model is sent" in said, said
        assert "too long for the model's context window" not in said  # no dropped-turns notice
        # the server's refusal comes after, as it said it
        assert said.index("To make room:") < said.index("exceeds the available context size")


async def test_no_summary_is_asked_for_where_none_would_fit(
    endpoint: ScriptedOpenAI, make_driver: MakeDriver, registry: ToolRegistry, tmp_path: Path
) -> None:
    # The window leaves the request fewer tokens than the smallest summary beside what every
    # request carries: the earlier turn is left out at once, with no summary request.
    instructions = InstructionsReader().read(CWD)
    fixed = room_of(
        system_message(CWD, instructions=instructions),
        tool_specs(registry.schemas()),
        user_message([{"type": "text", "text": "hello"}]),
        [],
    ).fixed
    window = next(w for w in range(fixed, 10 * fixed) if request_budget(w, 100) >= fixed + 30)
    driver = make_driver(
        max_tokens=100, models=(ModelProfile(name="test-model", context_window=window),)
    )
    endpoint.script(answer("One."), answer("Two."))
    session = RecordedSession(tmp_path)
    assert await session.run(driver, "lorem ipsum " * 200) == "end_turn"
    editor = Editor()
    assert await session.run(driver, "hello", editor=editor) == "end_turn"

    assert not [r for r in endpoint.requests if is_summary_request(r)]
    assert editor.text() == (
        "The conversation is too long for the model's context window. The oldest turn was "
        "left out of what the model is sent (the session keeps them).Two."
    )


# -- the cause of a cut-off answer --------------------------------------------------------------


async def test_an_answer_stopped_by_a_full_context_names_the_context_not_the_cap(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    driver = make_driver(models=(ModelProfile(name="test-model", context_window=4096),))
    endpoint.script(context_full("It was a dark and", prompt_tokens=3000, n_ctx=4096))

    assert await driver.run_turn(make_turn(editor)) == "max_tokens"

    assert editor.text() == (
        "It was a dark and\n\nThe model's answer was cut off: the model's context window was "
        "full (4,095 of its 4,096 tokens: 3,000 for the request, 1,095 for the answer)."
    )


async def test_a_length_stop_short_of_the_cap_without_a_window_names_the_server(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    endpoint.script(context_full("It was", prompt_tokens=1500, n_ctx=2048))

    assert await make_driver().run_turn(make_turn(editor)) == "max_tokens"

    assert editor.text() == (
        "It was\n\nThe model's answer was cut off after 547 tokens, short of the 8,192-token "
        "limit for one response: the server stopped it, at its own limit on an answer or "
        "because the model's context window was full (2,047 tokens: 1,500 for the request, "
        "547 for the answer)."
    )


async def test_a_length_stop_at_the_cap_names_the_cap(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    driver = make_driver(max_tokens=200)
    endpoint.script(Reply([*say("Long"), stop("length")], usage=usage(50, 200)))

    assert await driver.run_turn(make_turn(editor)) == "max_tokens"

    assert editor.text() == (
        "Long\n\nThe model's answer reached the 200-token limit for one response "
        "(--max-tokens or ACP_SIDECAR_MAX_TOKENS)."
    )


async def test_a_length_stop_without_usage_does_not_guess_the_cause(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    driver = make_driver(max_tokens=200)
    endpoint.script(Reply([*say("Long"), stop("length")]))

    assert await driver.run_turn(make_turn(editor)) == "max_tokens"

    assert editor.text() == (
        "Long\n\nThe model's answer was cut off at a limit on its length: the 200-token limit "
        "for one response (--max-tokens or ACP_SIDECAR_MAX_TOKENS) or the model's context "
        "window (the endpoint did not report its usage)."
    )


# -- a stream broken mid-answer -----------------------------------------------------------------


async def test_a_stream_broken_mid_answer_says_the_answer_was_cut_off_and_logs_it(
    driver: ModelDriver,
    endpoint: ScriptedOpenAI,
    editor: Editor,
    caplog: pytest.LogCaptureFixture,
) -> None:
    endpoint.script(
        attrs.evolve(
            broken("Hello ", "wor"),
            events=[*say("Hello ", "wor"), call(0, call_id="c1", name="look")],
        )
    )

    with caplog.at_level(logging.WARNING):
        assert await driver.run_turn(make_turn(editor)) == "end_turn"

    said = editor.text()
    assert said.startswith(
        f"Hello wor\n\nThe model's answer was cut off: the connection to the endpoint "
        f"{endpoint.base_url} broke while it was answering ("
    ), said
    assert said.endswith("). The tool call it was still sending (`look`) was not run."), said
    assert "Could not reach" not in said and "Check that the server is running" not in said
    assert editor.cards() == []
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in warnings if "broke" in r.getMessage()] == [
        f"the model endpoint {endpoint.base_url} broke the stream after 9 characters of the "
        "answer: peer closed connection without sending complete message body (incomplete "
        "chunked read)"
    ]


# -- a server that is down ------------------------------------------------------------------------


def long_prompt(n: int) -> str:
    return f"PROMPT-{n} " + "lorem ipsum dolor sit amet " * 110


async def test_an_endpoint_that_is_down_is_reported_first_and_once(
    registry: ToolRegistry, tmp_path: Path
) -> None:
    # A session long enough that its next prompt is compacted; then the server goes away.
    session = RecordedSession(tmp_path)
    async with ScriptedOpenAI() as server:
        server.script(*(answer(f"Answer {n}.") for n in range(1, 5)))
        config = ModelConfig(
            model="test-model",
            base_url=server.base_url,
            max_retries=1,
            max_tokens=500,
            models=(ModelProfile(name="test-model", context_window=6000),),
        )
        driver = ModelDriver(config, lambda: registry)
        for n in range(1, 5):
            assert await session.run(driver, long_prompt(n)) == "end_turn"
    try:
        editor = Editor()
        informed: list[str] = []
        turn = make_turn(editor, long_prompt(5), history=session.recorder.history())
        turn = attrs.evolve(turn, inform=informed.append)
        assert await driver.run_turn(turn) == "end_turn"
    finally:
        await driver.aclose()

    said = editor.text()
    assert said.startswith(f"Could not reach the model endpoint {server.base_url} ("), said
    assert said.count("Could not reach") == 1, said
    assert "too long" not in said and "Summarising" not in said, said
    # the summary request's retry was told like any other
    assert len(informed) == 1 and "retrying (1 of 1)" in informed[0], informed
    assert not [r for r in session.recorder.history() if isinstance(r, CompactionRecord)]


# -- the context the server reports ------------------------------------------------------------


def test_a_llama_cpp_models_entry_gives_the_context_a_request_gets() -> None:
    entry = model_entry(MODEL, 2048)
    assert entry["meta"]["n_ctx_train"] == 32768  # what the model was trained for: not it
    assert listed_model(entry) == ListedModel(MODEL, 2048)
    assert listed_model(model_entry(MODEL, 2048, status="unloaded")) == ListedModel(
        MODEL, None, pending=True
    )
    assert listed_model({"id": MODEL, "meta": {"n_ctx": 0}}) == ListedModel(MODEL, None)
    assert listed_model({"id": MODEL, "meta": None}) == ListedModel(MODEL, None)


async def test_the_window_llama_cpp_lists_drives_the_meter_and_early_compaction(
    registry: ToolRegistry, tmp_path: Path
) -> None:
    async with LlamaServer(4096, MODEL) as server:
        server.script(Reply([*say("Hi."), stop()], usage=usage(900, 3)))
        config = ModelConfig(model=MODEL, base_url=server.base_url, max_retries=0)
        driver = ModelDriver(config, lambda: registry)  # no window given
        try:
            await driver.catalog.list_models()
            assert driver.profile().context_window == 4096
            editor = Editor()
            assert await driver.run_turn(make_turn(editor)) == "end_turn"
        finally:
            await driver.aclose()
    meter = [u for u in editor.updates if u["sessionUpdate"] == "usage_update"]
    assert [(m["used"], m["size"]) for m in meter] == [(903, 4096)]


async def test_a_router_model_window_is_learned_once_it_has_answered(
    registry: ToolRegistry,
) -> None:
    async with LlamaServer(2048, MODEL, "SmolLM2-135M", router=True) as server:
        server.script(
            *(Reply([*say(f"Answer {n}."), stop()], usage=usage(700, 4)) for n in range(1, 4))
        )
        config = ModelConfig(model=MODEL, base_url=server.base_url, max_retries=0)
        driver = ModelDriver(config, lambda: registry)
        try:
            await driver.catalog.list_models()
            assert driver.profile().context_window is None  # not loaded: no meta yet
            first, second, third = Editor(), Editor(), Editor()
            assert await driver.run_turn(make_turn(first)) == "end_turn"
            await driver.catalog.list_models()  # the listing it asked for again, if any
            assert server.listings == 2
            assert driver.profile().context_window == 2048
            assert driver.profile("SmolLM2-135M").context_window is None  # still unloaded
            assert await driver.run_turn(make_turn(second)) == "end_turn"
            assert await driver.run_turn(make_turn(third)) == "end_turn"
            await driver.catalog.list_models()
        finally:
            await driver.aclose()
    assert server.listings == 2  # asked again once, not after every answer
    meters = [
        [(u["used"], u["size"]) for u in e.updates if u["sessionUpdate"] == "usage_update"]
        for e in (first, second, third)
    ]
    assert meters == [[], [(704, 2048)], [(704, 2048)]]
