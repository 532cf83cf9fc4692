"""The caps on an MCP result: every string counts, the note is bounded, the number
of blocks is capped, and a cut keeps lone surrogates."""

from __future__ import annotations

import json

import mcp.types as m

from acp_sidecar.mcp.results import (
    MAX_BINARY_CHARS,
    MAX_BLOCKS,
    MAX_TEXT_BYTES,
    cap_content,
    result_content,
)
from acp_sidecar.tools.content import (
    ContentBlock,
    ImageContent,
    TextContent,
    content_to_json,
)

BOUND = MAX_TEXT_BYTES + MAX_BINARY_CHARS + 64 * 1024
"""What one capped result may weigh as JSON, at most: the two budgets and the framing."""


def weight(blocks: tuple[ContentBlock, ...]) -> int:
    return len(json.dumps([content_to_json(b) for b in blocks]))


def note(blocks: tuple[ContentBlock, ...]) -> str:
    last = blocks[-1]
    assert isinstance(last, TextContent) and last.text.startswith("[The result was cut")
    return last.text


def test_a_link_left_out_is_not_repeated_whole_in_the_note() -> None:
    big = "https://x/" + "a" * 5_000_000
    out = result_content(
        m.CallToolResult(
            content=[m.TextContent(text="x" * MAX_TEXT_BYTES), m.ResourceLink(name="n", uri=big)]
        )
    )
    assert weight(out) < BOUND
    assert "1 resource link" in note(out) and len(note(out)) < 1000


def test_metadata_counts_against_the_budget() -> None:
    out = result_content(
        m.CallToolResult(
            content=[
                m.ImageContent(data="", mime_type="i" * 5_000_000),
                m.EmbeddedResource(
                    type="resource", resource=m.TextResourceContents(uri="u" * 5_000_000, text="t")
                ),
                m.ResourceLink(name="n" * 5_000_000, uri="u:1"),
                m.ResourceLink(name="n", uri="u:2", title="t" * 5_000_000),
                m.ResourceLink(name="n", uri="u:3", description="d" * 5_000_000),
                m.ResourceLink(name="n", uri="u:4", mime_type="m" * 5_000_000),
            ]
        )
    )
    assert weight(out) < BOUND
    text = note(out)
    assert "1 image" in text and "1 embedded resource" in text and "4 resource links" in text


def test_the_note_stays_short_however_many_blocks_are_left_out() -> None:
    blocks = [ImageContent("A" * MAX_BINARY_CHARS, "image/png")] + [
        ImageContent("AAAA", "image/png")
    ] * 200_000
    out = cap_content(blocks)
    assert len(out) <= MAX_BLOCKS + 1
    assert len(note(out)) < 1000
    assert "199,999 images" in note(out) or "200,000 images" in note(out)


def test_the_number_of_blocks_is_capped() -> None:
    out = cap_content([TextContent("x")] * (MAX_BLOCKS + 5))
    assert out[:MAX_BLOCKS] == (TextContent("x"),) * MAX_BLOCKS
    assert "5 text blocks" in note(out) and len(out) == MAX_BLOCKS + 1


def test_a_cut_keeps_lone_surrogates_and_counts_what_it_left_out() -> None:
    text = "a\ud800b" + "c" * MAX_TEXT_BYTES
    kept, last = cap_content([TextContent(text)])
    assert isinstance(kept, TextContent)
    assert kept.text.startswith("a\ud800b")
    size = len(text.encode("utf-8", "surrogatepass"))
    shown = len(kept.text.encode("utf-8", "surrogatepass"))
    assert shown == MAX_TEXT_BYTES
    assert f"{size - shown:,} bytes of text" in note((last,))


def test_a_cut_never_splits_a_character() -> None:
    text = "ab" + "\ud800" * MAX_TEXT_BYTES  # three bytes each once encoded
    kept, _ = cap_content([TextContent(text)])
    assert isinstance(kept, TextContent)
    assert kept.text == "ab" + "\ud800" * ((MAX_TEXT_BYTES - 2) // 3)
