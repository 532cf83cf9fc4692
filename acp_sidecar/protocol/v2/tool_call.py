"""ACP v2 tool-call cards and terminals: one ``tool_call_update`` creates and patches a card
(an omitted field is unchanged, a present one replaced), a diff is a list of changes with a
``git_patch``, and a terminal is its own display-only surface (``terminal_update`` announces
and finishes it, ``terminal_output_chunk`` appends base64 output).

Card content of kind ``content`` and ``terminal`` and locations have v1's shapes and reuse
v1's classes; v2 has no ``session`` content.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import UNSET, Unset, WireType
from acp_sidecar.protocol.tool_call import (
    ToolCallContentBlock,
    ToolCallLocation,
    ToolCallStatus,
    ToolCallTerminal,
    ToolKind,
)

__all__ = [
    "CancelControl",
    "DiffChange",
    "DiffPatch",
    "TerminalCapabilities",
    "TerminalExitStatus",
    "TerminalOutputChunk",
    "TerminalUpdate",
    "ToolCallCapabilities",
    "ToolCallContent",
    "ToolCallDiff",
    "ToolCallUpdate",
    "V2ToolCallStatus",
]

V2ToolCallStatus: TypeAlias = ToolCallStatus | Literal["cancelled"]
"""v1's statuses, and ``cancelled``: the call was stopped before it completed."""


@attrs.frozen(repr=False, eq=False)
class CancelControl(WireType):
    """``cancel`` in a card's or terminal's capabilities: present (``{}``) means the client
    may cancel it (``tool_call/cancel``, ``terminal/cancel``)."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ToolCallCapabilities(WireType):
    """What the client may do to a card now."""

    cancel: CancelControl | None = None
    """``tool_call/cancel`` is accepted while present."""


@attrs.frozen(repr=False, eq=False)
class TerminalCapabilities(WireType):
    """What the client may do to a terminal now."""

    cancel: CancelControl | None = None
    """``terminal/cancel`` is accepted while present."""


@attrs.frozen(repr=False, eq=False)
class DiffChange(WireType):
    """One file a diff touches: ``add`` (it did not exist) or ``modify``."""

    operation: Literal["add", "modify"]
    """What happened to the file (our tools never delete, move or copy one)."""
    path: str
    """The file's absolute path."""
    file_type: Literal["text"] = attrs.field(default="text", kw_only=True)
    """Our diffs are of text files."""


@attrs.frozen(repr=False, eq=False)
class DiffPatch(WireType):
    """The change as patch text."""

    format: Literal["git_patch"] = attrs.field(default="git_patch", kw_only=True)
    """``diff --git`` sections with absolute paths and no ``a/``/``b/`` prefixes."""
    text: str
    """The patch."""


@attrs.frozen(repr=False, eq=False)
class ToolCallDiff(WireType):
    """Card content ``diff``: the files changed and the patch that changes them."""

    type: Literal["diff"] = attrs.field(default="diff", kw_only=True)
    """The tag."""
    changes: list[DiffChange]
    """Each file touched."""
    patch: DiffPatch | None = None
    """The patch text of every change."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


ToolCallContent: TypeAlias = ToolCallContentBlock | ToolCallDiff | ToolCallTerminal
"""The closed union of v2 card content, tagged by ``type``."""


@attrs.frozen(repr=False, eq=False)
class ToolCallUpdate(WireType):
    """Session update ``tool_call_update``: creates the card the first time its id is seen,
    patches it after (only the fields present change)."""

    session_update: Literal["tool_call_update"] = attrs.field(
        default="tool_call_update", kw_only=True
    )
    """The tag."""
    tool_call_id: str
    """The card."""
    name: str | None = None
    """The tool's name."""
    title: str | None = None
    """The card's headline."""
    kind: ToolKind | None = None
    """What sort of work, for the icon."""
    status: V2ToolCallStatus | None = None
    """Where the call is."""
    content: list[ToolCallContent] | None = None
    """The card's whole content, replaced."""
    locations: list[ToolCallLocation] | None = None
    """The files it works on, replaced."""
    raw_input: Any = None
    """The call's arguments."""
    raw_output: Any = None
    """The call's raw result."""
    capabilities: ToolCallCapabilities | None | Unset = UNSET
    """What the client may do to the call (``None``: nothing any more; unset: unchanged)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class TerminalExitStatus(WireType):
    """How a terminal's process ended: its exit code, or the signal that killed it."""

    exit_code: int | None = None
    """The exit code."""
    signal: str | None = None
    """The signal's name."""


@attrs.frozen(repr=False, eq=False)
class TerminalUpdate(WireType):
    """Session update ``terminal_update``: announces a terminal (before any card names it)
    and later finishes it with its exit status."""

    session_update: Literal["terminal_update"] = attrs.field(
        default="terminal_update", kw_only=True
    )
    """The tag."""
    terminal_id: str
    """The terminal."""
    command: str | None = None
    """The command it runs."""
    cwd: str | None = None
    """Where it runs (absolute)."""
    exit_status: TerminalExitStatus | None = None
    """How it ended, once it did."""
    capabilities: TerminalCapabilities | None | Unset = UNSET
    """What the client may do to it (``None``: nothing any more; unset: unchanged)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class TerminalOutputChunk(WireType):
    """Session update ``terminal_output_chunk``: output appended to a terminal."""

    session_update: Literal["terminal_output_chunk"] = attrs.field(
        default="terminal_output_chunk", kw_only=True
    )
    """The tag."""
    terminal_id: str
    """The terminal."""
    data: str
    """The output: base64 of its UTF-8."""
