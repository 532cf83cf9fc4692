"""ACP session methods and the session config options they carry.

MCP server configs stay raw JSON objects here: :mod:`acp_sidecar.mcp.config` parses them.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.content import ContentBlock

StopReason: TypeAlias = Literal[
    "end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"
]
"""Why a prompt turn ended."""


@attrs.frozen(repr=False, eq=False)
class SessionMode(WireType):
    """A mode the session can run in."""

    id: str
    """The mode's id."""
    name: str
    """Human-readable name."""
    description: str | None = None
    """What the mode does."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionModeState(WireType):
    """The session's current mode and the modes it may switch to."""

    current_mode_id: str
    """The id of the active mode."""
    available_modes: list[SessionMode]
    """Every mode available."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


SessionConfigOptionCategory: TypeAlias = str
"""What a config option is about, for the client's UX: ``mode``, ``model``, ``model_config``,
``thought_level``, or another (``_``-prefixed for custom ones)."""


@attrs.frozen(repr=False, eq=False)
class SessionConfigSelectOption(WireType):
    """One value a select config option can take."""

    value: str
    """The value's id (what ``session/set_config_option`` sends)."""
    name: str
    """Human-readable label."""
    description: str | None = None
    """Optional description."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionConfigOption(WireType):
    """A session config option that selects one value (``type: "select"``), and its current
    value."""

    type: Literal["select"] = attrs.field(default="select", kw_only=True)
    """The tag, always ``"select"``."""
    id: str
    """The option's id."""
    name: str
    """Human-readable label."""
    current_value: str
    """The id of the value now selected (one of :attr:`options`)."""
    options: list[SessionConfigSelectOption]
    """The values to choose from (ungrouped)."""
    description: str | None = None
    """Optional description."""
    category: SessionConfigOptionCategory | None = None
    """Optional semantic category (``mode``, ``model``, ``thought_level``, …)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionConfigBooleanOption(WireType):
    """A session config option that is on or off (``type: "boolean"``): sent only to clients
    that set ``clientCapabilities.session.configOptions.boolean`` (the schema's rule)."""

    type: Literal["boolean"] = attrs.field(default="boolean", kw_only=True)
    """The tag, always ``"boolean"``."""
    id: str
    """The option's id."""
    name: str
    """Human-readable label."""
    current_value: bool
    """Whether it is on."""
    description: str | None = None
    """Optional description."""
    category: SessionConfigOptionCategory | None = None
    """Optional semantic category."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


ConfigOption: TypeAlias = SessionConfigOption | SessionConfigBooleanOption
"""A session config option of either kind (closed: one class per ``type``)."""


@attrs.frozen(repr=False, eq=False)
class NewSessionRequest(WireType):
    """Params of ``session/new``."""

    cwd: str
    """The absolute working directory of the session."""
    mcp_servers: list[dict[str, Any]] = attrs.Factory(list)
    """MCP servers to connect to, as raw JSON objects (required on the wire; kept, unused)."""
    additional_directories: list[str] | None = None
    """Further absolute workspace roots."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class NewSessionResponse(WireType):
    """Result of ``session/new``."""

    session_id: str
    """The new session's id."""
    modes: SessionModeState | None = None
    """The session's modes, if the agent has modes."""
    config_options: list[ConfigOption] | None = None
    """The session's config options and their current values, if the agent has any."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class LoadSessionRequest(WireType):
    """Params of ``session/load``."""

    session_id: str
    """The id of the session to load."""
    cwd: str
    """The absolute working directory of the session."""
    mcp_servers: list[dict[str, Any]] = attrs.Factory(list)
    """MCP servers to connect to, as raw JSON objects (required on the wire; kept, unused)."""
    additional_directories: list[str] | None = None
    """Further absolute workspace roots."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class LoadSessionResponse(WireType):
    """Result of ``session/load`` (sent after the history has been replayed)."""

    modes: SessionModeState | None = None
    """The session's modes, if the agent has modes."""
    config_options: list[ConfigOption] | None = None
    """The session's config options and their current values, if the agent has any."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ResumeSessionRequest(WireType):
    """Params of ``session/resume``: reattach to a stored session without replaying it."""

    session_id: str
    """The id of the session to resume."""
    cwd: str
    """The absolute working directory of the session (must be the session's)."""
    mcp_servers: list[dict[str, Any]] = attrs.Factory(list)
    """MCP servers to connect to, as raw JSON objects."""
    additional_directories: list[str] | None = None
    """Further absolute workspace roots: when non-empty, the session's complete list."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ResumeSessionResponse(WireType):
    """Result of ``session/resume``."""

    modes: SessionModeState | None = None
    """The session's modes, if the agent has modes."""
    config_options: list[ConfigOption] | None = None
    """The session's config options and their current values, if the agent has any."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ForkSessionRequest(WireType):
    """``session/fork`` (unstable): a new session from a stored one's whole history."""

    session_id: str
    """The session to fork (left untouched)."""
    cwd: str
    """The fork's absolute working directory (its MCP servers start there)."""
    mcp_servers: list[dict[str, Any]] = attrs.Factory(list)
    """The MCP servers to connect for the fork."""
    additional_directories: list[str] | None = None
    """The fork's whole list of extra roots (omitted or empty: none)."""
    system_prompt: dict[str, Any] | None = None
    """Client system instructions; only with ``sessionCapabilities.systemPrompt``, which this
    agent does not advertise (a fork naming one is refused)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ForkSessionResponse(WireType):
    """The answer to ``session/fork``: the new session's id and state."""

    session_id: str
    """The fork's id."""
    modes: SessionModeState | None = None
    """The fork's modes."""
    config_options: list[ConfigOption] | None = None
    """The fork's config options."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class CloseSessionRequest(WireType):
    """Params of ``session/close``: cancel the session's work and free what it holds."""

    session_id: str
    """The id of the session to close."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class CloseSessionResponse(WireType):
    """Result of ``session/close``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class DeleteSessionRequest(WireType):
    """Params of ``session/delete``: remove a session from ``session/list`` and the store."""

    session_id: str
    """The id of the session to delete."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class DeleteSessionResponse(WireType):
    """Result of ``session/delete``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SetSessionConfigOptionRequest(WireType):
    """Params of ``session/set_config_option``: a value id (``type`` absent, ``"id"`` or
    another), or a boolean (``type: "boolean"``)."""

    session_id: str
    """The session whose option is set."""
    config_id: str
    """The option's id."""
    value: str | bool
    """The id of the value to select, or (with ``type: "boolean"``) whether to turn it on."""
    type: str | None = None
    """The value's shape: ``"boolean"``, or a value id (``"id"``, absent, anything else)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SetSessionConfigOptionResponse(WireType):
    """Result of ``session/set_config_option``: every option with its current value."""

    config_options: list[ConfigOption]
    """All the session's config options, after the change."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ListSessionsRequest(WireType):
    """Params of ``session/list``."""

    cwd: str | None = None
    """Only sessions with this working directory."""
    cursor: str | None = None
    """The ``nextCursor`` of the previous page."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionInfo(WireType):
    """One stored session in a ``session/list`` page."""

    session_id: str
    """The session's id."""
    cwd: str
    """The session's working directory."""
    title: str | None = None
    """Human-readable title."""
    updated_at: str | None = None
    """ISO 8601 timestamp of the last activity."""
    additional_directories: list[str] | None = None
    """Further workspace roots."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ListSessionsResponse(WireType):
    """Result of ``session/list``."""

    sessions: list[SessionInfo]
    """This page of sessions."""
    next_cursor: str | None = None
    """Cursor for the next page; absent on the last page."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SetSessionModeRequest(WireType):
    """Params of ``session/set_mode``."""

    session_id: str
    """The session to switch."""
    mode_id: str
    """The mode to switch to."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SetSessionModeResponse(WireType):
    """Result of ``session/set_mode``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class PromptRequest(WireType):
    """Params of ``session/prompt``: one user turn."""

    session_id: str
    """The session to prompt."""
    prompt: list[ContentBlock]
    """The user's message."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class PromptResponse(WireType):
    """Result of ``session/prompt``, sent when the turn ends."""

    stop_reason: StopReason
    """Why the turn ended."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class CancelNotification(WireType):
    """Params of ``session/cancel`` (client → agent notification)."""

    session_id: str
    """The session whose turn to cancel."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class CancelRequestNotification(WireType):
    """Params of ``$/cancel_request`` (either direction)."""

    request_id: int | str | None
    """The id of the request to cancel (``null`` is a valid JSON-RPC id and is sent)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""
