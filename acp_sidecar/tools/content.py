"""Content blocks a tool returns (a closed union), and the object form of a tool's output.
:func:`content_to_json` and :func:`content_from_json` are exact inverses.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal, TypeAlias, assert_never

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


@attrs.frozen
class AudioContent:
    """Audio as base64 ``data`` with its MIME type."""

    data: str
    mime_type: str
    type: Literal["audio"] = "audio"


@attrs.frozen
class ResourceLinkContent:
    """A reference to a resource (by URI) that is not carried inline."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    """The resource's size in bytes, when known."""
    type: Literal["resource_link"] = "resource_link"


@attrs.frozen
class TextResource:
    """The text of an embedded resource."""

    uri: str
    text: str
    mime_type: str | None = None


@attrs.frozen
class BlobResource:
    """The bytes of an embedded resource, base64-encoded."""

    uri: str
    blob: str
    mime_type: str | None = None


EmbeddedResource: TypeAlias = TextResource | BlobResource
"""The contents of an embedded resource (untagged in JSON: ``text`` or ``blob`` key)."""


@attrs.frozen
class EmbeddedResourceContent:
    """A resource whose contents travel inline."""

    resource: EmbeddedResource
    type: Literal["resource"] = "resource"


ContentBlock: TypeAlias = (
    TextContent | ImageContent | AudioContent | ResourceLinkContent | EmbeddedResourceContent
)
"""The closed union of content blocks."""

CONTENT_BLOCK_TYPES: Final = (
    TextContent,
    ImageContent,
    AudioContent,
    ResourceLinkContent,
    EmbeddedResourceContent,
)
"""Every member of :data:`ContentBlock` (for ``isinstance`` checks of outside values)."""


@attrs.frozen
class ToolOutput:
    """The object form of ``execute``'s return: content plus presentation metadata.

    ``meta`` is tool-private and opaque to the pipeline, but must be lossless JSON; it is
    threaded onto the result so ``present_result`` (live and on replay) can use it.
    """

    content: str | Sequence[ContentBlock]
    meta: JsonValue = None


def _resource_to_json(resource: EmbeddedResource) -> dict[str, Any]:
    data: dict[str, Any]
    match resource:
        case TextResource(uri=uri, text=text):
            data = {"uri": uri, "text": text}
        case BlobResource(uri=uri, blob=blob):
            data = {"uri": uri, "blob": blob}
        case _:
            assert_never(resource)
    if resource.mime_type is not None:
        data["mimeType"] = resource.mime_type
    return data


def content_to_json(block: ContentBlock) -> dict[str, Any]:
    """The JSON object of one content block (``{"type": "text", "text": …}``)."""
    match block:
        case TextContent(text=text):
            return {"type": "text", "text": text}
        case ImageContent(data=data, mime_type=mime_type):
            return {"type": "image", "data": data, "mimeType": mime_type}
        case AudioContent(data=data, mime_type=mime_type):
            return {"type": "audio", "data": data, "mimeType": mime_type}
        case ResourceLinkContent():
            link: dict[str, Any] = {"type": "resource_link", "uri": block.uri, "name": block.name}
            for key, value in (
                ("title", block.title),
                ("description", block.description),
                ("mimeType", block.mime_type),
                ("size", block.size),
            ):
                if value is not None:
                    link[key] = value
            return link
        case EmbeddedResourceContent(resource=resource):
            return {"type": "resource", "resource": _resource_to_json(resource)}
        case _:
            assert_never(block)


def _is_str(value: object) -> bool:
    return type(value) is str


def _fields(
    data: dict[str, Any], required: Sequence[str], optional: Sequence[str] = ()
) -> dict[str, Any] | None:
    """``data``'s fields (minus ``type``) when they are exactly ``required`` plus some of
    ``optional``, all strings (``size`` excepted, checked by the caller); else ``None``."""
    rest = {key: value for key, value in data.items() if key != "type"}
    if not set(required) <= rest.keys() or not rest.keys() <= {*required, *optional}:
        return None
    if not all(_is_str(value) for key, value in rest.items() if key != "size"):
        return None
    return rest


def _resource_from_json(data: object) -> EmbeddedResource | None:
    if not isinstance(data, dict):
        return None
    text = _fields(data, ("uri", "text"), ("mimeType",)) if "type" not in data else None
    if text is not None:
        return TextResource(text["uri"], text["text"], text.get("mimeType"))
    blob = _fields(data, ("uri", "blob"), ("mimeType",)) if "type" not in data else None
    if blob is not None:
        return BlobResource(blob["uri"], blob["blob"], blob.get("mimeType"))
    return None


def content_from_json(data: object) -> ContentBlock:
    """The content block of a JSON object; raises ``ValueError`` for anything else."""
    if isinstance(data, dict):
        kind = data.get("type")
        if kind == "text" and isinstance(data.get("text"), str) and len(data) == 2:
            return TextContent(text=data["text"])
        if kind in ("image", "audio"):
            fields = _fields(data, ("data", "mimeType"))
            if fields is not None:
                cls = ImageContent if kind == "image" else AudioContent
                return cls(data=fields["data"], mime_type=fields["mimeType"])
        if kind == "resource_link":
            fields = _fields(data, ("uri", "name"), ("title", "description", "mimeType", "size"))
            # An absent size is left out, never written as null: a null is refused.
            size = None if fields is None else fields.get("size")
            if fields is not None and ("size" not in fields or type(size) is int):
                return ResourceLinkContent(
                    uri=fields["uri"],
                    name=fields["name"],
                    title=fields.get("title"),
                    description=fields.get("description"),
                    mime_type=fields.get("mimeType"),
                    size=size,
                )
        if kind == "resource" and len(data) == 2:
            resource = _resource_from_json(data.get("resource"))
            if resource is not None:
                return EmbeddedResourceContent(resource)
    raise ValueError(f"not a content block: {data!r}")


def content_problems(block: object) -> list[str]:
    """What is wrong with ``block`` as a content block (``[]``: nothing).

    Blocks are plain attrs values without validators; this is the check for one built by hand
    (or mutated after construction) before it leaves the pipeline.
    """
    optional = (str, type(None))
    match block:
        case TextContent(text=text):
            return [] if type(text) is str else ["text is not a string"]
        case (
            ImageContent(data=data, mime_type=mime_type)
            | AudioContent(data=data, mime_type=mime_type)
        ):
            if type(data) is str and type(mime_type) is str:
                return []
            return [f"{block.type} data and mimeType must be strings"]
        case ResourceLinkContent():
            problems = []
            if type(block.uri) is not str or type(block.name) is not str:
                problems.append("resource_link uri and name must be strings")
            if not all(
                type(value) in optional
                for value in (block.title, block.description, block.mime_type)
            ):
                problems.append("resource_link title, description and mimeType must be strings")
            if block.size is not None and type(block.size) is not int:
                problems.append("resource_link size must be an integer")
            return problems
        case EmbeddedResourceContent():
            resource: object = block.resource  # built by hand, it may be anything
            if isinstance(resource, TextResource):
                body: object = resource.text
            elif isinstance(resource, BlobResource):
                body = resource.blob
            else:
                return ["resource is neither a TextResource nor a BlobResource"]
            if (
                type(resource.uri) is str
                and type(body) is str
                and type(resource.mime_type) in optional
            ):
                return []
            return ["resource uri, text/blob and mimeType must be strings"]
        case _:
            return [f"{type(block).__name__} is not a content block"]


def text_of(content: Sequence[ContentBlock]) -> str:
    """The concatenated text of the text blocks (other kinds are skipped)."""
    return "".join(block.text for block in content if isinstance(block, TextContent))
