"""The decode fast paths make exactly what the general code makes: the same values, of the same
exact types and frozen-ness at every depth, with the same time, and the same error for a line
that is damage. The general code is written out here as the decoders read before the fast
paths (attrs constructors, converters and all), and both read many varied lines."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_sidecar.store import decoders
from acp_sidecar.store.codec import RecordDecodeError, decode_line, encode_record
from acp_sidecar.store.decoders import freeze_parsed
from acp_sidecar.store.records import ToolCallRecord, ToolResultRecord
from acp_sidecar.tools.content import ContentBlock, TextContent, content_from_json
from acp_sidecar.tools.json_values import FrozenDict, freeze_json
from acp_sidecar.tools.result import (
    ToolErrorInfo,
    ToolExecutionResult,
    result_from_json,
)
from acp_sidecar.tools.slots import field_setters
from tests.store.test_record_times import any_record


def shape(value: Any) -> Any:
    """``value`` with the exact type of everything in it, attrs instances field by field (the
    time, which equality leaves out, included)."""
    if attrs.has(type(value)):
        fields = [(f.name, shape(getattr(value, f.name))) for f in attrs.fields(type(value))]
        return (type(value), fields)
    if isinstance(value, dict):
        return (type(value), [(k, shape(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value), [shape(v) for v in value])
    if isinstance(value, datetime):
        return (type(value), value, value.tzinfo)
    return (type(value), value)


def general_result_from_json(data: Any) -> ToolExecutionResult:
    """``result_from_json`` through the constructor and its converters."""
    try:
        error = data.get("error")
        call_id = data["callId"]
        is_error = data["isError"]
        if not isinstance(call_id, str) or not isinstance(is_error, bool):
            raise ValueError("callId must be a string and isError a boolean")
        content: list[ContentBlock] = []
        for block in data["content"]:
            text = block.get("text") if type(block) is dict and len(block) == 2 else None
            if type(text) is str and block.get("type") == "text":
                content.append(TextContent(text))
            else:
                content.append(content_from_json(block))
        return ToolExecutionResult(
            call_id=call_id,
            content=content,
            is_error=is_error,
            error=None if error is None else ToolErrorInfo(str(error["name"]), str(error["code"])),
            additional_context=data.get("additionalContext"),
            meta=data.get("meta"),
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a tool result: {exc}") from exc


def general_tool_call(data: dict[str, Any]) -> ToolCallRecord:
    return ToolCallRecord(
        call_id=decoders._str(data, "callId"),
        name=decoders._str(data, "name"),
        arguments=freeze_parsed(data.get("arguments")),
        title=decoders._optional(data, "title"),
        kind=decoders._optional(data, "kind"),
    )


def outcome(function: Any, *args: Any) -> Any:
    """What ``function(*args)`` returns, by :func:`shape`, or the type and text it raises."""
    try:
        return ("value", shape(function(*args)))
    except Exception as exc:  # the outcome compared is any exception
        return ("raised", type(exc), str(exc))


scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=25,
)
blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=8)),
    st.builds(lambda d: {"type": "image", "data": d, "mimeType": "image/png"}, st.text()),
    st.builds(lambda u: {"type": "resource_link", "uri": u, "name": "n"}, st.text(max_size=4)),
    st.builds(lambda t: {"type": "text", "text": t, "extra": 1}, st.text(max_size=4)),
    st.dictionaries(st.sampled_from(["type", "text", "uri"]), json_values, max_size=3),
    json_values,
)
error_objects = (
    st.none()
    | st.fixed_dictionaries({"name": scalars, "code": scalars})
    | st.dictionaries(st.sampled_from(["name", "code"]), scalars)
)
results = st.fixed_dictionaries(
    {},
    optional={
        "callId": st.text(max_size=6) | scalars,
        "content": st.lists(blocks, max_size=4) | scalars,
        "isError": st.booleans() | scalars,
        "error": error_objects,
        "additionalContext": json_values,
        "meta": json_values,
    },
)


@settings(max_examples=300, deadline=None)
@given(results, st.booleans())
def test_a_result_is_read_as_the_constructor_makes_it(data: dict[str, Any], frozen: bool) -> None:
    data = json.loads(json.dumps(data))  # a parse's own values, as the store reads them
    if frozen:  # as the store's decoder hands them over
        for key in ("meta", "additionalContext"):
            if key in data:
                data[key] = freeze_parsed(data[key])
    assert outcome(result_from_json, data) == outcome(general_result_from_json, data)


@pytest.mark.parametrize(
    "data",
    [
        {"callId": "c", "content": [], "isError": False, "meta": [1, {"a": [2]}]},
        {"callId": "c", "content": [], "isError": False, "meta": 1e400},
        {"callId": "c", "content": [], "isError": False, "meta": {"x": 1e400}},
        {"callId": "c", "content": [], "isError": False, "additionalContext": (float("inf"),)},
        {"callId": "c", "content": [], "isError": True, "error": {"name": 1}, "meta": [1e400]},
        {"callId": "c", "content": "text", "isError": False},
        {"callId": "c", "content": [{"type": "text", "text": 3}], "isError": False},
    ],
)
def test_odd_results_are_read_or_refused_as_the_constructor_does(data: dict[str, Any]) -> None:
    assert outcome(result_from_json, data) == outcome(general_result_from_json, data)


@pytest.mark.parametrize(
    "cls", [ToolExecutionResult, TextContent, ToolCallRecord, ToolResultRecord]
)
def test_field_setters_set_every_field_the_constructor_sets(cls: type) -> None:
    names = [field.name for field in attrs.fields(cls)]
    made = cls.__new__(cls)
    for setter, name in zip(field_setters(cls), names, strict=True):
        setter(made, f"value of {name}")
    assert {name: getattr(made, name) for name in names} == {
        name: f"value of {name}" for name in names
    }


calls = st.fixed_dictionaries(
    {},
    optional={
        "callId": st.text(max_size=6) | scalars,
        "name": st.text(max_size=6) | scalars,
        "arguments": json_values,
        "title": st.none() | st.text(max_size=6) | scalars,
        "kind": st.none() | st.text(max_size=6) | scalars,
    },
)


@settings(max_examples=300, deadline=None)
@given(calls)
def test_a_call_is_read_as_the_constructor_makes_it(data: dict[str, Any]) -> None:
    data = json.loads(json.dumps(data))
    assert outcome(decoders._tool_call, data) == outcome(general_tool_call, data)


def general_decode_line(line: bytes) -> Any:
    """``decode_line`` with the general decoders of calls and results."""

    def tool_result(data: dict[str, Any]) -> ToolResultRecord:
        result = data.get("result")
        if type(result) is not dict:
            raise RecordDecodeError("'result' must be an object")
        for key in ("meta", "additionalContext"):
            if key in result:
                result[key] = freeze_parsed(result[key])
        try:
            return ToolResultRecord(result=general_result_from_json(result))
        except ValueError as exc:
            raise RecordDecodeError(f"'result' is not a tool result: {exc}") from None

    fast = dict(decoders.DECODERS)
    decoders.DECODERS.update(tool_call=general_tool_call, tool_result=tool_result)
    try:
        return decode_line(line)
    finally:
        decoders.DECODERS.update(fast)


@settings(max_examples=400, deadline=None)
@given(any_record)
def test_every_record_line_is_read_as_the_general_decoders_read_it(record: Any) -> None:
    line = encode_record(record)
    assert outcome(decode_line, line) == outcome(general_decode_line, line)


ODD_LINES = [
    # child sessions, offsets, nested meta and lists, damage
    b'{"v":2,"type":"tool_call","callId":"c","name":"run","arguments":{"a":[1,{"b":null}]},'
    b'"title":"T","kind":"execute","t":"2025-01-02T08:34:05.5+05:30","s":"child-1"}',
    b'{"v":1,"type":"tool_call","callId":"c","name":"run","arguments":[1,[2,{}],{"x":{}}]}',
    b'{"v":2,"type":"tool_call","callId":"c","name":"run","arguments":"text","s":""}',
    b'{"v":2,"type":"tool_call","callId":"c","name":7,"arguments":{}}',
    b'{"v":2,"type":"tool_call","callId":"c","name":"n","title":3}',
    b'{"v":2,"type":"tool_call","callId":"c","name":"n","t":"2025-01-02T03:04:05"}',
    b'{"v":2.0,"type":"tool_call","callId":"c","name":"n","arguments":null,"kind":null}',
    b'{"v":2,"type":"tool_result","result":{"callId":"c","content":[{"type":"text","text":"x"}],'
    b'"isError":false,"meta":{"matches":[{"path":"p","line":1,"text":"t"},{"path":"q"}],'
    b'"truncated":true},"additionalContext":[{"a":1}]},"t":"2026-12-04T01:19:54.420081Z",'
    b'"s":"child-2"}',
    b'{"v":2,"type":"tool_result","result":{"callId":"c","content":[],"isError":true,'
    b'"error":{"name":"E","code":"x"},"meta":[1,2,{"a":[]}]}}',
    b'{"v":2,"type":"tool_result","result":{"callId":"c","content":[],"isError":false,'
    b'"meta":1e400}}',
    b'{"v":2,"type":"tool_result","result":{"callId":"c","content":[],"isError":false,'
    b'"meta":{"x":[1e400]}}}',
    b'{"v":2,"type":"tool_result","result":{"callId":"c","content":[{"type":"image"}],'
    b'"isError":false}}',
    b'{"v":2,"type":"tool_result","result":{"callId":1,"content":[],"isError":false}}',
    b'{"v":2,"type":"tool_result","result":[]}',
    b'{"v":2,"type":"tool_result","result":{"callId":"c","content":[],"isError":false},"s":3}',
    b'{"v":3,"type":"tool_call","callId":"c","name":"n"}',
    b'{"v":2,"type":"tool_call","callId":"c"',
]


@pytest.mark.parametrize("line", ODD_LINES)
def test_odd_lines_are_read_as_the_general_decoders_read_them(line: bytes) -> None:
    assert outcome(decode_line, line) == outcome(general_decode_line, line)


def test_the_bench_sessions_kinds_of_line_are_read_as_the_general_decoders_read_them() -> None:
    lines = [
        encode_record(record)
        for record in (
            ToolCallRecord("c1", "run", freeze_json({"command": "pytest", "cwd": "/w"})),
            ToolResultRecord(
                ToolExecutionResult(
                    "c1",
                    [TextContent("out")],
                    False,
                    meta={"matches": [{"path": "p", "line": n, "text": "t"} for n in range(20)]},
                )
            ),
        )
    ]
    for line in lines:
        decoded = outcome(decode_line, line)
        assert decoded[0] == "value" and decoded == outcome(general_decode_line, line)
    frozen = decode_line(lines[1]).result.meta  # type: ignore[union-attr]
    assert type(frozen) is FrozenDict and type(frozen["matches"][0]) is FrozenDict


@pytest.mark.parametrize("cls", [TextContent, ToolCallRecord, ToolResultRecord])
def test_a_class_built_slot_by_slot_with_no_check_of_its_own_has_none_to_skip(cls: type) -> None:
    # Its fast path sets every field as given: a converter or validator added later would
    # be skipped there (ToolExecutionResult's converters are run by hand, and tested above).
    assert all(field.converter is None and field.validator is None for field in attrs.fields(cls))
