"""Agent → client requests: ``session/request_permission`` and ``fs/*``.

Invariant: ``RequestPermissionOutcome`` is a closed union tagged by ``outcome``.
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
