"""An MCP ``CallToolResult`` as a tool's content: the blocks the model and the card get.

Pure and bounded (blocks, text bytes, base64 characters); whenever anything is cut, a last
text block says what, so no one mistakes a part for the whole.
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
MAX_BLOCKS: Final = 100
"""Blocks one result may carry (the note of what was cut comes on top)."""
NOTE_URIS: Final = 3
"""URIs of left-out links and resources the note names, at most."""
NOTE_URI_CHARS: Final = 80
"""The longest URI the note shows, in characters."""
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


def cut_text(text: str, limit: int) -> tuple[str, int]:
    """The longest prefix of ``text`` whose UTF-8 form fits in ``limit`` bytes, cut at a
    character boundary, and how many bytes were left out. Lone surrogates count and are kept
    (``surrogatepass``: three bytes each), so the kept part is exactly the text's start."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text, 0
    end = max(limit, 0)
    while end > 0 and data[end] & 0xC0 == 0x80:  # a continuation byte: inside a character
        end -= 1
    return data[:end].decode("utf-8", "surrogatepass"), len(data) - end


def _utf8_size(*parts: str | None) -> int:
    return sum(len(part.encode("utf-8", "surrogatepass")) for part in parts if part)


def short_uri(uri: str) -> str:
    """A URI as the note names it: one printable line of at most :data:`NOTE_URI_CHARS`."""
    line = "".join(c if c.isprintable() else "?" for c in " ".join(uri.split()))
    return line if len(line) <= NOTE_URI_CHARS else line[: NOTE_URI_CHARS - 1] + "…"


_KIND_NAMES: Final[dict[str, tuple[str, str]]] = {
    "text": ("text block", "text blocks"),
    "image": ("image", "images"),
    "audio": ("audio clip", "audio clips"),
    "resource_link": ("resource link", "resource links"),
    "resource": ("embedded resource", "embedded resources"),
}
"""How the note names the blocks of each kind left out (singular, plural), in its order."""


@attrs.define
class _Budget:
    """What is left of one result's caps, and what was cut (counts only: the note of a
    result is bounded however much was cut)."""

    text: int = MAX_TEXT_BYTES
    binary: int = MAX_BINARY_CHARS
    cut_bytes: int = 0
    """Bytes of text cut from blocks that were kept in part or dropped as empty."""
    left_out: dict[str, int] = attrs.field(factory=dict)
    """Whole blocks left out, by kind."""
    uris: list[str] = attrs.field(factory=list)
    """The first :data:`NOTE_URIS` URIs of the links and resources left out, shortened."""
    more_uris: bool = False

    def fits(self, text: int, binary: int = 0) -> bool:
        """Whether a block of ``text`` bytes of strings and ``binary`` base64 characters fits
        whole (it is then counted)."""
        if text > self.text or binary > self.binary:
            return False
        self.text -= text
        self.binary -= binary
        return True

    def leave_out(self, block: ContentBlock, uri: str | None = None) -> None:
        """Count ``block`` as left out whole (and name its URI while there is room)."""
        self.left_out[block.type] = self.left_out.get(block.type, 0) + 1
        if uri is not None:
            if len(self.uris) < NOTE_URIS:
                self.uris.append(short_uri(uri))
            else:
                self.more_uris = True

    def take_text(self, text: str) -> str:
        """The part of ``text`` that fits (all of it, or a prefix; see :func:`cut_text`)."""
        kept, cut = cut_text(text, self.text)
        self.text = 0 if cut else self.text - _utf8_size(kept)  # after a cut, no more text
        self.cut_bytes += cut
        return kept

    def note(self) -> str | None:
        """The last block's text when anything was cut."""
        parts = []
        if self.cut_bytes:
            parts.append(f"{self.cut_bytes:,} bytes of text")
        for kind, (one, many) in _KIND_NAMES.items():
            count = self.left_out.get(kind, 0)
            if count:
                parts.append(f"{count:,} {one if count == 1 else many}")
        if not parts:
            return None
        named = ""
        if self.uris:
            named = f" ({', '.join(self.uris)}{', …' if self.more_uris else ''})"
        return (
            f"[The result was cut: {', '.join(parts)}{named} not shown. One result carries at "
            f"most {MAX_TEXT_BYTES // 1024} KiB of text, "
            f"{MAX_BINARY_CHARS // (1024 * 1024)} MiB of images, audio and binary data, and "
            f"{MAX_BLOCKS} blocks.]"
        )


def _capped(block: ContentBlock, budget: _Budget) -> ContentBlock | None:
    """``block`` within the budget: whole, cut (text), or ``None`` (left out). Every string
    of a block counts as text; a block whose own fields do not fit is left out whole."""
    match block:
        case TextContent(text=text):
            kept = budget.take_text(text)
            return None if text and not kept else TextContent(kept)
        case ImageContent(data=data, mime_type=mime) | AudioContent(data=data, mime_type=mime):
            if budget.fits(_utf8_size(mime), len(data)):
                return block
            budget.leave_out(block)
            return None
        case ResourceLinkContent():
            size = _utf8_size(
                block.uri, block.name, block.title, block.description, block.mime_type
            )
            if budget.fits(size):
                return block
            budget.leave_out(block, block.uri)
            return None
        case EmbeddedResourceContent(resource=resource):
            match resource:
                case TextResource(text=text):
                    room = budget.text - _utf8_size(resource.uri, resource.mime_type)
                    kept, cut = cut_text(text, room)
                    if room < 0 or (text and not kept):
                        budget.leave_out(block, resource.uri)
                        return None
                    budget.text -= _utf8_size(resource.uri, resource.mime_type, kept)
                    if cut:
                        budget.text = 0  # after a cut, no more text
                    budget.cut_bytes += cut
                    return EmbeddedResourceContent(attrs.evolve(resource, text=kept))
                case BlobResource(blob=blob):
                    if budget.fits(_utf8_size(resource.uri, resource.mime_type), len(blob)):
                        return block
                    budget.leave_out(block, resource.uri)
                    return None
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
    kept: list[ContentBlock] = []
    for block in blocks:
        if len(kept) >= MAX_BLOCKS:
            budget.leave_out(block, _uri(block))
            continue
        capped = _capped(block, budget)
        if capped is not None:
            kept.append(capped)
    note = budget.note()
    if note is not None:
        kept.append(TextContent(note))
    return tuple(kept)


def _uri(block: ContentBlock) -> str | None:
    """The URI a block names, if any."""
    match block:
        case ResourceLinkContent(uri=uri) | EmbeddedResourceContent(resource=TextResource(uri=uri)):
            return uri
        case EmbeddedResourceContent(resource=BlobResource(uri=uri)):
            return uri
        case _:
            return None


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
