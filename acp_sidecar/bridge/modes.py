"""Session modes: their ids, how the editor lists them, and a session's permission state.

Kept apart from :mod:`acp_sidecar.bridge.policy` so that answering ``session/new`` (which lists
the modes) does not import the tool pipeline: it is on the editor's cold-start path.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias, get_args

import attrs

from acp_sidecar.protocol.session import SessionMode, SessionModeState

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
        description="Refuse every tool call that may change things; reading and searching run.",
    ),
)


def mode_state(current: ModeId) -> SessionModeState:
    """The ``modes`` of ``session/new``: every mode and the current one."""
    return SessionModeState(current_mode_id=current, available_modes=list(MODES))


@attrs.define
class SessionPolicy:
    """A session's mutable permission state: its mode and the "always" answers per tool."""

    mode: ModeId = DEFAULT_MODE
    always: dict[str, bool] = attrs.field(factory=dict)
    """Tool name → allowed (``True``) or rejected (``False``) for the rest of the session."""
