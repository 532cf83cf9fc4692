"""ACP content blocks (a closed union tagged by ``type``, declared first so it leads the object)."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType

Role: TypeAlias = Literal["assistant", "user"]
"""Who a piece of content is meant for."""


@attrs.frozen(repr=False, eq=False)
class Annotations(WireType):
    """Optional hints about how a client should use or display content."""

    audience: list[Role] | None = None
    """Who the content is intended for."""
    last_modified: str | None = None
    """ISO 8601 timestamp of the content's last change."""
    priority: float | None = None
    """Importance from 0 (least) to 1 (most)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class TextContentBlock(WireType):
    """Plain text (Markdown by convention)."""

    type: Literal["text"] = attrs.field(default="text", kw_only=True)
    """The tag, always ``"text"``."""
    text: str
    """The text."""
    annotations: Annotations | None = None
    """Display hints."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ImageContentBlock(WireType):
    """An image, base64-encoded (needs the ``image`` prompt capability in prompts)."""

    type: Literal["image"] = attrs.field(default="image", kw_only=True)
    """The tag, always ``"image"``."""
    data: str
    """The base64-encoded image bytes."""
    mime_type: str
    """The image's MIME type (``image/png``)."""
    uri: str | None = None
    """Where the image came from, if known."""
    annotations: Annotations | None = None
    """Display hints."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AudioContentBlock(WireType):
    """Audio, base64-encoded (needs the ``audio`` prompt capability in prompts)."""

    type: Literal["audio"] = attrs.field(default="audio", kw_only=True)
    """The tag, always ``"audio"``."""
    data: str
    """The base64-encoded audio bytes."""
    mime_type: str
    """The audio's MIME type (``audio/wav``)."""
    annotations: Annotations | None = None
    """Display hints."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ResourceLinkContentBlock(WireType):
    """A reference to a resource the agent may fetch itself."""

    type: Literal["resource_link"] = attrs.field(default="resource_link", kw_only=True)
    """The tag, always ``"resource_link"``."""
    name: str
    """The resource's name."""
    uri: str
    """The resource's URI."""
    title: str | None = None
    """A human-readable title."""
    description: str | None = None
    """What the resource is."""
    mime_type: str | None = None
    """The resource's MIME type."""
    size: int | None = None
    """The resource's size in bytes."""
    annotations: Annotations | None = None
    """Display hints."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class TextResourceContents(WireType):
    """The text of an embedded resource."""

    text: str
    """The resource's text."""
    uri: str
    """The resource's URI."""
    mime_type: str | None = None
    """The resource's MIME type."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class BlobResourceContents(WireType):
    """The binary contents of an embedded resource, base64-encoded."""

    blob: str
    """The base64-encoded bytes."""
    uri: str
    """The resource's URI."""
    mime_type: str | None = None
    """The resource's MIME type."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


EmbeddedResourceResource: TypeAlias = TextResourceContents | BlobResourceContents
"""The contents of an embedded resource; untagged on the wire (``text`` vs ``blob`` key)."""


@attrs.frozen(repr=False, eq=False)
class EmbeddedResourceContentBlock(WireType):
    """A resource whose contents travel inline (needs ``embeddedContext`` in prompts)."""

    type: Literal["resource"] = attrs.field(default="resource", kw_only=True)
    """The tag, always ``"resource"``."""
    resource: EmbeddedResourceResource
    """The resource's contents."""
    annotations: Annotations | None = None
    """Display hints."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


ContentBlock: TypeAlias = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceLinkContentBlock
    | EmbeddedResourceContentBlock
)
"""The closed union of content blocks, tagged by ``type``."""
