"""The model driver against a scripted OpenAI-compatible server on loopback.

Each test checks what the editor received (the turn's ``session/update`` values, as wire
JSON) and what the model was sent (the recorded request bodies: messages, tools).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import attrs
import openai._base_client as openai_client
import pytest

from acp_sidecar.agent.model import ModelConfig, ModelDriver
from acp_sidecar.tools import ToolExecution, define_tool
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.registry import ToolRegistry
from tests.agent.model.fake_openai import (
    Pause,
    Reply,
    ScriptedOpenAI,
    answer,
    call,
    calling,
    chunk,
    say,
    stop,
    think,
    tool_call,
    usage,
)
from tests.agent.model.harness import RecordedSession, assert_well_formed, make_turn
from tests.fakes import Editor, Recording

NOTE_ARGS = '{"path": "a.txt", "old": "x", "new": "y"}'
TOOL_NAMES = ["note", "stream", "look"]

MakeDriver = Callable[..., ModelDriver]


def tool_names(request_body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request_body["tools"]]


# -- text and reasoning -------------------------------------------------------------------


async def test_a_text_only_turn_streams_each_delta(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    endpoint.script(answer("Hel", "lo", " there"))

    assert await driver.run_turn(make_turn(editor, "hi")) == "end_turn"

    assert editor.updates == [
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        for text in ("Hel", "lo", " there")
    ]
    [request] = endpoint.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["model"] == "test-model"
    assert request.body["stream"] is True
    system, user = request.messages
    assert system["role"] == "system"
    assert "/work" in system["content"]
    assert sys.platform != "linux" or "Linux" in system["content"]
    assert user == {"role": "user", "content": "hi"}
    assert tool_names(request.body) == TOOL_NAMES
    note = request.body["tools"][0]
    assert note["type"] == "function"
    assert note["function"]["parameters"]["required"] == ["path"]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_streams_as_thoughts_before_the_text(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor, field: str
) -> None:
    endpoint.script(Reply([*think("Let me ", "think.", field=field), *say("Four."), stop()]))

    assert await driver.run_turn(make_turn(editor, "2+2?")) == "end_turn"

    assert editor.kinds() == [
        "agent_thought_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
    ]
    assert editor.thoughts() == "Let me think."
    assert editor.text() == "Four."


async def test_reasoning_is_sent_back_with_the_tool_calls_it_led_to(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    endpoint.script(
        Reply([*think("I should look."), tool_call(0, "call_r", "look", '{"path": "x"}'), stop()]),
        answer("Seen."),
    )

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    assistant = endpoint.requests[1].messages[2]
    assert assistant["reasoning_content"] == "I should look."
    assert assistant["tool_calls"][0]["id"] == "call_r"


# -- tool calls ---------------------------------------------------------------------------


async def test_one_tool_call_draws_a_diff_card_and_its_result_goes_back(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    endpoint.script(
        calling(tool_call(0, "call_1", "note", NOTE_ARGS), text="Editing."),
        answer("Done."),
    )
    recording = Recording()

    assert await driver.run_turn(make_turn(editor, "edit a.txt", record=recording)) == "end_turn"

    diff = {"type": "diff", "path": "/work/a.txt", "oldText": "x", "newText": "y"}
    start, running, done = editor.cards("call_1")
    assert (start["sessionUpdate"], start["status"], start["kind"]) == (
        "tool_call",
        "pending",
        "edit",
    )
    assert start["title"] == "Edit a.txt"
    assert start["content"] == [diff]
    assert running == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1",
        "status": "in_progress",
    }
    assert (done["status"], done["title"], done["content"]) == ("completed", "Edited a.txt", [diff])
    assert editor.text() == "Editing.Done."
    assert editor.kinds()[-1] == "agent_message_chunk"  # the answer after the card

    assert [(event.call_id, result is None) for event, result in recording.events] == [
        ("call_1", True),
        ("call_1", False),
    ]
    second = endpoint.requests[1]
    assert second.messages[2:] == [
        {
            "role": "assistant",
            "content": "Editing.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "note", "arguments": NOTE_ARGS},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "changed a.txt"},
    ]
    assert tool_names(second.body) == TOOL_NAMES


async def test_a_session_with_its_own_registry_offers_and_runs_its_tools(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    """A session with tools of its own (an MCP server's) gets them in the request's tool
    schemas and runs them from its registry; the driver's own registry is left alone."""
    from acp_sidecar.agent.toolset import ToolsProvider

    async def ping(args: Any, execution: ToolExecution) -> str:
        return "pong"

    extra = define_tool(
        name="mcp__peer__ping", description="Answer pong.", parameters={}, execute=ping
    )
    provider = ToolsProvider(builtins=False, entry_points=False, extra=driver.registry.visible())
    session_tools, problems = provider.session_registry([extra])
    assert problems == ()
    endpoint.script(calling(tool_call(0, "call_1", "mcp__peer__ping", "{}")), answer("ok"))

    turn = attrs.evolve(make_turn(editor, "ping"), tools=session_tools)
    assert await driver.run_turn(turn) == "end_turn"

    assert tool_names(endpoint.requests[0].body) == [*TOOL_NAMES, "mcp__peer__ping"]
    assert endpoint.requests[1].messages[-1]["content"] == "pong"
    assert driver.registry.get("mcp__peer__ping") is None


@attrs.frozen
class MeetArgs:
    name: Annotated[str, "Who arrives"]


def meeting_registry(registry: ToolRegistry, parties: int, patience: float) -> list[str]:
    """Add ``meet``: each call waits (up to ``patience`` s) until ``parties`` calls run at once."""
    barrier = asyncio.Barrier(parties)
    met: list[str] = []

    async def meet(args: MeetArgs, execution: ToolExecution) -> str:
        async with asyncio.timeout(patience):
            await barrier.wait()
        met.append(args.name)
        return f"{args.name} met"

    registry.register(
        define_tool(
            name="meet", description="Wait for the others.", parameters=MeetArgs, execute=meet
        )
    )
    return met


async def test_two_tool_calls_run_at_once_and_answer_in_call_order(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor, registry: ToolRegistry
) -> None:
    met = meeting_registry(registry, parties=2, patience=5)
    endpoint.script(
        calling(
            tool_call(0, "call_a", "meet", '{"name": "a"}'),
            tool_call(1, "call_b", "meet", '{"name": "b"}'),
        ),
        answer("Both met."),
    )

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    assert sorted(met) == ["a", "b"]  # neither could finish before the other started
    assert [u["status"] for u in editor.cards("call_a")] == ["pending", "in_progress", "completed"]
    assert [u["status"] for u in editor.cards("call_b")] == ["pending", "in_progress", "completed"]
    assistant, *results = endpoint.requests[1].messages[2:]
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_a", "call_b"]
    assert results == [
        {"role": "tool", "tool_call_id": "call_a", "content": "a met"},
        {"role": "tool", "tool_call_id": "call_b", "content": "b met"},
    ]
    assert "meet" in tool_names(endpoint.requests[1].body)


async def test_the_parallel_cap_holds_calls_back(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor, registry: ToolRegistry
) -> None:
    driver = make_driver(max_parallel_tools=1)
    met = meeting_registry(registry, parties=2, patience=0.2)
    endpoint.script(
        calling(
            tool_call(0, "call_a", "meet", '{"name": "a"}'),
            tool_call(1, "call_b", "meet", '{"name": "b"}'),
        ),
        answer("Nobody met."),
    )

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    assert met == []
    # One at a time, but both cards at once: b is drawn when it is complete, runs when a is done.
    order = [(u["toolCallId"], u["status"]) for u in editor.cards()]
    assert order.index(("call_b", "pending")) < order.index(("call_a", "failed"))
    assert order.index(("call_b", "in_progress")) > order.index(("call_a", "failed"))
    results = endpoint.requests[1].messages[3:]
    assert [r["content"].split(":")[0] for r in results] == ["Error (EXECUTION_FAILED)"] * 2


async def test_a_slot_is_freed_only_once_its_result_card_is_drawn(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor, registry: ToolRegistry
) -> None:
    # A log that takes its time (any awaiting sink) must not let the next call start before
    # the previous call's result is recorded and its completed card drawn.
    driver = make_driver(max_parallel_tools=1)

    async def nap(args: MeetArgs, execution: ToolExecution) -> str:
        await asyncio.sleep(0.05)  # long enough for the next call to wait for the slot
        return f"{args.name} slept"

    registry.register(
        define_tool(name="nap", description="Sleep a little.", parameters=MeetArgs, execute=nap)
    )
    endpoint.script(
        calling(
            tool_call(0, "call_a", "nap", '{"name": "a"}'),
            tool_call(1, "call_b", "nap", '{"name": "b"}'),
        ),
        answer("Both slept."),
    )

    async def slow_log(event: object, result: object) -> None:
        if result is not None:
            await asyncio.sleep(0.05)

    assert await driver.run_turn(make_turn(editor, record=slow_log)) == "end_turn"

    order = [(u["toolCallId"], u.get("status")) for u in editor.cards()]
    assert order.index(("call_b", "pending")) < order.index(("call_a", "completed"))
    assert order.index(("call_a", "completed")) < order.index(("call_b", "in_progress"))


def gate_registry(registry: ToolRegistry) -> asyncio.Event:
    """Add ``gate``: each call runs until the returned event is set or the turn is cancelled."""
    opened = asyncio.Event()

    async def gate(args: MeetArgs, execution: ToolExecution) -> str:
        signal = execution.signal
        assert signal is not None
        waits = [asyncio.ensure_future(opened.wait()), asyncio.ensure_future(signal.wait())]
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for waiting in waits:
            waiting.cancel()
        return f"{args.name} passed" if opened.is_set() else f"{args.name} stopped"

    registry.register(
        define_tool(
            name="gate", description="Wait for the gate.", parameters=MeetArgs, execute=gate
        )
    )
    return opened


def statuses(editor: Editor, call_id: str) -> list[str]:
    return [u.get("status", "") for u in editor.cards(call_id)]


async def test_a_call_is_drawn_and_started_while_the_response_still_streams(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    pause = Pause()
    endpoint.script(
        Reply(
            [
                *say("Two looks."),
                tool_call(0, "call_a", "look", '{"path": "a"}'),
                call(1, call_id="call_b", name="look", arguments='{"pa'),
                pause,
                call(1, arguments='th": "b"}'),
                stop("tool_calls"),
            ]
        ),
        answer("Seen both."),
    )
    recording = Recording()

    running = asyncio.ensure_future(driver.run_turn(make_turn(editor, record=recording)))
    await pause.reached.wait()
    # b's first fragment completed a: it ran to its end while b is still streaming.
    await editor.wait_for(lambda e: "completed" in statuses(e, "call_a"))
    assert statuses(editor, "call_a") == ["pending", "in_progress", "", "completed"]
    assert editor.cards("call_b") == []
    assert [(event.call_id, result) for event, result in recording.events] == [("call_a", None)]
    pause.release.set()
    assert await running == "end_turn"

    assert statuses(editor, "call_b") == ["pending", "in_progress", "", "completed"]
    # The log holds both calls before any result (a's was held): one assistant message.
    assert [(event.call_id, result is None) for event, result in recording.events] == [
        ("call_a", True),
        ("call_b", True),
        ("call_a", False),
        ("call_b", False),
    ]
    second = endpoint.requests[1].messages
    assert_well_formed(second)
    assert second[2:] == [
        {
            "role": "assistant",
            "content": "Two looks.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "look", "arguments": '{"path": "a"}'},
                },
                {
                    "id": "call_b",
                    "type": "function",
                    "function": {"name": "look", "arguments": '{"path": "b"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "looked at a"},
        {"role": "tool", "tool_call_id": "call_b", "content": "looked at b"},
    ]


async def test_results_go_back_in_call_order_whatever_order_they_finish_in(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    slow = '{"command": "slow", "lines": 3, "delay_ms": 30}'
    endpoint.script(
        calling(
            tool_call(0, "call_slow", "stream", slow),
            tool_call(1, "call_fast", "look", '{"path": "x"}'),
        ),
        answer("ok"),
    )
    recording = Recording()

    assert await driver.run_turn(make_turn(editor, record=recording)) == "end_turn"

    assert [r.call_id for r in recording.results()] == ["call_fast", "call_slow"]
    results = endpoint.requests[1].messages[3:]
    assert [r["tool_call_id"] for r in results] == ["call_slow", "call_fast"]
    assert results[0]["content"] == "slow 0\nslow 1\nslow 2\n"


async def test_a_call_waiting_for_a_slot_shows_its_card_at_once(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor, registry: ToolRegistry
) -> None:
    driver = make_driver(max_parallel_tools=1)
    opened = gate_registry(registry)
    endpoint.script(
        calling(
            tool_call(0, "call_g", "gate", '{"name": "g"}'),
            tool_call(1, "call_l", "look", '{"path": "x"}'),
        ),
        answer("Through."),
    )

    running = asyncio.ensure_future(driver.run_turn(make_turn(editor)))
    await editor.wait_for(lambda e: bool(e.cards("call_l")))
    await editor.wait_for(lambda e: "in_progress" in statuses(e, "call_g"))
    await asyncio.sleep(0.05)
    assert statuses(editor, "call_l") == ["pending"]  # drawn, but waiting for the slot
    opened.set()
    assert await running == "end_turn"

    assert statuses(editor, "call_l") == ["pending", "in_progress", "", "completed"]
    order = [(u["toolCallId"], u["status"]) for u in editor.cards() if "status" in u]
    assert order.index(("call_l", "in_progress")) > order.index(("call_g", "completed"))
    assert [m["content"] for m in endpoint.requests[1].messages[3:]] == ["g passed", "looked at x"]


async def test_cancel_while_a_call_waits_for_its_slot_answers_it_without_running_it(
    make_driver: MakeDriver,
    endpoint: ScriptedOpenAI,
    editor: Editor,
    registry: ToolRegistry,
    tmp_path: Path,
) -> None:
    driver = make_driver(max_parallel_tools=1)
    gate_registry(registry)
    session = RecordedSession(tmp_path)
    endpoint.script(
        calling(
            tool_call(0, "call_g", "gate", '{"name": "g"}'),
            tool_call(1, "call_l", "look", '{"path": "x"}'),
            text="Both.",
        ),
        answer("Where were we?"),
    )
    signal = CancelSignal()

    running = asyncio.ensure_future(session.run(driver, "go", editor=editor, signal=signal))
    await editor.wait_for(
        lambda e: "in_progress" in statuses(e, "call_g") and bool(e.cards("call_l"))
    )
    signal.cancel("session/cancel")
    async with asyncio.timeout(30):  # a hang guard: the gate is never opened
        assert await running == "cancelled"

    assert statuses(editor, "call_g") == ["pending", "in_progress", "completed"]
    assert statuses(editor, "call_l") == ["pending", "failed"]  # never in_progress: never run
    not_run = "look was not run: the turn was cancelled (session/cancel)"
    assert editor.cards("call_l")[-1]["content"][0]["content"]["text"] == not_run
    assert len(endpoint.requests) == 1

    # The next prompt sends both calls, each answered, as the user saw them.
    assert await session.run(driver, "again") == "end_turn"
    sent = endpoint.requests[1].messages
    assert_well_formed(sent)
    assistant, *rest = sent[2:]
    assert assistant["content"] == "Both."
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_g", "call_l"]
    assert rest == [
        {"role": "tool", "tool_call_id": "call_g", "content": "g stopped"},
        {"role": "tool", "tool_call_id": "call_l", "content": f"Error (CANCELLED): {not_run}"},
        {"role": "user", "content": "again"},
    ]


async def test_arguments_split_across_many_deltas_are_assembled(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    arguments = '{"path": "src/long name.py", "old": "a\\nb", "new": "ü"}'
    fragments = [call(0, call_id="call_s", name="note", arguments="")]
    fragments += [call(0, arguments=character) for character in arguments]
    endpoint.script(Reply([*fragments, stop("tool_calls")]), answer("ok"))

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    start = editor.cards("call_s")[0]
    assert start["title"] == "Edit src/long name.py"
    assert start["content"] == [
        {"type": "diff", "path": "/work/src/long name.py", "oldText": "a\nb", "newText": "ü"}
    ]
    assert editor.cards("call_s")[-1]["status"] == "completed"
    sent = endpoint.requests[1].messages[2]["tool_calls"][0]["function"]
    assert sent == {"name": "note", "arguments": arguments}


async def test_invalid_json_arguments_go_back_as_invalid_args_and_the_model_corrects_them(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    broken = '{"path": "a.txt", "new": '
    endpoint.script(
        calling(tool_call(0, "call_bad", "note", broken)),
        calling(tool_call(0, "call_good", "note", NOTE_ARGS)),
        answer("Fixed."),
    )
    recording = Recording()

    assert await driver.run_turn(make_turn(editor, record=recording)) == "end_turn"

    start, failed = editor.cards("call_bad")
    assert (start["sessionUpdate"], start["title"], start["kind"]) == ("tool_call", "note", "other")
    assert failed["status"] == "failed"
    error_text = failed["content"][0]["content"]["text"]
    assert error_text.startswith("Invalid arguments:\n- the arguments are not valid JSON (")
    assert error_text.endswith(f"they were: {broken}")
    assert editor.cards("call_good")[-1]["status"] == "completed"
    assert editor.text() == "Fixed."

    bad_event, bad_result = recording.events[1]
    assert bad_event.arguments is None
    assert bad_result is not None and bad_result.error is not None
    assert bad_result.error.code == "INVALID_ARGS"

    second = endpoint.requests[1].messages
    assert second[2]["tool_calls"][0]["function"] == {"name": "note", "arguments": "{}"}
    assert second[3] == {
        "role": "tool",
        "tool_call_id": "call_bad",
        "content": f"Error (INVALID_ARGS): {error_text}",
    }
    third = endpoint.requests[2].messages
    assert third[:4] == second[:4]
    assert third[5] == {"role": "tool", "tool_call_id": "call_good", "content": "changed a.txt"}


async def test_arguments_that_fail_validation_go_back_as_invalid_args(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    endpoint.script(calling(tool_call(0, "call_v", "note", '{"paht": "a.txt"}')), answer("Oops."))

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    assert editor.cards("call_v")[-1]["status"] == "failed"
    result = endpoint.requests[1].messages[3]
    assert result["content"].startswith("Error (INVALID_ARGS): Invalid arguments:\n- ")
    assert "paht" in result["content"]


async def test_an_unknown_tool_is_an_error_result_not_a_failed_turn(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    endpoint.script(calling(tool_call(0, "call_u", "nope", "{}")), answer("Sorry."))

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    assert editor.cards("call_u")[-1]["status"] == "failed"
    assert endpoint.requests[1].messages[3]["content"].startswith("Error (UNKNOWN_TOOL): ")


async def test_call_ids_stay_unique_in_the_session(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    # Servers that number calls per response reuse ids; some send none at all.
    endpoint.script(
        calling(tool_call(0, "call_0", "look", '{"path": "a"}')),
        calling(tool_call(0, "call_0", "look", '{"path": "b"}')),
        calling(call(0, name="look", arguments='{"path": "c"}')),
        answer("ok"),
    )

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    ids = [u["toolCallId"] for u in editor.cards() if u["sessionUpdate"] == "tool_call"]
    assert ids[0] == "call_0"
    assert len(set(ids)) == 3
    last = endpoint.requests[3].messages
    sent_ids = [m["tool_calls"][0]["id"] for m in last if m.get("tool_calls")]
    answered = [m["tool_call_id"] for m in last if m["role"] == "tool"]
    assert sent_ids == ids == answered


async def test_a_registry_without_tools_sends_no_tools(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    registry = ToolRegistry()
    driver = ModelDriver(make_driver().config, lambda: registry)
    endpoint.script(answer("Just talk."))

    assert await driver.run_turn(make_turn(editor)) == "end_turn"
    await driver.aclose()

    assert "tools" not in endpoint.requests[0].body


# -- stop reasons -------------------------------------------------------------------------


async def test_a_length_stop_ends_the_turn_with_max_tokens(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor, tmp_path: Path
) -> None:
    session = RecordedSession(tmp_path)
    endpoint.script(
        Reply(
            [*say("It was a dark and"), call(0, call_id="call_cut", name="look"), stop("length")],
            usage=usage(40, 8192),  # the answer reached the cap
        ),
        answer("stormy night."),
    )

    assert await session.run(driver, "a story", editor=editor) == "max_tokens"

    assert editor.text() == (
        "It was a dark and\n\nThe model's answer reached the 8,192-token limit for one "
        "response (--max-tokens or ACP_SIDECAR_MAX_TOKENS)."
    )
    assert editor.cards() == []  # a call cut off by the limit is not run
    assert len(endpoint.requests) == 1
    assert endpoint.requests[0].body["max_tokens"] == 8192  # the default cap

    assert await session.run(driver, "go on") == "end_turn"
    sent = endpoint.requests[1].messages
    assert_well_formed(sent)
    assert sent[1:] == [
        {"role": "user", "content": "a story"},
        {"role": "assistant", "content": "It was a dark and"},
        {"role": "user", "content": "go on"},
    ]


async def test_without_a_cap_no_token_limit_is_sent(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    driver = make_driver(max_tokens=None)
    endpoint.script(Reply([*say("Long"), stop("length")]))

    assert await driver.run_turn(make_turn(editor)) == "max_tokens"

    body = endpoint.requests[0].body
    assert "max_tokens" not in body and "max_completion_tokens" not in body
    assert editor.text() == "Long\n\nThe model's answer reached the endpoint's limit on its length."


async def test_a_cap_the_server_refuses_is_explained_with_what_to_change(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    # vLLM refuses a cap larger than what is left of the model's context.
    detail = "'max_tokens' is too large: 8192. This model's maximum context length is 4096."
    endpoint.script(Reply(status=400, body={"error": {"message": detail}}))

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    assert editor.text() == (
        f"The model endpoint {endpoint.base_url} rejected the request (HTTP 400): {detail} "
        "Lower the cap on a response's tokens (--max-tokens or ACP_SIDECAR_MAX_TOKENS; 0 sends "
        "none)."
    )


async def test_a_length_stop_finishes_the_calls_known_complete_but_not_the_cut_one(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor, tmp_path: Path
) -> None:
    # A call followed by another is complete: it started while the response streamed, so it
    # finishes and is logged; the last one may be cut off, so it never starts.
    session = RecordedSession(tmp_path)
    endpoint.script(
        Reply(
            [
                *say("Looking."),
                tool_call(0, "call_done", "look", '{"path": "a"}'),
                call(1, call_id="call_cut", name="note", arguments='{"path": "b", "ne'),
                stop("length"),
            ]
        ),
        answer("Carrying on."),
    )

    assert await session.run(driver, "look", editor=editor) == "max_tokens"

    assert statuses(editor, "call_done") == ["pending", "in_progress", "", "completed"]
    assert editor.cards("call_cut") == []
    assert len(endpoint.requests) == 1  # its result is not sent on in this turn

    assert await session.run(driver, "go on") == "end_turn"
    sent = endpoint.requests[1].messages
    assert_well_formed(sent)
    assert sent[2:] == [
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [
                {
                    "id": "call_done",
                    "type": "function",
                    "function": {"name": "look", "arguments": '{"path": "a"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_done", "content": "looked at a"},
        {"role": "user", "content": "go on"},
    ]


async def test_a_stream_without_a_finish_reason_runs_only_the_calls_known_complete(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor, tmp_path: Path
) -> None:
    # The stream closes (even with [DONE]) before the server said it finished: the call it
    # was sending may be cut off, so it is not run; the one before it was complete.
    session = RecordedSession(tmp_path)
    endpoint.script(
        Reply(
            [
                *say("Looking."),
                tool_call(0, "call_done", "look", '{"path": "a"}'),
                tool_call(1, "call_cut", "note", '{"path": "b"}'),
            ]
        ),
        answer("Carrying on."),
    )

    assert await session.run(driver, "look", editor=editor) == "end_turn"

    assert statuses(editor, "call_done") == ["pending", "in_progress", "", "completed"]
    assert editor.cards("call_cut") == []
    assert editor.text() == (
        f"Looking.\n\nThe model's answer was cut off: the endpoint {endpoint.base_url} ended "
        "the stream without finishing it. The tool call it was still sending (`note`) was "
        "not run."
    )
    assert len(endpoint.requests) == 1  # the result of an incomplete answer is not sent on

    assert await session.run(driver, "go on") == "end_turn"
    sent = endpoint.requests[1].messages
    assert_well_formed(sent)
    assert [m["role"] for m in sent[2:]] == ["assistant", "tool", "user"]
    assert "cut off" not in str(sent)


@pytest.mark.parametrize(
    ("events", "shown"),
    [
        ([chunk({"refusal": "I can't help with that."}), stop()], "I can't help with that."),
        ([*say("Well"), stop("content_filter")], "Well"),
    ],
    ids=["refusal-delta", "content-filter"],
)
async def test_a_refusal_ends_the_turn_with_refusal(
    driver: ModelDriver,
    endpoint: ScriptedOpenAI,
    editor: Editor,
    tmp_path: Path,
    events: list[dict[str, Any]],
    shown: str,
) -> None:
    session = RecordedSession(tmp_path)
    endpoint.script(Reply(events), answer("Something else, then."))

    assert await session.run(driver, "do it", editor=editor) == "refusal"

    assert editor.text() == shown
    assert len(endpoint.requests) == 1

    assert await session.run(driver, "then something else") == "end_turn"
    sent = endpoint.requests[1].messages
    assert_well_formed(sent)
    assert sent[1:] == [
        {"role": "user", "content": "do it"},
        {"role": "assistant", "content": shown},
        {"role": "user", "content": "then something else"},
    ]


async def test_the_request_limit_ends_the_turn_with_max_turn_requests(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    driver = make_driver(max_turn_requests=2)
    endpoint.script(
        calling(tool_call(0, "call_1", "look", '{"path": "one"}')),
        calling(tool_call(0, "call_2", "look", '{"path": "two"}')),
        answer("never requested"),
    )

    assert await driver.run_turn(make_turn(editor)) == "max_turn_requests"

    assert len(endpoint.requests) == 2
    # Both calls ran (the second's result is answered and recorded), then the turn stopped.
    assert editor.cards("call_2")[-1]["status"] == "completed"
    assert endpoint.requests[1].messages[3] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "looked at one",
    }


# -- cancellation -------------------------------------------------------------------------


async def test_cancel_in_the_middle_of_the_stream_aborts_the_request(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor, tmp_path: Path
) -> None:
    session = RecordedSession(tmp_path)
    pause = Pause()
    endpoint.script(
        Reply(
            [
                *say("partial"),
                tool_call(0, "call_in", "look", '{"path": "a"}'),
                call(1, call_id="call_out", name="look", arguments='{"pa'),
                pause,
                *say(" never"),
                stop(),
            ]
        ),
        answer("Resumed."),
    )
    signal = CancelSignal()

    running = asyncio.ensure_future(session.run(driver, "hello", editor=editor, signal=signal))
    await editor.wait_for(lambda e: e.text() == "partial")
    await pause.reached.wait()
    signal.cancel("session/cancel")
    async with asyncio.timeout(30):  # a hang guard: the paused stream never ends
        assert await running == "cancelled"
        await pause.left.wait()  # the server saw the client close the response

    assert editor.text() == "partial"
    assert editor.cards("call_in")[-1]["status"] in ("completed", "failed")  # it was complete
    assert editor.cards("call_out") == []  # still streaming when the turn was cancelled
    assert endpoint.disconnects == 1
    assert len(endpoint.requests) == 1

    assert await session.run(driver, "go on") == "end_turn"
    sent = endpoint.requests[1].messages
    assert_well_formed(sent)
    assert sent[1] == {"role": "user", "content": "hello"}
    assert sent[2]["content"] == "partial"
    assert [c["id"] for c in sent[2]["tool_calls"]] == ["call_in"]
    assert sent[3]["tool_call_id"] == "call_in"
    assert sent[4:] == [{"role": "user", "content": "go on"}]


async def test_cancel_while_a_tool_runs_stops_the_tool_and_the_turn(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    endpoint.script(
        calling(
            tool_call(0, "call_t", "stream", '{"command": "slow", "lines": 1000, "delay_ms": 5}')
        ),
        answer("never requested"),
    )
    signal = CancelSignal()

    running = asyncio.ensure_future(driver.run_turn(make_turn(editor, signal=signal)))
    await editor.wait_for(lambda e: any(u.get("status") == "in_progress" for u in e.cards()))
    signal.cancel("session/cancel")
    async with asyncio.timeout(30):  # a hang guard; a tool not stopped would end "completed"
        assert await running == "cancelled"

    final = editor.cards("call_t")[-1]
    assert final["status"] == "failed"  # the tool saw the signal and stopped early: killed
    assert "Terminated by signal SIGTERM" in final["content"][0]["content"]["text"]
    assert len(endpoint.requests) == 1


async def test_a_turn_cancelled_before_it_starts_sends_nothing(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    signal = CancelSignal()
    signal.cancel()

    assert await driver.run_turn(make_turn(editor, signal=signal)) == "cancelled"
    assert editor.updates == []
    assert endpoint.requests == []


# -- endpoint failures --------------------------------------------------------------------


async def test_http_500_is_retried_and_then_succeeds(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    endpoint.script(
        Reply(
            status=500, body={"error": {"message": "overloaded"}}, headers={"retry-after-ms": "10"}
        ),
        answer("Recovered."),
    )

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    assert editor.text() == "Recovered."
    first, second = endpoint.requests
    assert first.body == second.body


async def test_http_429_is_retried_after_the_delay_the_server_asks_for(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The delay the ``openai`` client chose before each retry (its own retry: we observe it).
    delays: list[float] = []
    chosen = openai_client.BaseClient._calculate_retry_timeout

    def recorded(self: Any, *args: Any, **kwargs: Any) -> float:
        delay: float = chosen(self, *args, **kwargs)
        delays.append(delay)
        return delay

    monkeypatch.setattr(openai_client.BaseClient, "_calculate_retry_timeout", recorded)
    endpoint.script(
        Reply(
            status=429,
            body={"error": {"message": "slow down"}},
            headers={"retry-after-ms": "50"},
        ),
        answer("Recovered."),
    )

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    assert editor.text() == "Recovered."  # nothing about the 429 reaches the user
    assert delays == [0.05]  # the server's delay, not the client's default backoff
    first, second = endpoint.requests
    assert first.body == second.body


async def test_http_500_after_the_retries_is_explained(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    failure = Reply(
        status=503, body={"error": {"message": "overloaded"}}, headers={"retry-after-ms": "1"}
    )
    endpoint.script(failure, failure)

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    assert len(endpoint.requests) == 2  # max_retries=1
    assert editor.text() == (
        f"The model endpoint {endpoint.base_url} failed with HTTP 503 after 1 retry: overloaded."
    )


async def test_a_long_error_body_is_cut_to_its_first_line_and_logged_whole(
    make_driver: MakeDriver,
    endpoint: ScriptedOpenAI,
    editor: Editor,
    caplog: pytest.LogCaptureFixture,
) -> None:
    driver = make_driver(api_key="sk-test-0123456789")
    detail = "x" * 500 + '\n  File "server.py", line 1, in handler\nkey: sk-test-0123456789'
    endpoint.script(
        Reply(status=500, body={"error": {"message": detail}}, headers={"x-should-retry": "false"})
    )

    with caplog.at_level(logging.WARNING):
        assert await driver.run_turn(make_turn(editor)) == "end_turn"

    assert len(endpoint.requests) == 1  # the server said not to retry: no retry is claimed
    assert editor.text() == (
        f"The model endpoint {endpoint.base_url} failed with HTTP 500: "
        + "x" * 300
        + " … (more in the log)."
    )
    # The log has it all, but not the API key the server echoed.
    assert 'File "server.py", line 1, in handler\nkey: [API key]' in caplog.text
    assert "sk-test-0123456789" not in caplog.text


@pytest.mark.parametrize(
    ("api_key", "expected"),
    [
        (
            None,
            "The model endpoint {url} needs an API key (it answered 401 Unauthorized): "
            "Incorrect API key provided. Set OPENAI_API_KEY in the environment acp-sidecar runs in.",
        ),
        (
            "sk-wrong",
            "The model endpoint {url} rejected the API key (401 Unauthorized): "
            "Incorrect API key provided. Check OPENAI_API_KEY.",
        ),
    ],
    ids=["no-key", "wrong-key"],
)
async def test_401_tells_the_user_about_the_key(
    make_driver: MakeDriver,
    endpoint: ScriptedOpenAI,
    editor: Editor,
    tmp_path: Path,
    api_key: str | None,
    expected: str,
) -> None:
    driver = make_driver(api_key=api_key)
    session = RecordedSession(tmp_path)
    endpoint.script(
        Reply(
            status=401,
            body={"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}},
        ),
        answer("Now it works."),
    )

    assert await session.run(driver, "hello", editor=editor) == "end_turn"

    message = expected.format(url=endpoint.base_url)
    assert editor.text() == message
    [request] = endpoint.requests  # not retried
    assert request.headers["authorization"] == f"Bearer {api_key or 'no-key'}"

    # Once the key is fixed, the next prompt carries what the user said; the explanation was
    # the sidecar's, not something the model said.
    assert await session.run(driver, "and now?") == "end_turn"
    sent = endpoint.requests[1].messages
    assert_well_formed(sent)
    assert sent[1:] == [{"role": "user", "content": "hello\n\nand now?"}]


async def test_an_unknown_model_is_explained(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    endpoint.script(Reply(status=404, body={"error": {"message": "model 'test-model' not found"}}))

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    assert editor.text().startswith(
        f"The model endpoint {endpoint.base_url} answered 404 Not Found for model 'test-model': "
        "model 'test-model' not found. Check the model name (--model or ACP_SIDECAR_MODEL)"
    )


async def test_an_error_in_the_middle_of_the_stream_is_explained_after_the_text(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    endpoint.script(Reply([*say("Half"), {"error": {"message": "upstream died"}}]))

    assert await driver.run_turn(make_turn(editor)) == "end_turn"

    assert editor.text() == (
        f"Half\n\nThe model endpoint {endpoint.base_url} reported an error while answering: "
        "upstream died"
    )


async def test_an_error_after_a_complete_call_lets_that_call_finish(
    driver: ModelDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    recording = Recording()
    endpoint.script(
        Reply(
            [
                tool_call(0, "call_ok", "look", '{"path": "a"}'),
                call(1, call_id="call_torn", name="look", arguments='{"pa'),
                {"error": {"message": "upstream died"}},
            ]
        )
    )

    assert await driver.run_turn(make_turn(editor, record=recording)) == "end_turn"

    assert editor.cards("call_ok")[-1]["status"] == "completed"
    assert editor.cards("call_torn") == []
    assert [(event.call_id, result is None) for event, result in recording.events] == [
        ("call_ok", True),
        ("call_ok", False),
    ]
    assert editor.text().endswith("reported an error while answering: upstream died")


async def test_a_refused_connection_is_explained_without_hanging(editor: Editor) -> None:
    async with ScriptedOpenAI() as closed:
        url = closed.base_url  # the port is free again once the server is closed
    registry = ToolRegistry()
    driver = ModelDriver(ModelConfig(model="m", base_url=url, max_retries=0), lambda: registry)

    async with asyncio.timeout(30):  # a hang guard
        assert await driver.run_turn(make_turn(editor)) == "end_turn"
    await driver.aclose()

    assert editor.text().startswith(f"Could not reach the model endpoint {url} (")
    assert editor.text().endswith(
        "). Check that the server is running and that the base URL is right."
    )


async def test_a_base_url_without_a_scheme_is_explained(editor: Editor) -> None:
    registry = ToolRegistry()
    config = ModelConfig(model="m", base_url="localhost:11434/v1")
    driver = ModelDriver(config, lambda: registry)

    assert await driver.run_turn(make_turn(editor)) == "end_turn"
    await driver.aclose()

    assert editor.text() == (
        "The model base URL 'localhost:11434/v1' is not an http:// or https:// URL. "
        "Set --base-url or OPENAI_BASE_URL to the API root, e.g. http://localhost:11434/v1."
    )


async def test_a_silent_endpoint_times_out_with_a_message(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    driver = make_driver(request_timeout=0.2, max_retries=0)
    pause = Pause()
    endpoint.script(Reply([*say("slow"), pause]))

    async with asyncio.timeout(30):  # a hang guard: the paused stream never ends
        assert await driver.run_turn(make_turn(editor)) == "end_turn"
    pause.release.set()

    assert editor.text() == (
        f"slow\n\nThe model endpoint {endpoint.base_url} did not answer within 0.2 seconds."
    )
