"""ACP v2 ``session/prompt`` and the ``state_update`` kind that reports the turn it starts.

v2 answers the prompt once its message is inserted (``{messageId}``); the turn's progress and
end are ``state_update`` snapshots. Only ``idle`` carries a stop reason, and only the
``error`` reason carries an error: the three states are three classes so nothing else can.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.session import CancelNotification, PromptRequest, StopReason
from acp_sidecar.protocol.v2.unstable import Usage

__all__ = [
    "BackgroundTerminal",
    "CancelNotification",
    "IdleState",
    "PromptRequest",
    "PromptResponse",
    "RequiresActionState",
    "RunningState",
    "StateUpdate",
    "TurnError",
    "V2StopReason",
]

V2StopReason: TypeAlias = StopReason | Literal["error"]
"""v1's stop reasons, and ``error``: the turn failed after its prompt was inserted."""


@attrs.frozen(repr=False, eq=False)
class PromptResponse(WireType):
    """Result of ``session/prompt``: the message was inserted under ``message_id``."""

    message_id: str
    """The id of the echoed user message (its ``user_message_chunk`` carries it too)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class BackgroundTerminal(WireType):
    """A ``background`` entry: a process that outlives the turn, shown as its terminal."""

    type: Literal["terminal"] = attrs.field(default="terminal", kw_only=True)
    """The tag."""
    terminal_id: str
    """The terminal announced by a ``terminal_update``."""


@attrs.frozen(repr=False, eq=False)
class TurnError(WireType):
    """Why a turn ended in ``error``: a JSON-RPC error object."""

    code: int
    """The JSON-RPC error code."""
    message: str
    """One sentence; never a secret."""


@attrs.frozen(repr=False, eq=False)
class RunningState(WireType):
    """``state_update`` ``running``: foreground work is in progress."""

    session_update: Literal["state_update"] = attrs.field(default="state_update", kw_only=True)
    """The tag."""
    state: Literal["running"] = attrs.field(default="running", kw_only=True)
    """The state."""
    background: list[BackgroundTerminal] = attrs.Factory(list)
    """Every piece of background work, the whole list each time."""


@attrs.frozen(repr=False, eq=False)
class RequiresActionState(WireType):
    """``state_update`` ``requires_action``: the turn waits on the user (a dialog)."""

    session_update: Literal["state_update"] = attrs.field(default="state_update", kw_only=True)
    """The tag."""
    state: Literal["requires_action"] = attrs.field(default="requires_action", kw_only=True)
    """The state."""
    background: list[BackgroundTerminal] = attrs.Factory(list)
    """Every piece of background work, the whole list each time."""


@attrs.frozen(repr=False, eq=False)
class IdleState(WireType):
    """``state_update`` ``idle``: no foreground work; ``stop_reason`` says how the turn ended."""

    session_update: Literal["state_update"] = attrs.field(default="state_update", kw_only=True)
    """The tag."""
    state: Literal["idle"] = attrs.field(default="idle", kw_only=True)
    """The state."""
    stop_reason: V2StopReason | None = None
    """Why the turn ended; ``None`` on a snapshot that ends no turn."""
    error: TurnError | None = None
    """The failure, with ``stop_reason`` ``error`` only."""
    usage: Usage | None = None
    """The tokens the turn's model responses used (unstable; ``None``: none reported)."""
    background: list[BackgroundTerminal] = attrs.Factory(list)
    """Every piece of background work, the whole list each time."""

    def __attrs_post_init__(self) -> None:
        if (self.error is not None) != (self.stop_reason == "error"):
            raise ValueError("an idle state carries an error exactly when it stopped in error")


StateUpdate: TypeAlias = RunningState | RequiresActionState | IdleState
"""The foreground state of a session, as v2 reports it."""
