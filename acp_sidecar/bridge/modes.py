"""Session modes: their ids, how the editor lists them, and a session's permission state.
Apart from :mod:`.policy` so that answering ``session/new`` does not import the tool pipeline.
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
        description="Refuse every tool call that may change things; reading and searching "
        "run without asking — also read-only tools that reach outside this machine (a web "
        "fetch, a remote MCP server), so what they are sent can leave it.",
    ),
)


def mode_state(current: ModeId) -> SessionModeState:
    """The ``modes`` of ``session/new``: every mode and the current one."""
    return SessionModeState(current_mode_id=current, available_modes=list(MODES))


@attrs.frozen
class DeclaredRisk:
    """What a tool declared about itself when the user was asked about it."""

    may_change: bool
    """It is not declared read-only."""
    open_world: bool
    """It declared that it reaches outside the machine."""


Remembered: TypeAlias = tuple[str, DeclaredRisk | None]
"""What an "always" answer is about: a tool's name and the risk it declared when the user
answered (``None`` when the call was asked about without the mode policy judging it)."""


@attrs.define
class SessionPolicy:
    """A session's mutable permission state: its mode and the "always" answers per tool.

    An answer is remembered for a tool's name *and the risk it declared* when the user
    answered, so it cannot survive the tool's definition changing under the same name: an
    MCP server that re-lists a tool once read-only as one that may change things (or that now
    reaches outside the machine) is asked about again. This is chosen over forgetting a
    server's answers whenever it re-lists its tools because it is local to the policy (no
    re-listing path can forget to clear) and a re-listing that leaves a tool as it was keeps
    the user's answer about it.
    """

    mode: ModeId = DEFAULT_MODE
    always: dict[Remembered, bool] = attrs.field(factory=dict)
    """(tool name, declared risk) → allowed (``True``) or rejected (``False``) for the rest of
    the session."""
