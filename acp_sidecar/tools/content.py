"""Content blocks a tool returns, and the object form of a tool's output.

Invariant: content blocks are frozen values with a ``type`` tag; :func:`content_to_json` and
:func:`content_from_json` are exact inverses on every block the model may see.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.tools.json_values import JsonValue


@attrs.frozen
class TextContent:
    """Text for the model (and, by default, for the result card)."""

    text: str
    type: Literal["text"] = "text"


@attrs.frozen
class ImageContent:
    """An image as base64 ``data`` with its MIME type."""

    data: str
    mime_type: str
    type: Literal["image"] = "image"


ContentBlock: TypeAlias = TextContent | ImageContent
"""The closed union of content blocks."""


@attrs.frozen
class ToolOutput:
    """The object form of ``execute``'s return: content plus presentation metadata.

    ``meta`` is tool-private and opaque to the pipeline, but must be lossless JSON; it is
    threaded onto the result so ``present_result`` (live and on replay) can use it.
    """

    content: str | Sequence[ContentBlock]
    meta: JsonValue = None


def content_to_json(block: ContentBlock) -> dict[str, Any]:
    """The JSON object of one content block (``{"type": "text", "text": …}``)."""
    match block:
        case TextContent(text=text):
            return {"type": "text", "text": text}
        case ImageContent(data=data, mime_type=mime_type):
            return {"type": "image", "data": data, "mimeType": mime_type}


def content_from_json(data: object) -> ContentBlock:
    """The content block of a JSON object; raises ``ValueError`` for anything else."""
    if isinstance(data, dict):
        kind = data.get("type")
        if kind == "text" and isinstance(data.get("text"), str) and len(data) == 2:
            return TextContent(text=data["text"])
        if (
            kind == "image"
            and isinstance(data.get("data"), str)
            and isinstance(data.get("mimeType"), str)
            and len(data) == 3
        ):
            return ImageContent(data=data["data"], mime_type=data["mimeType"])
    raise ValueError(f"not a content block: {data!r}")


def text_of(content: Sequence[ContentBlock]) -> str:
    """The concatenated text of the text blocks (images are skipped)."""
    return "".join(block.text for block in content if isinstance(block, TextContent))
