"""The builders of :mod:`acp_sidecar.tools.built` give what their classes' constructors give:
the same field values for values they take, the same error for any they do not."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_sidecar.tools.built import diff_call_view, file_diff, generic_call_view, tool_result
from acp_sidecar.tools.content import ImageContent, TextContent
from acp_sidecar.tools.json_values import FrozenDict, freeze_json
from acp_sidecar.tools.presentation import (
    TOOL_CALL_KINDS,
    DiffCallView,
    FileDiff,
    FileLocation,
    GenericCallView,
    ToolResult,
)


class Text(str):
    """A str that is not exactly a str (validators refuse it)."""


class Frozen(FrozenDict):
    __slots__ = ()


class Block(TextContent):
    """A content block's subclass (validators refuse it)."""


json_leaf = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)
frozen = json_value.map(freeze_json)
odd = st.sampled_from(
    [
        math.nan,
        math.inf,
        {1: "x"},
        {"x": math.nan},
        {"x": object()},
        [1, 2],
        (1, 2),
        b"bytes",
        Text("text"),
        Frozen(),
        True,
        3,
        "",
        "édit ☃ /tmp/ü",
    ]
)
anything = frozen | json_value | odd
texts = st.text() | st.sampled_from(["", "src/ü.py", "/abs/путь", "a\nb\u202e"]) | odd
kinds = st.sampled_from([*TOOL_CALL_KINDS, None, "nope", "", Text("edit"), 3])
blocks = st.sampled_from(
    [
        TextContent("x"),
        TextContent(""),
        ImageContent(data="aGk=", mime_type="image/png"),
        Block("sub"),
        "text",
        None,
    ]
)
block_seqs = st.lists(blocks, max_size=3).flatmap(
    lambda items: st.sampled_from([tuple(items), items])
)


def same(built: Callable[[], Any], made: Callable[[], Any]) -> None:
    """Both calls return equal instances whose fields are the very same values, or both raise
    the same error."""
    try:
        expected = made()
    except Exception as exc:
        try:
            built()
        except Exception as got:
            assert type(got) is type(exc)
            assert str(got) == str(exc)
            return
        raise AssertionError(f"the builder took what the class refused: {exc!r}") from None
    value = built()
    assert type(value) is type(expected)
    assert value == expected
    for field in attrs.fields(type(expected)):
        mine, theirs = getattr(value, field.name), getattr(expected, field.name)
        assert type(mine) is type(theirs)
        if type(theirs) is not tuple or theirs:  # an empty tuple is one object anyway
            assert mine is theirs or mine == theirs


@settings(max_examples=400)
@given(texts, kinds, anything | st.none())
def test_generic_call_view(title: Any, kind: Any, raw_input: Any) -> None:
    same(
        lambda: generic_call_view(title, kind, raw_input),
        lambda: GenericCallView(title=title, kind=kind, raw_input=raw_input),
    )


def test_generic_call_view_keeps_frozen_arguments() -> None:
    arguments = FrozenDict({"path": "src/ü.py", "n": [1, 2.5, None]})
    assert generic_call_view("read", "read", arguments).raw_input is arguments
    assert generic_call_view("read").raw_input is None


@settings(max_examples=300)
@given(texts, texts | st.none(), texts)
def test_file_diff(path: Any, old_text: Any, new_text: Any) -> None:
    same(
        lambda: file_diff(path, old_text, new_text),
        lambda: FileDiff(path=path, old_text=old_text, new_text=new_text),
    )


diffs = st.lists(
    st.sampled_from(
        [FileDiff("a.py", None, "x"), FileDiff("/b/ü.py", "o", "n"), FileLocation("a"), "d"]
    ),
    max_size=3,
).flatmap(lambda items: st.sampled_from([tuple(items), items]))


@settings(max_examples=300)
@given(texts, diffs | st.none() | odd)
def test_diff_call_view(title: Any, entries: Any) -> None:
    same(
        lambda: diff_call_view(title, entries),
        lambda: DiffCallView(title=title, diffs=entries),
    )


@settings(max_examples=400)
@given(block_seqs | odd, st.booleans() | st.sampled_from([0, 1, None, "yes"]), anything)
def test_tool_result(content: Any, is_error: Any, meta: Any) -> None:
    same(
        lambda: tool_result(content, is_error, meta),
        lambda: ToolResult(content=content, is_error=is_error, meta=meta),
    )
