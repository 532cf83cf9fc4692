"""Agent → client requests: ``session/request_permission``, ``fs/*`` and ``elicitation/create``.

An answer's ``action`` is kept as sent: an extension's own word must not be read as one of
``accept``/``decline``/``cancel``.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.tool_call import ToolCallUpdate

PermissionOptionKind: TypeAlias = Literal[
    "allow_once", "allow_always", "reject_once", "reject_always"
]
"""What choosing an option means; clients pick icons and shortcuts by it."""


@attrs.frozen(repr=False, eq=False)
class PermissionOption(WireType):
    """A choice offered to the user."""

    option_id: str
    """The id returned when the user picks this option."""
    name: str
    """Human-readable label."""
    kind: PermissionOptionKind
    """What picking it means."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class RequestPermissionRequest(WireType):
    """Params of ``session/request_permission``."""

    session_id: str
    """The session the tool call belongs to."""
    tool_call: ToolCallUpdate
    """The tool call awaiting permission."""
    options: list[PermissionOption]
    """The choices offered."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SelectedPermissionOutcome(WireType):
    """The user picked an option."""

    outcome: Literal["selected"] = attrs.field(default="selected", kw_only=True)
    """The tag, always ``"selected"``."""
    option_id: str
    """The id of the option picked."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class CancelledPermissionOutcome(WireType):
    """The prompt turn was cancelled before the user answered (no ``_meta`` in the schema)."""

    outcome: Literal["cancelled"] = attrs.field(default="cancelled", kw_only=True)
    """The tag, always ``"cancelled"``."""


RequestPermissionOutcome: TypeAlias = SelectedPermissionOutcome | CancelledPermissionOutcome
"""The closed union of permission outcomes, tagged by ``outcome``."""


@attrs.frozen(repr=False, eq=False)
class RequestPermissionResponse(WireType):
    """Result of ``session/request_permission``."""

    outcome: RequestPermissionOutcome
    """What the user decided."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ReadTextFileRequest(WireType):
    """Params of ``fs/read_text_file``."""

    session_id: str
    """The session on whose behalf to read."""
    path: str
    """The absolute path of the file."""
    line: int | None = None
    """The 1-based line to start at."""
    limit: int | None = None
    """The maximum number of lines to read."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ReadTextFileResponse(WireType):
    """Result of ``fs/read_text_file``."""

    content: str
    """The text read."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class WriteTextFileRequest(WireType):
    """Params of ``fs/write_text_file``."""

    session_id: str
    """The session on whose behalf to write."""
    path: str
    """The absolute path of the file."""
    content: str
    """The text to write."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class WriteTextFileResponse(WireType):
    """Result of ``fs/write_text_file``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


ElicitationMode: TypeAlias = Literal["form", "url"]
"""How the editor asks: a form drawn from a schema, or a page at a URL."""


@attrs.frozen(repr=False, eq=False)
class CreateElicitationRequest(WireType):
    """Params of ``elicitation/create`` (session-scoped): ask the user for structured input."""

    session_id: str
    """The session the elicitation belongs to."""
    message: str
    """What input is needed, for people."""
    mode: ElicitationMode
    """``form``: draw ``requested_schema``; ``url``: send the user to ``url``."""
    requested_schema: dict[str, Any] | None = None
    """The form's JSON Schema (primitive-typed properties); set in ``form`` mode only."""
    elicitation_id: str | None = None
    """The elicitation's id; set in ``url`` mode only."""
    url: str | None = None
    """The page the user is sent to; set in ``url`` mode only."""
    tool_call_id: str | None = None
    """The tool call the input is for, when there is one."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class CreateElicitationResponse(WireType):
    """Result of ``elicitation/create``."""

    action: str
    """``accept`` (with ``content``), ``decline``, ``cancel``, or an extension's action."""
    content: dict[str, Any] | None = None
    """What the user entered, matching the requested schema (``accept`` only)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""
