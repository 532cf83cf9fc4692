"""An MCP ``CallToolResult`` as a tool's content: the blocks the model and the card get.

Invariants:
- Every MCP content kind maps onto the block of the same kind: text → text, image → image,
  audio → audio, resource link → resource link, embedded resource (text or blob) → embedded
  resource. Display hints (``annotations``, ``_meta``) are not carried.
- ``structuredContent`` is shown as JSON text when the result has no text block (a server
  that answers only with structured data still says something to the model and the card).
- One result carries at most :data:`MAX_TEXT_BYTES` of text (UTF-8: text blocks, embedded
  text resources, the structured JSON) and :data:`MAX_BINARY_CHARS` of base64 data (images,
  audio, blobs). Text past the cap is cut at a character boundary; a binary block that does
  not fit is left out whole (a cut image is no image). Whenever anything is cut, a last text
  block says what, so neither the model nor the user mistakes a part for the whole.
- Pure: the same result always gives the same blocks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final, assert_never

import attrs
import mcp.types

from acp_sidecar.tools.content import (
    AudioContent,
    BlobResource,
    ContentBlock,
    EmbeddedResourceContent,
    ImageContent,
    ResourceLinkContent,
    TextContent,
    TextResource,
)

MAX_TEXT_BYTES: Final = 256 * 1024
"""Text one result may carry (UTF-8 bytes): the budget the built-in ``read`` gives a call."""
MAX_BINARY_CHARS: Final = 4 * 1024 * 1024
"""Base64 characters of images, audio and blobs one result may carry (about 3 MiB of data)."""


def convert_block(block: mcp.types.ContentBlock) -> ContentBlock:
    """One MCP content block as the tool content block of the same kind."""
    match block:
        case mcp.types.TextContent():
            return TextContent(block.text)
        case mcp.types.ImageContent():
            return ImageContent(block.data, block.mime_type)
        case mcp.types.AudioContent():
            return AudioContent(block.data, block.mime_type)
        case mcp.types.ResourceLink():
            return ResourceLinkContent(
                uri=str(block.uri),
                name=block.name,
                title=block.title,
                description=block.description,
                mime_type=block.mime_type,
                size=block.size,
            )
        case mcp.types.EmbeddedResource(resource=resource):
            match resource:
                case mcp.types.TextResourceContents():
                    return EmbeddedResourceContent(
                        TextResource(str(resource.uri), resource.text, resource.mime_type)
                    )
                case mcp.types.BlobResourceContents():
                    return EmbeddedResourceContent(
                        BlobResource(str(resource.uri), resource.blob, resource.mime_type)
                    )
                case _:
                    assert_never(resource)
        case _:
            assert_never(block)


def structured_text(value: object) -> str | None:
    """``structuredContent`` as JSON text (``None`` when it is absent or not JSON)."""
    if value is None:
        return None
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=2)
    except (TypeError, ValueError, RecursionError):
        return None


@attrs.define
class _Budget:
    """What is left of one result's caps, and what was cut."""

    text: int = MAX_TEXT_BYTES
    binary: int = MAX_BINARY_CHARS
    cut_text: int = 0
    """Bytes of text left out."""
    cut_blocks: list[str] = attrs.field(factory=list)
    """What each whole block left out was (``image/png image``)."""

    def take_text(self, text: str) -> str:
        """The part of ``text`` that fits (all of it, or a prefix)."""
        data = text.encode("utf-8", "surrogatepass")
        if len(data) <= self.text:
            self.text -= len(data)
            return text
        kept = data[: self.text].decode("utf-8", "ignore")
        self.cut_text += len(data) - len(kept.encode("utf-8", "surrogatepass"))
        self.text = 0
        return kept

    def take_link(self, size: int, what: str) -> bool:
        """Whether a resource link of ``size`` bytes of text fits (it is then counted)."""
        if size <= self.text:
            self.text -= size
            return True
        self.cut_blocks.append(what)
        return False

    def take_binary(self, size: int, what: str) -> bool:
        """Whether a binary block of ``size`` base64 characters fits (it is then counted)."""
        if size <= self.binary:
            self.binary -= size
            return True
        self.cut_blocks.append(what)
        return False

    def note(self) -> str | None:
        """The last block's text when anything was cut."""
        parts = []
        if self.cut_text:
            parts.append(f"{self.cut_text:,} bytes of text")
        if self.cut_blocks:
            parts.append(", ".join(self.cut_blocks))
        if not parts:
            return None
        return (
            f"[The result was cut: {' and '.join(parts)} not shown. One result carries at most "
            f"{MAX_TEXT_BYTES // 1024} KiB of text and {MAX_BINARY_CHARS // (1024 * 1024)} MiB "
            "of images, audio and binary data.]"
        )


def _capped(block: ContentBlock, budget: _Budget) -> ContentBlock | None:
    """``block`` within the budget: whole, cut (text), or ``None`` (left out)."""
    match block:
        case TextContent(text=text):
            kept = budget.take_text(text)
            return None if text and not kept else TextContent(kept)
        case ImageContent(data=data, mime_type=mime) | AudioContent(data=data, mime_type=mime):
            return block if budget.take_binary(len(data), f"{mime} {block.type}") else None
        case ResourceLinkContent():
            size = sum(
                len(part.encode("utf-8", "surrogatepass"))
                for part in (block.uri, block.name, block.title or "", block.description or "")
            )
            return block if budget.take_link(size, f"link {block.uri}") else None
        case EmbeddedResourceContent(resource=resource):
            match resource:
                case TextResource(text=text):
                    kept = budget.take_text(text)
                    if text and not kept:
                        return None
                    return EmbeddedResourceContent(attrs.evolve(resource, text=kept))
                case BlobResource(blob=blob):
                    what = f"{resource.mime_type or 'binary'} resource {resource.uri}"
                    return block if budget.take_binary(len(blob), what) else None
                case _:
                    assert_never(resource)
        case _:
            assert_never(block)


def result_content(result: mcp.types.CallToolResult) -> tuple[ContentBlock, ...]:
    """What a result shows the model and the card, within the caps (see the module)."""
    blocks: list[ContentBlock] = [convert_block(block) for block in result.content]
    if not any(isinstance(block, TextContent) for block in blocks):
        structured = structured_text(result.structured_content)
        if structured is not None:
            blocks.append(TextContent(structured))
    return cap_content(blocks)


def cap_content(blocks: Sequence[ContentBlock]) -> tuple[ContentBlock, ...]:
    """``blocks`` within one result's caps, with a note of what was cut."""
    budget = _Budget()
    kept = [capped for block in blocks if (capped := _capped(block, budget)) is not None]
    note = budget.note()
    if note is not None:
        kept.append(TextContent(note))
    return tuple(kept)


def error_text(content: Sequence[ContentBlock]) -> str:
    """The message of a result the server marked ``isError``: its text, each other block
    named in brackets (an error result is text only)."""
    parts: list[str] = []
    for block in content:
        match block:
            case TextContent(text=text):
                parts.append(text)
            case ImageContent(mime_type=mime) | AudioContent(mime_type=mime):
                parts.append(f"[{mime} {block.type}]")
            case ResourceLinkContent(uri=uri):
                parts.append(f"[{uri}]")
            case EmbeddedResourceContent(resource=TextResource(text=text)):
                parts.append(text)
            case EmbeddedResourceContent(resource=BlobResource(uri=uri)):
                parts.append(f"[{uri}]")
            case EmbeddedResourceContent():
                parts.append("[resource]")
            case _:
                assert_never(block)
    return "\n".join(part for part in parts if part)
