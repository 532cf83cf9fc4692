"""The content union: every kind round-trips through JSON exactly, and nothing else parses."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.tools.content import (
    AudioContent,
    BlobResource,
    ContentBlock,
    EmbeddedResourceContent,
    ImageContent,
    ResourceLinkContent,
    TextContent,
    TextResource,
    ToolOutput,
    content_from_json,
    content_problems,
    content_to_json,
)
from acp_sidecar.tools.errors import ToolResultError
from acp_sidecar.tools.presentation import GenericResultView, ToolResult
from acp_sidecar.tools.result import (
    ToolExecutionResult,
    normalize_output,
    rebuild_result,
    result_from_json,
    result_to_json,
)

TEXT = st.text(max_size=8)
OPTIONAL = st.none() | TEXT
BLOCKS: st.SearchStrategy[ContentBlock] = st.one_of(
    st.builds(TextContent, TEXT),
    st.builds(ImageContent, TEXT, TEXT),
    st.builds(AudioContent, TEXT, TEXT),
    st.builds(
        ResourceLinkContent,
        uri=TEXT,
        name=TEXT,
        title=OPTIONAL,
        description=OPTIONAL,
        mime_type=OPTIONAL,
        size=st.none() | st.integers(0, 2**53),
    ),
    st.builds(
        EmbeddedResourceContent,
        st.builds(TextResource, TEXT, TEXT, OPTIONAL)
        | st.builds(BlobResource, TEXT, TEXT, OPTIONAL),
    ),
)

EXAMPLES: list[tuple[ContentBlock, dict[str, Any]]] = [
    (TextContent("hi"), {"type": "text", "text": "hi"}),
    (ImageContent("AA==", "image/png"), {"type": "image", "data": "AA==", "mimeType": "image/png"}),
    (AudioContent("UklG", "audio/wav"), {"type": "audio", "data": "UklG", "mimeType": "audio/wav"}),
    (
        ResourceLinkContent("file:///a", "a"),
        {"type": "resource_link", "uri": "file:///a", "name": "a"},
    ),
    (
        ResourceLinkContent("file:///a", "a", "A", "the a", "text/plain", 3),
        {
            "type": "resource_link",
            "uri": "file:///a",
            "name": "a",
            "title": "A",
            "description": "the a",
            "mimeType": "text/plain",
            "size": 3,
        },
    ),
    (
        EmbeddedResourceContent(TextResource("file:///b", "b\n", "text/plain")),
        {
            "type": "resource",
            "resource": {"uri": "file:///b", "text": "b\n", "mimeType": "text/plain"},
        },
    ),
    (
        EmbeddedResourceContent(BlobResource("mem://c", "AAEC")),
        {"type": "resource", "resource": {"uri": "mem://c", "blob": "AAEC"}},
    ),
]


@pytest.mark.parametrize(("block", "data"), EXAMPLES)
def test_each_kind_has_its_json_shape(block: ContentBlock, data: dict[str, Any]) -> None:
    assert content_to_json(block) == data
    assert content_from_json(data) == block
    assert content_problems(block) == []


@given(BLOCKS)
def test_to_and_from_json_are_exact_inverses(block: ContentBlock) -> None:
    assert content_from_json(content_to_json(block)) == block


@pytest.mark.parametrize(
    "data",
    [
        {"type": "audio", "data": "AA"},
        {"type": "audio", "data": "AA", "mimeType": "audio/wav", "extra": 1},
        {"type": "audio", "data": 1, "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "u"},
        {"type": "resource_link", "uri": "u", "name": "n", "title": None},
        {"type": "resource_link", "uri": "u", "name": "n", "size": True},
        {"type": "resource_link", "uri": "u", "name": "n", "size": None},
        {"type": "resource_link", "uri": "u", "name": "n", "size": 1.5},
        {"type": "resource_link", "uri": "u", "name": "n", "size": "1"},
        {"type": "resource_link", "uri": "u", "name": "n", "icons": []},
        {"type": "resource", "resource": {"uri": "u"}},
        {"type": "resource", "resource": {"uri": "u", "text": "t", "blob": "AA"}},
        {"type": "resource", "resource": {"uri": "u", "text": "t", "type": "text"}},
        {"type": "resource", "resource": {"uri": "u", "text": "t", "mimeType": None}},
        {"type": "resource", "resource": ["u", "t"]},
        {"type": "resource", "resource": {"uri": "u", "text": "t"}, "annotations": {}},
        {"type": "image", "data": "AA", "mimeType": "image/png", "uri": "x"},
        {"type": "video", "data": "AA"},
    ],
)
def test_anything_else_is_refused(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="not a content block"):
        content_from_json(data)


def test_a_result_with_every_kind_round_trips() -> None:
    result = ToolExecutionResult(
        call_id="c", content=[block for block, _ in EXAMPLES], is_error=False
    )
    assert result_from_json(result_to_json(result)) == result


def test_execute_may_return_every_kind() -> None:
    blocks = [block for block, _ in EXAMPLES]
    assert normalize_output("c", "t", blocks).content == tuple(blocks)
    assert normalize_output("c", "t", ToolOutput(blocks)).content == tuple(blocks)
    with pytest.raises(ToolResultError):
        normalize_output("c", "t", [TextResource("u", "t")])


def test_views_and_results_accept_every_kind() -> None:
    blocks = [block for block, _ in EXAMPLES]
    assert ToolResult(blocks, False).content == tuple(blocks)
    assert GenericResultView(content=blocks).content == tuple(blocks)


def test_a_block_mutated_after_construction_is_named_by_rebuild() -> None:
    link = ResourceLinkContent("u", "n")
    object.__setattr__(link, "size", "big")
    blob = EmbeddedResourceContent(BlobResource("u", "AA"))
    object.__setattr__(blob.resource, "blob", b"AA")
    odd = EmbeddedResourceContent(TextResource("u", "t"))
    object.__setattr__(odd, "resource", "u")
    audio = attrs.evolve(AudioContent("AA", "audio/wav"))
    object.__setattr__(audio, "mime_type", None)
    result = ToolExecutionResult(
        call_id="c", content=[link, blob, odd, audio, TextContent("ok")], is_error=False
    )
    rebuilt = rebuild_result("c", result)
    assert rebuilt.is_error
    text = rebuilt.content[0].text  # type: ignore[union-attr]
    assert "content/0: resource_link size must be an integer" in text
    assert "content/1: resource uri, text/blob and mimeType must be strings" in text
    assert "content/2: resource is neither a TextResource nor a BlobResource" in text
    assert "content/3: audio data and mimeType must be strings" in text
    assert "content/4" not in text


ODD_TEXT_BLOCKS = [
    {"type": "text", "text": "t"},
    {"text": "t", "type": "text"},
    {"type": "text", "text": 1},
    {"type": "text"},
    {"text": "t", "kind": "text"},
    {"type": "text", "text": "t", "annotations": {}},
    {"type": "image", "text": "t"},
]


@pytest.mark.parametrize("data", ODD_TEXT_BLOCKS)
def test_a_result_reads_each_block_as_content_from_json_does(data: dict[str, Any]) -> None:
    """result_from_json reads a text block itself: the same block, or the same refusal."""
    stored = {"callId": "c", "content": [data], "isError": False}
    try:
        expected = content_from_json(data)
    except ValueError as exc:
        with pytest.raises(ValueError, match="not a content block") as caught:
            result_from_json(stored)
        assert str(exc) in str(caught.value)
    else:
        assert result_from_json(stored).content == (expected,)


@given(st.lists(BLOCKS, max_size=4))
def test_a_result_reads_every_kind_as_content_from_json_does(blocks: list[ContentBlock]) -> None:
    stored = {"callId": "c", "content": [content_to_json(b) for b in blocks], "isError": True}
    assert result_from_json(stored).content == tuple(blocks)
