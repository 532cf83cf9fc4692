"""ACP v2 session set-up: ``session/new``, ``session/resume`` and ``session/set_config_option``.

v2 answers ``session/new`` with the commands too, and has no session modes (the mode is a
config option). ``session/list``, ``close`` and
``delete`` have v1's shapes and reuse v1's classes.
"""

from __future__ import annotations

from typing import Any

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.session import (
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    ListSessionsRequest,
    ListSessionsResponse,
)
from acp_sidecar.protocol.v2.options import Command, ConfigOption

__all__ = [
    "CloseSessionRequest",
    "CloseSessionResponse",
    "DeleteSessionRequest",
    "DeleteSessionResponse",
    "ListSessionsRequest",
    "ListSessionsResponse",
    "NewSessionRequest",
    "NewSessionResponse",
    "ReplayFrom",
    "ResumeSessionRequest",
    "ResumeSessionResponse",
    "SetSessionConfigOptionRequest",
    "SetSessionConfigOptionResponse",
]


@attrs.frozen(repr=False, eq=False)
class NewSessionRequest(WireType):
    """Params of v2 ``session/new``."""

    cwd: str
    """The session's working directory (absolute)."""
    additional_directories: list[str] = attrs.Factory(list)
    """More workspace roots (absolute)."""
    mcp_servers: list[dict[str, Any]] = attrs.Factory(list)
    """MCP servers to connect to, each as sent (``type`` ``stdio`` or ``http``); parsed by
    :mod:`acp_sidecar.mcp.config`, which reads v1's and v2's entries alike."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class NewSessionResponse(WireType):
    """Result of v2 ``session/new``."""

    session_id: str
    """The new session's id."""
    config_options: list[ConfigOption] = attrs.Factory(list)
    """The session's config options (mode, model, …)."""
    available_commands: list[Command] = attrs.Factory(list)
    """The commands the session offers from the start."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SetSessionConfigOptionRequest(WireType):
    """Params of v2 ``session/set_config_option``: ``type`` ``id`` with a value id, or
    ``boolean`` with ``true``/``false`` (the handler checks the pair)."""

    session_id: str
    """The session."""
    config_id: str
    """The option to set."""
    type: str
    """``id`` or ``boolean``."""
    value: str | bool
    """The new value."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SetSessionConfigOptionResponse(WireType):
    """Result of v2 ``session/set_config_option``: every option, as now in force."""

    config_options: list[ConfigOption]
    """The session's config options."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ReplayFrom(WireType):
    """Where ``session/resume`` replays from: ``start`` (the whole history) is the one cursor
    served; another ``type`` is refused, never substituted (the handler checks it)."""

    type: str
    """The cursor's kind: ``start``, or a custom or future one."""


@attrs.frozen(repr=False, eq=False)
class ResumeSessionRequest(WireType):
    """Params of v2 ``session/resume``: reattach to a stored session, replaying its history
    first when ``replay_from`` asks."""

    session_id: str
    """The session to resume."""
    cwd: str
    """The session's working directory (absolute; must be the session's)."""
    additional_directories: list[str] | None = None
    """More workspace roots: when non-empty, the session's whole new list (``null``: none)."""
    mcp_servers: list[dict[str, Any]] | None = None
    """MCP servers to connect to, each as sent; the complete set, none restored (``null``:
    none)."""
    replay_from: ReplayFrom | None = None
    """Where the replay begins; ``None``: no replay."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ResumeSessionResponse(WireType):
    """Result of v2 ``session/resume``, sent after the replay and the state snapshot."""

    config_options: list[ConfigOption] = attrs.Factory(list)
    """The session's config options."""
    available_commands: list[Command] = attrs.Factory(list)
    """The session's commands (an ``available_commands_update`` follows, as after ``new``)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""
