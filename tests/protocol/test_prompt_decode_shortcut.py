"""``text_prompt_request`` against the converter: where the short cut decodes a prompt it is
the value the converter makes (field by field, exact types, the same wire JSON back); every
other shape it leaves to the converter."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.protocol.content import TextContentBlock
from acp_sidecar.protocol.converter import from_wire, to_wire
from acp_sidecar.protocol.decoding import text_prompt_request
from acp_sidecar.protocol.session import PromptRequest
from acp_sidecar.server.app import decode_params


class Text(str):
    """A ``str`` subclass: the converter keeps it as it is."""


def shape(value: Any) -> Any:
    """``value`` with every type spelled out, so an equal value of another type differs."""
    if isinstance(value, PromptRequest | TextContentBlock):
        return (type(value), [(name, shape(getattr(value, name))) for name in value.__slots__])
    if isinstance(value, list | tuple):
        return (type(value), [shape(item) for item in value])
    if isinstance(value, dict):
        return (type(value), {key: shape(item) for key, item in value.items()})
    return (type(value), value)


scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=4)
texts = st.text(max_size=6) | st.builds(Text, st.text(max_size=6))
tags = st.sampled_from(["text", "image", "resource_link", "Text", ""]) | st.builds(
    Text, st.just("text")
)
blocks = st.fixed_dictionaries(
    {},
    optional={
        "type": tags | scalars,
        "text": texts | scalars,
        "annotations": st.none() | st.just({"priority": 1.0}) | scalars,
        "_meta": st.none() | st.just({"a": 1}) | scalars,
        "uri": st.just("file:///a"),
        "name": st.just("a"),
        "extra": scalars,
    },
)
common_blocks = st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=6)})
prompts = st.fixed_dictionaries(
    {},
    optional={
        "sessionId": st.text(max_size=4) | st.builds(Text, st.text(max_size=4)) | scalars,
        "prompt": st.lists(common_blocks | blocks, max_size=3) | scalars | st.just({}),
        "_meta": st.none() | st.just({"a": 1}) | scalars,
        "extra": scalars,
    },
)
common_prompts = st.fixed_dictionaries(
    {"sessionId": st.text(max_size=4), "prompt": st.lists(common_blocks, max_size=3)},
    optional={"extra": scalars},
)


def general(raw: Any) -> Any:
    try:
        return ("value", shape(from_wire(raw, PromptRequest)))
    except Exception as exc:  # the outcome compared is any exception
        return ("raised", type(exc), str(exc))


def check(raw: Any) -> PromptRequest | None:
    fast = text_prompt_request(raw)
    if fast is not None:
        assert ("value", shape(fast)) == general(raw)
        assert to_wire(fast) == to_wire(from_wire(raw, PromptRequest))
    return fast


@given(prompts | common_prompts)
def test_the_short_cut_is_the_converter_where_it_decodes(raw: dict[str, Any]) -> None:
    check(raw)


@given(common_prompts)
def test_the_common_prompt_takes_the_short_cut(raw: dict[str, Any]) -> None:
    assert check(raw) is not None


@pytest.mark.parametrize(
    "raw",
    [
        {"sessionId": "s", "prompt": [{"type": "text", "text": "ping"}]},
        {"sessionId": "s", "prompt": []},
        {"sessionId": "s", "prompt": [{"type": "text", "text": ""}], "other": [1]},
        {
            "sessionId": "s",
            "prompt": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        },
    ],
)
def test_common_prompts_are_short_cut(raw: dict[str, Any]) -> None:
    assert check(raw) is not None


@pytest.mark.parametrize(
    "raw",
    [
        {"sessionId": Text("s"), "prompt": [{"type": "text", "text": "a"}]},
        {"sessionId": "s", "prompt": [{"type": Text("text"), "text": "a"}]},
        {"sessionId": "s", "prompt": [{"type": "text", "text": Text("a")}]},
        {"sessionId": "s", "prompt": [{"type": "text", "text": "a", "_meta": {"k": 1}}]},
        {"sessionId": "s", "prompt": [{"type": "text", "text": "a", "annotations": None}]},
        {"sessionId": "s", "prompt": [{"type": "text", "text": "a"}], "_meta": {"k": 1}},
        {"sessionId": "s", "prompt": [{"type": "text", "text": "a"}], "_meta": None},
        {"sessionId": "s", "prompt": [{"type": "text", "text": 1}]},
        {"sessionId": "s", "prompt": [{"type": "text"}, {"type": "text", "text": "a"}]},
        {"sessionId": "s", "prompt": [{"type": "image", "text": "a"}]},
        {"sessionId": "s", "prompt": [["type", "text"]]},
        {"sessionId": "s", "prompt": ({"type": "text", "text": "a"},)},
        {"sessionId": 1, "prompt": []},
        {"prompt": []},
        {"sessionId": "s"},
    ],
)
def test_odd_prompts_are_left_to_the_converter(raw: dict[str, Any]) -> None:
    assert check(raw) is None


@given(prompts | common_prompts)
def test_decode_params_answers_as_the_converter_does(raw: dict[str, Any]) -> None:
    try:
        got: Any = ("value", shape(decode_params(raw, PromptRequest)))
    except Exception as exc:  # the outcome compared is any exception
        got = ("raised", type(exc), str(exc))
    expected = general(raw)
    if expected[0] == "value":
        assert got == expected
    else:
        assert got[0] == "raised"
