"""``session/close`` and ``session/delete`` over v2: the core's (same params and answers), then
the connection's v2 bookkeeping of the session dropped.

Invariant: once a session is no longer open here, nothing this connection kept for it (its
state, its background list, the listeners on its job table and running calls) outlives it,
so a later ``session/resume`` of the same id is watched anew.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp_sidecar.protocol import methods as m

if TYPE_CHECKING:
    from acp_sidecar.protocol.session import CloseSessionRequest, DeleteSessionRequest
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.v2.background import SessionStates
    from acp_sidecar.server.v2.cancelling import CallControls
    from acp_sidecar.server.v2.handlers import Core


async def session_close(
    states: SessionStates,
    controls: CallControls,
    core: Core,
    server: Connection,
    params: CloseSessionRequest,
) -> Any:
    """The core's ``session/close`` (its jobs' exits and last snapshot go out first)."""
    try:
        return await core[m.SESSION_CLOSE](server, params)
    finally:
        _forget(states, controls, server, params.session_id)


async def session_delete(
    states: SessionStates,
    controls: CallControls,
    core: Core,
    server: Connection,
    params: DeleteSessionRequest,
) -> Any:
    """The core's ``session/delete`` (which closes the session when it is open here)."""
    try:
        return await core[m.SESSION_DELETE](server, params)
    finally:
        _forget(states, controls, server, params.session_id)


def _forget(
    states: SessionStates, controls: CallControls, server: Connection, session_id: str
) -> None:
    if session_id not in server.sessions:
        states.forget(session_id)
        controls.forget(session_id)
