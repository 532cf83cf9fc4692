"""ACP ``session/update`` notifications: ``SessionUpdate``, a closed union tagged by
``sessionUpdate``.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.content import ContentBlock
from acp_sidecar.protocol.session import ConfigOption
from acp_sidecar.protocol.subagents import SessionMessage, SessionMessageChunk, SubagentUpdate
from acp_sidecar.protocol.tool_call import ToolCallProgress, ToolCallStart

PlanEntryPriority: TypeAlias = Literal["high", "medium", "low"]
"""How important a plan entry is."""

PlanEntryStatus: TypeAlias = Literal["pending", "in_progress", "completed"]
"""Where a plan entry stands."""

NoticeSeverity: TypeAlias = Literal["info", "warning", "error"]
"""How a notice is presented."""

CompactionStatus: TypeAlias = Literal["in_progress", "completed", "failed", "cancelled"]
"""Where a context compaction stands."""


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
class PlanItems(WireType):
    """A checklist plan of ``plan_update``: every entry, replacing the plan with that id."""

    type: Literal["items"] = attrs.field(default="items", kw_only=True)
    """The tag, always ``"items"``."""
    plan_id: str
    """The plan this replaces (session-scoped)."""
    entries: list[PlanEntry]
    """Every entry of the plan."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class PlanMarkdown(WireType):
    """A Markdown plan of ``plan_update``: the whole document, replacing the plan with that id."""

    type: Literal["markdown"] = attrs.field(default="markdown", kw_only=True)
    """The tag, always ``"markdown"``."""
    plan_id: str
    """The plan this replaces (session-scoped)."""
    content: str
    """The complete document (what the client shows, with or without ``path``)."""
    path: str | None = None
    """The absolute path of the file that holds the plan, if it has one (stable v1 page; the
    unstable schema has no such field)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


PlanContent: TypeAlias = PlanItems | PlanMarkdown
"""What a ``plan_update`` carries, tagged by ``type`` (no ``file`` plans: the stable page has
none)."""


@attrs.frozen(repr=False, eq=False)
class PlanUpdate(WireType):
    """Session update ``plan_update`` (clients with ``clientCapabilities.plan`` only)."""

    session_update: Literal["plan_update"] = attrs.field(default="plan_update", kw_only=True)
    """The tag, always ``"plan_update"``."""
    plan: PlanContent
    """The plan's whole new content."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class PlanRemoved(WireType):
    """Session update ``plan_removed``: the plan with that id is gone (opted-in clients only)."""

    session_update: Literal["plan_removed"] = attrs.field(default="plan_removed", kw_only=True)
    """The tag, always ``"plan_removed"``."""
    plan_id: str
    """The plan to remove."""
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


@attrs.frozen(repr=False, eq=False)
class ConfigOptionUpdate(WireType):
    """Session update ``config_option_update``: the session's config options changed (the
    agent changed one itself); carries all of them with their current values."""

    session_update: Literal["config_option_update"] = attrs.field(
        default="config_option_update", kw_only=True
    )
    """The tag, always ``"config_option_update"``."""
    config_options: list[ConfigOption]
    """Every config option of the session, with its current value."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionInfoUpdate(WireType):
    """Session update ``session_info_update``: the session's title or last activity changed.
    Every field is optional (a partial update); an omitted one is unchanged."""

    session_update: Literal["session_info_update"] = attrs.field(
        default="session_info_update", kw_only=True
    )
    """The tag, always ``"session_info_update"``."""
    title: str | None = None
    """The session's title."""
    updated_at: str | None = None
    """ISO 8601 time of the session's last activity."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class Cost(WireType):
    """A session's cumulative cost."""

    amount: float
    """The total so far."""
    currency: str
    """Its unit: an ISO 4217 code (``USD``, ``EUR``) or another unit (``credits``)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class UsageUpdate(WireType):
    """Session update ``usage_update``: how full the context window is, and the cost."""

    session_update: Literal["usage_update"] = attrs.field(default="usage_update", kw_only=True)
    """The tag, always ``"usage_update"``."""
    used: int
    """Tokens now in the context."""
    size: int
    """The context window, in tokens."""
    cost: Cost | None = None
    """The session's cumulative cost, when prices are known."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class NoticeUpdate(WireType):
    """Session update ``notice``: live information for the user that is not part of the
    session's history. Sent only to a client that advertised ``session.notices``."""

    session_update: Literal["notice"] = attrs.field(default="notice", kw_only=True)
    """The tag, always ``"notice"``."""
    severity: NoticeSeverity
    """How it is presented."""
    title: str
    """Non-empty plain text that stands alone."""
    description: str | None = None
    """Optional plain-text detail or guidance."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class CompactionUpdate(WireType):
    """Session update ``compaction_update``: a context compaction started or changed state.
    Sent only to a client that advertised ``session.compaction``."""

    session_update: Literal["compaction_update"] = attrs.field(
        default="compaction_update", kw_only=True
    )
    """The tag, always ``"compaction_update"``."""
    compaction_id: str
    """The compaction's id, unique within the session."""
    status: CompactionStatus
    """Its lifecycle state."""
    summary: list[ContentBlock] | None = None
    """A complete replacement summary (omitted: unchanged)."""
    error: str | None = None
    """What went wrong (omitted: unchanged)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class CompactionSummaryChunk(WireType):
    """Session update ``compaction_summary_chunk``: one block appended to a compaction's
    summary. Sent only to a client that advertised ``session.compaction``."""

    session_update: Literal["compaction_summary_chunk"] = attrs.field(
        default="compaction_summary_chunk", kw_only=True
    )
    """The tag, always ``"compaction_summary_chunk"``."""
    compaction_id: str
    """The compaction the block belongs to."""
    content: ContentBlock
    """The block to append."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


SessionUpdate: TypeAlias = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | Plan
    | PlanUpdate
    | PlanRemoved
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
    | NoticeUpdate
    | CompactionUpdate
    | CompactionSummaryChunk
    | SubagentUpdate
    | SessionMessage
    | SessionMessageChunk
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
