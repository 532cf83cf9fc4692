"""``session/resume``, ``session/close`` and ``session/delete``.

Invariants:
- ``resume`` makes ``load``'s checks (:func:`~acp_sidecar.server.loading.attach`) and sends
  no history; its commands and current mode follow the answer.
- ``close`` takes the session out of :attr:`Connection.sessions` first, cancels its turn and
  waits for it (bounded), then stops its kept jobs and its MCP servers and closes its log: it
  stays resumable.
- ``delete`` closes a session open here, then removes its log under its claim and lock; a
  session another process holds is refused and left whole.
- Close, delete and attach of one session take turns (:meth:`HeldLogs.loading`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from acp_sidecar.protocol.errors import INTERNAL_ERROR, AcpError
from acp_sidecar.protocol.methods import SESSION_CLOSE, SESSION_DELETE, SESSION_RESUME
from acp_sidecar.protocol.session import (
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
)
from acp_sidecar.server.loading import attach, not_found, store_of
from acp_sidecar.server.messages import shown_id
from acp_sidecar.server.state import session_state

if TYPE_CHECKING:
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.session import Session

logger = logging.getLogger(__name__)

CLOSE_MARGIN = 1.0
"""Seconds beyond the cancel grace that ``session/close`` waits for a cancelled turn to end:
the turn stops its driver after the grace; this covers that stop and the turn's last records."""


async def session_resume(server: Connection, params: ResumeSessionRequest) -> ResumeSessionResponse:
    """Reattach to a stored session without replaying it; it continues in the same log."""
    session = await attach(
        server,
        SESSION_RESUME,
        params.session_id,
        params.cwd,
        params.mcp_servers,
        params.additional_directories,
        replay=False,
    )
    state = session_state(server, session)
    return ResumeSessionResponse(modes=state.modes, config_options=state.config_options)


async def session_close(server: Connection, params: CloseSessionRequest) -> CloseSessionResponse:
    """Cancel the session's work and free what it holds; it stays stored.

    A session that is not open on this connection but is stored is answered with success,
    doing nothing: closing is idempotent — a client closing twice, or closing a thread the
    sidecar was restarted under, has what it asked for (nothing here holds the session), and
    an error would only make it retry or show a failure for no reason. An id that names no
    session at all (neither open here nor stored) is ``-32002``, as for ``session/load``: it
    is most likely a mistake worth reporting. Closing never touches another process's hold.
    """
    session_id = params.session_id
    async with server.held_logs.loading(session_id):
        session = server.sessions.get(session_id)
        if session is None:
            store = server.store
            if store is not None and store.exists(session_id):
                return CloseSessionResponse()
            raise not_found(session_id)
        await close_session(server, session)
    return CloseSessionResponse()


async def session_delete(server: Connection, params: DeleteSessionRequest) -> DeleteSessionResponse:
    """Remove a stored session: it leaves ``session/list`` and can no longer be loaded.

    One open here is closed first; one another process holds is refused (its log is left
    whole). An unknown id is ``-32002``.
    """
    from acp_sidecar.store import SessionLockedError, SessionNotFoundError, StoreError

    store = store_of(server, SESSION_DELETE)
    session_id = params.session_id
    async with server.held_logs.loading(session_id):
        session = server.sessions.get(session_id)
        if session is not None:
            await close_session(server, session)
        try:
            store.delete(session_id)
        except SessionNotFoundError:
            raise not_found(session_id) from None
        except SessionLockedError:
            raise AcpError(
                INTERNAL_ERROR,
                f"Cannot delete session {session_id}: it is open in another acp-sidecar "
                "process; close it there first",
            ) from None
        except StoreError as exc:
            raise AcpError(INTERNAL_ERROR, f"Cannot delete session {session_id}: {exc}") from None
        except OSError as exc:
            raise AcpError(
                INTERNAL_ERROR,
                f"Cannot delete session {session_id}: its log could not be removed "
                f"({exc.strerror or exc})",
            ) from None
    return DeleteSessionResponse()


async def close_session(server: Connection, session: Session) -> None:
    """Close an open session (see the module invariants); the caller holds its turn."""
    session_id = session.session_id
    server.sessions.pop(session_id, None)
    if session.cancel(SESSION_CLOSE):
        try:
            await asyncio.wait_for(session.idle.wait(), server.cancel_grace + CLOSE_MARGIN)
        except TimeoutError:
            logger.warning(
                "the turn of closed session %s did not end in time", shown_id(session_id)
            )
    if session.jobs is not None:
        await session.jobs.close()
    servers, session.mcp, session.tools = session.mcp, None, None
    if servers is not None:
        await servers.aclose()
    recorder, session.recorder = session.recorder, None
    if recorder is not None:
        recorder.flush()  # a log not created yet is created: the session stays resumable
        recorder.close()
