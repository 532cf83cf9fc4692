"""Assembling one streamed response from its chunks (as the ``openai`` client builds them)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from openai.types.chat import ChatCompletionChunk

from acp_sidecar.agent.model.stream import CallDraft, StreamAssembly
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


class Heard:
    """``on_call``: each call handed over, with how many chunks had been fed by then."""

    def __init__(self) -> None:
        self.fed = 0
        self.calls: list[tuple[int, int, str, str]] = []

    def __call__(self, draft: CallDraft) -> None:
        self.calls.append((self.fed, draft.index, draft.name, draft.arguments))


def feed_heard(*chunks: dict[str, Any]) -> tuple[StreamAssembly, Heard]:
    heard = Heard()
    assembly = StreamAssembly(heard)
    for data in chunks:
        assembly.feed(ChatCompletionChunk.construct(**data))
        heard.fed += 1
    return assembly, heard


def test_a_call_is_handed_over_when_the_next_index_opens_and_the_last_at_the_end() -> None:
    assembly, heard = feed_heard(
        call(0, call_id="a", name="look", arguments='{"path":'),
        call(0, arguments=' "a"}'),
        call(1, call_id="b", name="look", arguments='{"path": "b"}'),
        call(2, call_id="c", name="note", arguments="{"),
        stop("tool_calls"),
    )
    # a when b's first fragment came (chunk 3), b when c's came (chunk 4); c not yet.
    assert heard.calls == [(2, 0, "look", '{"path": "a"}'), (3, 1, "look", '{"path": "b"}')]
    assembly.close_calls()
    assert heard.calls[2:] == [(5, 2, "note", "{")]
    assembly.close_calls()  # each call once
    assert len(heard.calls) == 3


def test_calls_without_an_index_are_handed_over_when_a_new_id_opens() -> None:
    _, heard = feed_heard(
        call(None, call_id="id_a", name="look", arguments='{"path":'),
        call(None, arguments=' "a"}'),
        call(None, call_id="id_b", name="look", arguments="{"),
    )
    assert heard.calls == [(2, 0, "look", '{"path": "a"}')]


def test_a_lower_index_opening_later_completes_nothing() -> None:
    assembly, heard = feed_heard(
        call(1, call_id="id_b", name="look", arguments="{}"),
        call(0, call_id="id_a", name="note", arguments="{}"),
    )
    assert heard.calls == []
    assembly.close_calls()
    assert [(index, name) for _, index, name, _ in heard.calls] == [(0, "note"), (1, "look")]


def test_a_call_without_a_name_is_never_handed_over() -> None:
    assembly, heard = feed_heard(
        call(0, call_id="a", arguments="{}"),
        call(1, call_id="b", name="look", arguments="{}"),
    )
    assembly.close_calls()
    assert [index for _, index, _, _ in heard.calls] == [1]


def test_a_fragment_for_a_call_already_handed_over_is_dropped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, "acp_sidecar.agent.model.stream"):
        assembly, heard = feed_heard(
            call(0, call_id="a", name="look", arguments="{}"),
            call(1, call_id="b", name="look", arguments="{}"),
            call(0, arguments="garbage"),
        )
    assert heard.calls == [(1, 0, "look", "{}")]
    assert assembly.calls()[0].arguments == "{}"  # what ran is what the model is told
    assert caplog.messages == [
        "a fragment for tool call 0 arrived after a later call opened; it is dropped"
    ]
