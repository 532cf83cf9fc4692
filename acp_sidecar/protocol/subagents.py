"""The unstable subagent session types (``protocol/v1/subagents``): the parent's
``subagent_update`` and the messages between sessions."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.content import ContentBlock


@attrs.frozen(repr=False, eq=False)
class TokenUsage(WireType):
    """Tokens used by completed work (``Usage``, unstable)."""

    total_tokens: int
    """All tokens, input and output."""
    input_tokens: int
    """Tokens sent to the model."""
    output_tokens: int
    """Tokens the model answered with."""
    cached_read_tokens: int | None = None
    """Of the input, those served from the endpoint's cache (``None``: not reported)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


SubagentStateName: TypeAlias = Literal["running", "requires_action", "idle"]
"""What a child session is doing, as the parent's ``subagent_update`` reports it."""


@attrs.frozen(repr=False, eq=False)
class SubagentState(WireType):
    """A child's work state (``StateUpdate``): a whole snapshot, replacing the previous one."""

    state: SubagentStateName
    """``running``, ``requires_action`` (waiting for the user) or ``idle`` (its job ended)."""
    stop_reason: str | None = None
    """With ``idle``: why its work stopped (``end_turn``, ``cancelled``, …)."""
    usage: TokenUsage | None = None
    """With ``idle``: the tokens its work used (unstable; omitted: not reported)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionCancelCapabilities(WireType):
    """A child advertises that ``session/cancel`` stops its work (``{}``)."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SubagentSessionCapabilities(WireType):
    """The mutations a client may send for one child session (only those named)."""

    cancel: SessionCancelCapabilities | None = None
    """Present: ``session/cancel`` on the child stops the child alone."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SubagentUpdate(WireType):
    """Session update ``subagent_update``, on the parent: announces a child session (the
    first one for its id, before anything carrying that id) and patches its state. Sent only
    to clients that advertised ``clientCapabilities.subagents``."""

    session_update: Literal["subagent_update"] = attrs.field(
        default="subagent_update", kw_only=True
    )
    """The tag, always ``"subagent_update"``."""
    session_id: str
    """The child's session id."""
    title: str | None = None
    """The parent's display title for the child (omitted: unchanged)."""
    capabilities: SubagentSessionCapabilities | None = None
    """What the client may send for the child (omitted: unchanged)."""
    state: SubagentState | None = None
    """The child's current work state (omitted: unchanged)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionMessage(WireType):
    """Session update ``session_message``: who sent an inter-session message to whom (its
    content follows as ``session_message_chunk`` under the same id)."""

    session_update: Literal["session_message"] = attrs.field(
        default="session_message", kw_only=True
    )
    """The tag, always ``"session_message"``."""
    message_id: str
    """The message's id within the session the update is on."""
    sender_session_id: str | None = None
    """The sending session."""
    recipient_session_id: str | None = None
    """The receiving session."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionMessageChunk(WireType):
    """Session update ``session_message_chunk``: one content block of an inter-session
    message."""

    session_update: Literal["session_message_chunk"] = attrs.field(
        default="session_message_chunk", kw_only=True
    )
    """The tag, always ``"session_message_chunk"``."""
    message_id: str
    """The message the block belongs to."""
    content: ContentBlock
    """The block."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""
