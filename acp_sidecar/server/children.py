"""The child sessions (subagents) a connection knows: each one's parent and, while it works,
its signal. A child is a restricted session: ``session/cancel`` stops it alone, v2's
per-item cancels stop one of its calls or jobs, and every other method naming it is refused
(``-32600``)."""

from __future__ import annotations

import attrs

from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.values import State

ITEM_CANCELS = frozenset({"tool_call/cancel", "terminal/cancel"})
"""v2's cancels of one item: a child's calls and jobs are named by the child's id."""


@attrs.define(repr=False, eq=False)
class ChildSession(State):
    """One child session the client was told of (live, or replayed by ``session/load``)."""

    parent_id: str
    """The session that delegated its job to it."""
    running: CancelSignal | None = None
    """The signal of its work while it runs (``None``: it is idle)."""


def refuse_child(children: dict[str, ChildSession], method: str, session_id: object) -> None:
    """Refuse a request for a child session (the methods the subagents page restricts: every
    method with a ``sessionId`` but ``session/cancel``, a notification, and the item cancels)."""
    if type(session_id) is not str or method in ITEM_CANCELS:
        return
    child = children.get(session_id)
    if child is not None:
        raise AcpError.invalid_request(
            f"Invalid request: {method} is not permitted on {session_id}, a subagent session "
            f"of {child.parent_id} (only the cancels are)"
        )


def root_of(children: dict[str, ChildSession], session_id: str) -> str:
    """The session ``session_id`` works for: a child's root parent, else itself."""
    while (child := children.get(session_id)) is not None:
        session_id = child.parent_id
    return session_id
