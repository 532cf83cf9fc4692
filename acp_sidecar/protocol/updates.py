"""ACP ``session/update`` notifications: message chunks, tool calls, plans, commands, modes.

Invariant: ``SessionUpdate`` is a closed union tagged by ``sessionUpdate``; consumers
``match`` on it exhaustively.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.content import ContentBlock
from acp_sidecar.protocol.tool_call import ToolCallProgress, ToolCallStart

PlanEntryPriority: TypeAlias = Literal["high", "medium", "low"]
"""How important a plan entry is."""

PlanEntryStatus: TypeAlias = Literal["pending", "in_progress", "completed"]
"""Where a plan entry stands."""


@attrs.frozen(repr=False, eq=False)
class UserMessageChunk(WireType):
    """Session update ``user_message_chunk``: part of a user message (replayed history)."""

    session_update: Literal["user_message_chunk"] = attrs.field(
        default="user_message_chunk", kw_only=True
    )
    """The tag, always ``"user_message_chunk"``."""
    content: ContentBlock
    """The chunk."""
    message_id: str | None = None
    """The id of the message the chunk belongs to."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AgentMessageChunk(WireType):
    """Session update ``agent_message_chunk``: part of the agent's reply."""

    session_update: Literal["agent_message_chunk"] = attrs.field(
        default="agent_message_chunk", kw_only=True
    )
    """The tag, always ``"agent_message_chunk"``."""
    content: ContentBlock
    """The chunk."""
    message_id: str | None = None
    """The id of the message the chunk belongs to."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AgentThoughtChunk(WireType):
    """Session update ``agent_thought_chunk``: part of the agent's reasoning."""

    session_update: Literal["agent_thought_chunk"] = attrs.field(
        default="agent_thought_chunk", kw_only=True
    )
    """The tag, always ``"agent_thought_chunk"``."""
    content: ContentBlock
    """The chunk."""
    message_id: str | None = None
    """The id of the message the chunk belongs to."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class PlanEntry(WireType):
    """One task in the agent's plan."""

    content: str
    """What the task is."""
    priority: PlanEntryPriority
    """How important it is."""
    status: PlanEntryStatus
    """Where it stands."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class Plan(WireType):
    """Session update ``plan``: the agent's whole current plan (replaces the previous one)."""

    session_update: Literal["plan"] = attrs.field(default="plan", kw_only=True)
    """The tag, always ``"plan"``."""
    entries: list[PlanEntry]
    """Every entry of the plan."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AvailableCommandInput(WireType):
    """Free-text input to a command: everything typed after its name."""

    hint: str
    """A hint shown while the input is empty."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AvailableCommand(WireType):
    """A slash command the user can run."""

    name: str
    """The command's name (without the slash)."""
    description: str
    """What the command does."""
    input: AvailableCommandInput | None = None
    """The command's input, if it takes any."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AvailableCommandsUpdate(WireType):
    """Session update ``available_commands_update``: the full list of commands."""

    session_update: Literal["available_commands_update"] = attrs.field(
        default="available_commands_update", kw_only=True
    )
    """The tag, always ``"available_commands_update"``."""
    available_commands: list[AvailableCommand]
    """Every command now available."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class CurrentModeUpdate(WireType):
    """Session update ``current_mode_update``: the session switched mode."""

    session_update: Literal["current_mode_update"] = attrs.field(
        default="current_mode_update", kw_only=True
    )
    """The tag, always ``"current_mode_update"``."""
    current_mode_id: str
    """The id of the mode now active."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


SessionUpdate: TypeAlias = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | Plan
    | AvailableCommandsUpdate
    | CurrentModeUpdate
)
"""The closed union of session updates, tagged by ``sessionUpdate``."""


@attrs.frozen(repr=False, eq=False)
class SessionNotification(WireType):
    """Params of ``session/update`` (agent → client notification)."""

    session_id: str
    """The session the update belongs to."""
    update: SessionUpdate
    """The update."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""
