"""History → chat messages, prompts → text, schemas → tools (pure functions)."""

from __future__ import annotations

from typing import Any

from acp_sidecar.agent.model.messages import (
    HistoryInput,
    history_messages,
    prompt_text,
    system_message,
    tool_specs,
)
from acp_sidecar.store import History
from acp_sidecar.store.records import (
    AgentMessageRecord,
    AgentThoughtRecord,
    Record,
    ToolCallRecord,
    ToolResultRecord,
    TurnEndRecord,
    UserMessageRecord,
)
from acp_sidecar.tools.content import ImageContent, TextContent
from acp_sidecar.tools.json_values import FrozenDict, freeze_json
from acp_sidecar.tools.result import ToolErrorInfo, ToolExecutionResult


def user(text: str) -> UserMessageRecord:
    return UserMessageRecord(content=(FrozenDict({"type": "text", "text": text}),))


def called(call_id: str, name: str = "look", arguments: Any = None) -> ToolCallRecord:
    return ToolCallRecord(
        call_id=call_id,
        name=name,
        arguments=freeze_json({"path": call_id} if arguments is None else arguments),
    )


def result(
    call_id: str,
    text: str = "ok",
    *,
    error: str | None = None,
    context: Any = None,
) -> ToolResultRecord:
    return ToolResultRecord(
        result=ToolExecutionResult(
            call_id=call_id,
            content=(TextContent(text),),
            is_error=error is not None,
            error=None if error is None else ToolErrorInfo("SomeError", error),
            additional_context=context,
        )
    )


def sent_call(call_id: str, arguments: str | None = None, name: str = "look") -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": arguments or f'{{"path": "{call_id}"}}'},
    }


def answered(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


# -- prompts ------------------------------------------------------------------------------


def test_prompt_blocks_become_text() -> None:
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": "Compare "},
        {"type": "resource_link", "name": "a.py", "uri": "file:///w/a.py"},
        {"type": "text", "text": " with "},
        {"type": "resource_link", "name": "b", "title": "B file", "uri": "file:///w/b"},
        {
            "type": "resource",
            "resource": {"uri": "file:///w/c.py", "text": "print(1)", "mimeType": "text/x-python"},
        },
        {
            "type": "resource",
            "resource": {"uri": "file:///w/d.png", "blob": "AAAA", "mimeType": "image/png"},
        },
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "mystery"},
    ]
    assert prompt_text(blocks) == (
        "Compare [@a.py](file:///w/a.py) with [@B file](file:///w/b)"
        '\n<context uri="file:///w/c.py">\nprint(1)\n</context>\n'
        "\n[file:///w/d.png: image/png content, not included]\n"
        "[image/png image, not sent: the model does not take images]"
    )


def test_the_system_prompt_names_the_workspace_and_platform() -> None:
    message = system_message("/home/me/project", system="Darwin")
    assert message["role"] == "system"
    assert "The workspace is /home/me/project;" in message["content"]
    assert "The platform is Darwin." in message["content"]


def test_schemas_become_function_tools() -> None:
    schema = {"name": "look", "description": "Look.", "parameters": {"type": "object"}}
    assert tool_specs([schema]) == [
        {
            "type": "function",
            "function": {"name": "look", "description": "Look.", "parameters": {"type": "object"}},
        }
    ]


# -- history ------------------------------------------------------------------------------


def test_a_conversation_with_parallel_calls() -> None:
    history: list[HistoryInput] = [
        user("fix it"),
        AgentMessageRecord("Looking."),
        called("c1"),
        called("c2"),
        result("c2", "two"),  # finished first
        result("c1", "one"),
        AgentMessageRecord("Fixed."),
        user("thanks"),
        AgentMessageRecord("Welcome."),
    ]
    assert history_messages(history) == [
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": "Looking.",
            "tool_calls": [sent_call("c1"), sent_call("c2")],
        },
        answered("c1", "one"),  # in call order
        answered("c2", "two"),
        {"role": "assistant", "content": "Fixed."},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "Welcome."},
    ]


def test_consecutive_steps_make_separate_assistant_messages() -> None:
    history: list[HistoryInput] = [
        user("go"),
        called("c1"),
        result("c1"),
        called("c2"),
        result("c2"),
    ]
    assert history_messages(history) == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [sent_call("c1")]},
        answered("c1"),
        {"role": "assistant", "content": "", "tool_calls": [sent_call("c2")]},
        answered("c2"),
    ]


def test_a_call_recorded_after_a_result_of_its_step_joins_the_step() -> None:
    # With the parallel cap, a queued call is recorded when it starts: after earlier results.
    history: list[HistoryInput] = [
        user("go"),
        called("c1"),
        called("c2"),
        result("c1"),
        called("c3"),
        result("c3"),
        result("c2"),
    ]
    assert history_messages(history)[1:] == [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [sent_call("c1"), sent_call("c2"), sent_call("c3")],
        },
        answered("c1"),
        answered("c2"),
        answered("c3"),
    ]


def test_agent_text_between_a_call_and_its_result_moves_after_the_results() -> None:
    history: list[HistoryInput] = [
        user("go"),
        called("c1"),
        AgentMessageRecord("meanwhile"),
        result("c1"),
    ]
    assert history_messages(history)[1:] == [
        {"role": "assistant", "content": "", "tool_calls": [sent_call("c1")]},
        answered("c1"),
        {"role": "assistant", "content": "meanwhile"},
    ]


def test_split_agent_text_joins_one_message() -> None:
    history: list[HistoryInput] = [user("hi"), AgentMessageRecord("Hel"), AgentMessageRecord("lo")]
    assert history_messages(history)[1] == {"role": "assistant", "content": "Hello"}


def test_arguments_the_log_could_not_keep_are_sent_as_an_empty_object() -> None:
    history: list[HistoryInput] = [
        user("go"),
        ToolCallRecord(call_id="c1", name="note", arguments=None),
        result("c1", "Invalid arguments:\n- not JSON", error="INVALID_ARGS"),
    ]
    assert history_messages(history)[1:] == [
        {"role": "assistant", "content": "", "tool_calls": [sent_call("c1", "{}", "note")]},
        answered("c1", "Error (INVALID_ARGS): Invalid arguments:\n- not JSON"),
    ]


def test_arguments_are_sent_as_json_text() -> None:
    arguments = {"path": "ü.txt", "lines": [1, 2], "deep": {"ok": True, "none": None}}
    history: list[HistoryInput] = [user("go"), called("c1", "note", arguments), result("c1")]
    sent = history_messages(history)[1]["tool_calls"][0]["function"]["arguments"]
    assert sent == '{"path": "ü.txt", "lines": [1, 2], "deep": {"ok": true, "none": null}}'


def test_result_content_the_model_reads() -> None:
    mixed = ToolResultRecord(
        result=ToolExecutionResult(
            call_id="c1",
            content=(TextContent("see "), ImageContent("AAAA", "image/png")),
            is_error=False,
        )
    )
    empty = ToolResultRecord(result=ToolExecutionResult(call_id="c2", content=(), is_error=False))
    unknown_error = ToolResultRecord(
        result=ToolExecutionResult(call_id="c3", content=(TextContent("bad"),), is_error=True)
    )
    history: list[HistoryInput] = [
        user("go"),
        called("c1"),
        called("c2"),
        called("c3"),
        mixed,
        empty,
        unknown_error,
    ]
    assert history_messages(history)[2:] == [
        answered("c1", "see [image/png image not shown]"),
        answered("c2", "(no output)"),
        answered("c3", "Error (ERROR): bad"),
    ]


def test_additional_context_follows_all_results_of_its_step() -> None:
    history: list[HistoryInput] = [
        user("go"),
        called("c1"),
        called("c2"),
        result("c1", context="Remember the style guide."),
        result("c2", context={"lint": ["E501"]}),
        AgentMessageRecord("Done."),
    ]
    assert history_messages(history)[2:] == [
        answered("c1"),
        answered("c2"),
        {"role": "user", "content": 'Remember the style guide.\n\n{"lint": ["E501"]}'},
        {"role": "assistant", "content": "Done."},
    ]


def test_thoughts_go_back_with_tool_calls_only_when_the_field_is_known() -> None:
    history: list[HistoryInput] = [
        user("go"),
        AgentThoughtRecord("Plan: "),
        AgentThoughtRecord("look."),
        AgentMessageRecord("Looking."),
        called("c1"),
        result("c1"),
        AgentThoughtRecord("All good."),
        AgentMessageRecord("Done."),
    ]
    with_field = history_messages(history, "reasoning_content")
    assert with_field[1]["reasoning_content"] == "Plan: look."
    assert with_field[3] == {"role": "assistant", "content": "Done."}
    without = history_messages(history)
    assert "reasoning_content" not in without[1]
    assert [m["role"] for m in without] == ["user", "assistant", "tool", "assistant"]


def test_an_interrupted_call_is_answered_through_the_stores_history() -> None:
    records: list[Record] = [user("go"), called("c1"), TurnEndRecord("cancelled"), user("again")]
    messages = history_messages(History(records))
    assert messages[2] == answered(
        "c1", "Error (INTERRUPTED): The tool call was interrupted before it returned a result."
    )
    assert messages[3] == {"role": "user", "content": "again"}


def test_a_prompt_that_got_no_answer_joins_the_next_one() -> None:
    # Cancelled (or refused by the endpoint) before the model said anything: the log holds
    # two prompts in a row, which templates that require alternating roles refuse.
    records: list[Record] = [
        user("first"),
        TurnEndRecord("cancelled"),
        user("second"),
        TurnEndRecord("end_turn"),
        user("third"),
        AgentMessageRecord("Hi."),
        user("fourth"),
    ]
    assert history_messages(History(records)) == [
        {"role": "user", "content": "first\n\nsecond\n\nthird"},
        {"role": "assistant", "content": "Hi."},
        {"role": "user", "content": "fourth"},
    ]


def test_a_prompt_after_tool_context_joins_that_context() -> None:
    records: list[Record] = [
        user("look"),
        called("c1"),
        result("c1", context="the file changed since"),
        TurnEndRecord("cancelled"),
        user("go on"),
    ]
    messages = history_messages(History(records))
    assert messages[2:] == [
        answered("c1"),
        {"role": "user", "content": "the file changed since\n\ngo on"},
    ]
