"""Session modes: their ids, how the editor lists them, and a session's permission state.
Apart from :mod:`.policy` so that answering ``session/new`` does not import the tool pipeline.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias, get_args

import attrs

from acp_sidecar.bridge.rules import Rule
from acp_sidecar.protocol.session import SessionMode, SessionModeState
from acp_sidecar.values import State

ModeId: TypeAlias = Literal["ask", "auto", "read-only"]
MODE_IDS: Final[tuple[ModeId, ...]] = get_args(ModeId)
DEFAULT_MODE: Final[ModeId] = "ask"

MODES: Final = (
    SessionMode(
        id="ask",
        name="Ask",
        description="Ask before any tool call that may change things: edits, commands, "
        "every tool not declared read-only, and tools that reach outside this machine.",
    ),
    SessionMode(id="auto", name="Auto", description="Run every tool call without asking."),
    SessionMode(
        id="read-only",
        name="Read-only",
        description="Refuse every tool call that may change things; reading and searching "
        "run without asking — also read-only tools that reach outside this machine (a web "
        "fetch, a remote MCP server), so what they are sent can leave it.",
    ),
)


def mode_state(current: ModeId) -> SessionModeState:
    """The ``modes`` of ``session/new``: every mode and the current one."""
    return SessionModeState(current_mode_id=current, available_modes=list(MODES))


@attrs.define(repr=False, eq=False)
class SessionPolicy(State):
    """A session's mutable permission state: its mode and its own permission rules (those
    added by ``/permissions`` or an "always … in this session" answer; no other session
    sees them, and the session's log keeps them for a load, resume or fork)."""

    mode: ModeId = DEFAULT_MODE
    rules: list[Rule] = attrs.field(factory=list)
    """The session's rules, in the order they were added."""
