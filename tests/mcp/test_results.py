"""An MCP CallToolResult as the tool's content: every kind, structured content, the caps."""

from __future__ import annotations

import mcp.types as m
import pytest

from acp_sidecar.mcp.results import (
    MAX_BINARY_CHARS,
    MAX_TEXT_BYTES,
    cap_content,
    convert_block,
    error_text,
    result_content,
)
from acp_sidecar.tools.content import (
    AudioContent,
    BlobResource,
    EmbeddedResourceContent,
    ImageContent,
    ResourceLinkContent,
    TextContent,
    TextResource,
)


def test_every_mcp_kind_maps_to_the_block_of_the_same_kind() -> None:
    result = m.CallToolResult(
        content=[
            m.TextContent(text="hello", annotations=m.Annotations(priority=0.5)),
            m.ImageContent(data="iVBORw0KGgo=", mime_type="image/png"),
            m.AudioContent(data="UklGRg==", mime_type="audio/wav"),
            m.ResourceLink(
                name="a.py",
                uri="file:///w/a.py",
                title="A",
                description="the a module",
                mime_type="text/x-python",
                size=12,
            ),
            m.ResourceLink(name="bare", uri="https://example.com/x"),
            m.EmbeddedResource(
                resource=m.TextResourceContents(
                    uri="file:///w/b.txt", text="b\n", mime_type="text/plain"
                )
            ),
            m.EmbeddedResource(resource=m.BlobResourceContents(uri="mem://blob", blob="AAEC")),
        ]
    )
    assert result_content(result) == (
        TextContent("hello"),
        ImageContent("iVBORw0KGgo=", "image/png"),
        AudioContent("UklGRg==", "audio/wav"),
        ResourceLinkContent(
            uri="file:///w/a.py",
            name="a.py",
            title="A",
            description="the a module",
            mime_type="text/x-python",
            size=12,
        ),
        ResourceLinkContent(uri="https://example.com/x", name="bare"),
        EmbeddedResourceContent(TextResource("file:///w/b.txt", "b\n", "text/plain")),
        EmbeddedResourceContent(BlobResource("mem://blob", "AAEC")),
    )


def test_structured_content_is_shown_as_json_when_there_is_no_text() -> None:
    result = m.CallToolResult(content=[], structured_content={"temperature": 21.5, "unit": "°C"})
    (block,) = result_content(result)
    assert block == TextContent('{\n  "temperature": 21.5,\n  "unit": "°C"\n}')


def test_structured_content_beside_an_image_still_says_something() -> None:
    result = m.CallToolResult(
        content=[m.ImageContent(data="AA==", mime_type="image/png")], structured_content={"n": 1}
    )
    assert result_content(result) == (
        ImageContent("AA==", "image/png"),
        TextContent('{\n  "n": 1\n}'),
    )


def test_structured_content_is_not_repeated_beside_text() -> None:
    result = m.CallToolResult(content=[m.TextContent(text='{"n": 1}')], structured_content={"n": 1})
    assert result_content(result) == (TextContent('{"n": 1}'),)


def test_an_empty_result_is_empty() -> None:
    assert result_content(m.CallToolResult(content=[])) == ()


def test_text_past_the_cap_is_cut_with_a_note() -> None:
    big = "é" * MAX_TEXT_BYTES  # two bytes each: twice the cap
    blocks = cap_content([TextContent("head "), TextContent(big), TextContent("tail")])
    first, cut, note = blocks
    assert first == TextContent("head ")
    assert isinstance(cut, TextContent)
    assert len(("head " + cut.text).encode()) <= MAX_TEXT_BYTES
    assert cut.text and set(cut.text) == {"é"}  # cut at a character boundary
    shown = len(("head " + cut.text).encode())
    left_out = len(big.encode()) + len(b"tail") - (shown - len(b"head "))
    assert note == TextContent(
        f"[The result was cut: {left_out:,} bytes of text not shown. One result carries at "
        "most 256 KiB of text and 4 MiB of images, audio and binary data.]"
    )


def test_binary_blocks_that_do_not_fit_are_left_out_whole() -> None:
    half = "A" * (MAX_BINARY_CHARS // 2)
    blocks = cap_content(
        [
            ImageContent(half, "image/png"),
            AudioContent(half + "AAAA", "audio/wav"),  # does not fit after the image
            EmbeddedResourceContent(BlobResource("mem://x", "AAAA", "application/zip")),
            ImageContent(half, "image/jpeg"),  # does not fit either
        ]
    )
    assert blocks[:2] == (
        ImageContent(half, "image/png"),
        EmbeddedResourceContent(BlobResource("mem://x", "AAAA", "application/zip")),
    )
    (note,) = blocks[2:]
    assert isinstance(note, TextContent)
    assert "audio/wav audio, image/jpeg image not shown" in note.text


def test_nothing_cut_means_no_note() -> None:
    blocks = [TextContent("a"), ImageContent("AA==", "image/png")]
    assert cap_content(blocks) == tuple(blocks)


def test_an_empty_text_block_is_kept() -> None:
    assert cap_content([TextContent("")]) == (TextContent(""),)


def test_an_embedded_text_resource_counts_as_text_and_is_cut() -> None:
    big = "x" * (MAX_TEXT_BYTES + 10)
    (resource, note) = cap_content([EmbeddedResourceContent(TextResource("file:///big", big))])
    assert resource == EmbeddedResourceContent(TextResource("file:///big", "x" * MAX_TEXT_BYTES))
    assert isinstance(note, TextContent) and "10 bytes of text" in note.text


@pytest.mark.parametrize(
    ("blocks", "text"),
    [
        ([TextContent("no such city")], "no such city"),
        (
            [
                TextContent("failed"),
                ImageContent("AA", "image/png"),
                ResourceLinkContent("u:1", "n"),
            ],
            "failed\n[image/png image]\n[u:1]",
        ),
        ([EmbeddedResourceContent(TextResource("u:2", "trace"))], "trace"),
        ([EmbeddedResourceContent(BlobResource("u:3", "AA"))], "[u:3]"),
        ([], ""),
    ],
)
def test_error_text_is_the_text_with_other_blocks_named(blocks: list, text: str) -> None:  # type: ignore[type-arg]
    assert error_text(blocks) == text


def test_convert_block_keeps_uris_as_text() -> None:
    link = m.ResourceLink(name="n", uri="https://example.com/a%20b")
    assert convert_block(link) == ResourceLinkContent(uri="https://example.com/a%20b", name="n")
