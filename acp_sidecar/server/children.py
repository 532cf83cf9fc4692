"""The child sessions (subagents) a connection knows: each one's parent and, while it works,
its signal. A child is a restricted session: ``session/cancel`` stops it alone, and every
other method naming it is refused (``-32600``)."""

from __future__ import annotations

import attrs

from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.tools.cancel import CancelSignal


@attrs.define
class ChildSession:
    """One child session the client was told of (live, or replayed by ``session/load``)."""

    parent_id: str
    """The session that delegated its job to it."""
    running: CancelSignal | None = None
    """The signal of its work while it runs (``None``: it is idle)."""


def refuse_child(children: dict[str, ChildSession], method: str, session_id: object) -> None:
    """Refuse a request for a child session (the methods the subagents page restricts: every
    method with a ``sessionId`` but ``session/cancel``, a notification)."""
    if type(session_id) is not str:
        return
    child = children.get(session_id)
    if child is not None:
        raise AcpError.invalid_request(
            f"Invalid request: {method} is not permitted on {session_id}, a subagent session "
            f"of {child.parent_id} (only session/cancel is)"
        )
