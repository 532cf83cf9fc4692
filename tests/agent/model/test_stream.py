"""Assembling one streamed response from its chunks (as the ``openai`` client builds them)."""

from __future__ import annotations

from typing import Any

from openai.types.chat import ChatCompletionChunk

from acp_sidecar.agent.model.stream import StreamAssembly
from tests.agent.model.fake_openai import call, chunk, say, stop, think


def feed(*chunks: dict[str, Any]) -> tuple[StreamAssembly, list[tuple[str, str]]]:
    assembly = StreamAssembly()
    shown = [assembly.feed(ChatCompletionChunk.construct(**data)) for data in chunks]
    return assembly, shown


def drafts(assembly: StreamAssembly) -> list[tuple[int, str, str, str]]:
    return [(d.index, d.call_id, d.name, d.arguments) for d in assembly.calls()]


def test_text_and_reasoning_are_shown_as_they_come() -> None:
    assembly, shown = feed(*think("a", "b"), *say("c"), stop())
    assert shown == [("a", ""), ("b", ""), ("", "c"), ("", "")]
    assert (assembly.thoughts, assembly.text) == ("ab", "c")
    assert assembly.reasoning_field == "reasoning_content"
    assert assembly.finish_reason == "stop"


def test_two_spellings_of_the_same_reasoning_count_once() -> None:
    both = chunk({"reasoning_content": "x", "reasoning": "x", "reasoning_details": [{"text": "x"}]})
    assembly, shown = feed(both, *think("y", field="reasoning"))
    assert shown == [("x", ""), ("y", "")]
    assert assembly.reasoning_field == "reasoning_content"  # the first one seen


def test_calls_interleaved_by_index_are_assembled_in_index_order() -> None:
    assembly, _ = feed(
        call(1, call_id="id_b", name="look", arguments='{"pa'),
        call(0, call_id="id_a", name="note", arguments=""),
        call(1, arguments='th": "b"}'),
        call(0, arguments="{}"),
        stop("tool_calls"),
    )
    assert drafts(assembly) == [
        (0, "id_a", "note", "{}"),
        (1, "id_b", "look", '{"path": "b"}'),
    ]
    assert assembly.finish_reason == "tool_calls"


def test_calls_without_an_index_follow_their_ids() -> None:
    assembly, _ = feed(
        call(None, call_id="id_a", name="look", arguments='{"path":'),
        call(None, arguments=' "a"}'),
        call(None, call_id="id_b", name="look", arguments='{"path": "b"}'),
    )
    assert drafts(assembly) == [
        (0, "id_a", "look", '{"path": "a"}'),
        (1, "id_b", "look", '{"path": "b"}'),
    ]


def test_a_name_repeated_in_every_fragment_is_not_doubled_but_a_split_one_is_joined() -> None:
    assembly, _ = feed(
        call(0, call_id="a", name="look", arguments="{"),
        call(0, name="look", arguments="}"),
        call(1, call_id="b", name="lo"),
        call(1, name="ok", arguments="{}"),
    )
    assert [(d.name, d.arguments) for d in assembly.calls()] == [("look", "{}"), ("look", "{}")]


def test_a_call_that_never_got_a_name_is_dropped() -> None:
    assembly, _ = feed(call(0, call_id="a", arguments="{}"))
    assert assembly.calls() == []


def test_refusals_and_odd_chunks() -> None:
    usage_only = {**chunk(), "choices": [], "usage": {"prompt_tokens": 1}}
    no_delta = {**chunk(), "choices": [{"index": 0, "finish_reason": "stop"}]}
    assembly, shown = feed(usage_only, chunk({"refusal": "No."}), no_delta)
    assert shown == [("", ""), ("", "No."), ("", "")]
    assert assembly.refused
    assert assembly.text == "No."
    assert assembly.finish_reason == "stop"
