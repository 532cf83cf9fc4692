"""ACP v2 ``session/request_permission``: the dialog names its subject, a tool call (its card)
or a command (what runs, and where). Options and the answer have v1's shapes and reuse v1's
classes."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.client import PermissionOption, RequestPermissionResponse
from acp_sidecar.protocol.tool_call import ToolCallLocation, ToolCallStatus, ToolKind
from acp_sidecar.protocol.v2.tool_call import ToolCallContent

__all__ = [
    "CommandSubject",
    "PermissionSubject",
    "RequestPermissionRequest",
    "RequestPermissionResponse",
    "ToolCallCard",
    "ToolCallSubject",
]


@attrs.frozen(repr=False, eq=False)
class ToolCallCard(WireType):
    """A card as a dialog shows it: a ``tool_call_update``'s fields without the update tag."""

    tool_call_id: str
    """The card."""
    title: str | None = None
    """Its headline."""
    kind: ToolKind | None = None
    """What sort of work."""
    status: ToolCallStatus | None = None
    """Where the call is (``pending`` while asked)."""
    content: list[ToolCallContent] | None = None
    """What it shows."""
    locations: list[ToolCallLocation] | None = None
    """The files it works on."""
    raw_input: Any = None
    """The call's arguments."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ToolCallSubject(WireType):
    """The dialog asks about a tool call."""

    type: Literal["tool_call"] = attrs.field(default="tool_call", kw_only=True)
    """The tag."""
    tool_call: ToolCallCard
    """The card asked about."""


@attrs.frozen(repr=False, eq=False)
class CommandSubject(WireType):
    """The dialog asks about a command to run."""

    type: Literal["command"] = attrs.field(default="command", kw_only=True)
    """The tag."""
    command: str
    """The command line."""
    cwd: str
    """Where it would run (absolute)."""
    tool_call_id: str | None = None
    """The card that runs it."""
    terminal_id: str | None = None
    """The terminal it would show in."""


PermissionSubject: TypeAlias = ToolCallSubject | CommandSubject
"""What a dialog asks about."""


@attrs.frozen(repr=False, eq=False)
class RequestPermissionRequest(WireType):
    """Params of ``session/request_permission`` (agent → client)."""

    session_id: str
    """The session asking."""
    title: str
    """The question."""
    options: list[PermissionOption]
    """The choices (at least one)."""
    subject: PermissionSubject | None = None
    """What is asked about."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""
