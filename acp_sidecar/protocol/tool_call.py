"""ACP tool calls: the card content, locations, ``tool_call`` and ``tool_call_update``.

On an update, a ``None`` collection means "unchanged" (omitted); an empty list clears it.
``ToolCallDiff.old_text`` is always sent (``null`` marks a new file).
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.content import ContentBlock

ToolKind: TypeAlias = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
"""What a tool does; clients pick an icon by it."""

ToolCallStatus: TypeAlias = Literal["pending", "in_progress", "completed", "failed"]
"""Where a tool call is in its life cycle."""


@attrs.frozen(repr=False, eq=False)
class ToolCallContentBlock(WireType):
    """Ordinary content (text, image, …) shown on the card."""

    type: Literal["content"] = attrs.field(default="content", kw_only=True)
    """The tag, always ``"content"``."""
    content: ContentBlock
    """The content block."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ToolCallDiff(WireType):
    """A file change, rendered as an inline diff."""

    type: Literal["diff"] = attrs.field(default="diff", kw_only=True)
    """The tag, always ``"diff"``."""
    path: str
    """The absolute path of the file."""
    new_text: str
    """The file's content after the change."""
    old_text: str | None = None
    """The file's content before the change; ``None`` for a new file (sent as ``null``)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ToolCallTerminal(WireType):
    """A terminal card, identified by its terminal id."""

    type: Literal["terminal"] = attrs.field(default="terminal", kw_only=True)
    """The tag, always ``"terminal"``."""
    terminal_id: str
    """The terminal's id."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ToolCallSession(WireType):
    """A link from the card to a session (a child the call delegated its work to): the
    stable ``protocol/v1/subagents`` page's ``session`` content, which the unstable schema
    does not define yet; sent only to clients that advertised ``subagents``."""

    type: Literal["session"] = attrs.field(default="session", kw_only=True)
    """The tag, always ``"session"``."""
    session_id: str
    """The linked session."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


ToolCallContent: TypeAlias = (
    ToolCallContentBlock | ToolCallDiff | ToolCallTerminal | ToolCallSession
)
"""The closed union of tool-call card content, tagged by ``type``."""


@attrs.frozen(repr=False, eq=False)
class ToolCallLocation(WireType):
    """A file (and optionally a line) a tool call is working on, for follow-along."""

    path: str
    """The absolute path of the file."""
    line: int | None = None
    """The 1-based line number, if any."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ToolCallStart(WireType):
    """Session update ``tool_call``: a new tool-call card."""

    session_update: Literal["tool_call"] = attrs.field(default="tool_call", kw_only=True)
    """The tag, always ``"tool_call"``."""
    tool_call_id: str
    """The call's id, unique within the session."""
    title: str
    """A human-readable title for the card."""
    kind: ToolKind | None = None
    """What the tool does (client default: ``other``)."""
    status: ToolCallStatus | None = None
    """The call's status (client default: ``pending``)."""
    content: list[ToolCallContent] | None = None
    """The card's content."""
    locations: list[ToolCallLocation] | None = None
    """Files the call works on."""
    raw_input: Any = None
    """The tool's raw input (JSON), if it should be shown."""
    raw_output: Any = None
    """The tool's raw output (JSON), if it should be shown."""
    name: str | None = None
    """The tool's programmatic name."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim (terminal cards use it)."""


@attrs.frozen(repr=False, eq=False)
class ToolCallProgress(WireType):
    """Session update ``tool_call_update``: changes to an existing card.

    Only the fields that are set are sent; the client keeps the rest.
    """

    session_update: Literal["tool_call_update"] = attrs.field(
        default="tool_call_update", kw_only=True
    )
    """The tag, always ``"tool_call_update"``."""
    tool_call_id: str
    """The id of the call to update."""
    title: str | None = None
    """A new title."""
    kind: ToolKind | None = None
    """A new kind."""
    status: ToolCallStatus | None = None
    """A new status."""
    content: list[ToolCallContent] | None = None
    """Replaces the card's whole content collection."""
    locations: list[ToolCallLocation] | None = None
    """Replaces the card's locations."""
    raw_input: Any = None
    """A new raw input (JSON)."""
    raw_output: Any = None
    """A new raw output (JSON)."""
    name: str | None = None
    """The tool's programmatic name."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim (terminal output, exit)."""


@attrs.frozen(repr=False, eq=False)
class ToolCallUpdate(WireType):
    """A tool call's fields without a session-update tag (the schema's ``ToolCallUpdate``).

    Used as ``toolCall`` in ``session/request_permission``; see :class:`ToolCallProgress`.
    """

    tool_call_id: str
    """The id of the call."""
    title: str | None = None
    """The call's title."""
    kind: ToolKind | None = None
    """What the tool does."""
    status: ToolCallStatus | None = None
    """The call's status."""
    content: list[ToolCallContent] | None = None
    """The card's content."""
    locations: list[ToolCallLocation] | None = None
    """Files the call works on."""
    raw_input: Any = None
    """The tool's raw input (JSON)."""
    raw_output: Any = None
    """The tool's raw output (JSON)."""
    name: str | None = None
    """The tool's programmatic name."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""
