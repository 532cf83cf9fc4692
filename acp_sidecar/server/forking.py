"""``session/fork`` (unstable schema): a new session from a stored one's history.

Invariants:
- The parent is only read (:meth:`SessionStore.fork`): its log, claim and lock are untouched,
  whether it is open here, running a turn (the fork copies up to its last completed step) or
  held by another process.
- Every check of the request is made before the fork's log exists; the fork is then attached as
  ``session/resume`` attaches (MCP servers started in the request's ``cwd``); if that fails,
  its log is removed again.
- An unknown parent is ``-32602`` (the unstable schema's rule), not ``-32002``.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING

from acp_sidecar.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, AcpError
from acp_sidecar.protocol.methods import SESSION_FORK
from acp_sidecar.protocol.session import ForkSessionRequest, ForkSessionResponse
from acp_sidecar.server.cwd import check_additional_directories, check_cwd
from acp_sidecar.server.loading import attach, store_failure, store_of
from acp_sidecar.server.state import session_state

if TYPE_CHECKING:
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.store import SessionStore

logger = logging.getLogger(__name__)


async def session_fork(server: Connection, params: ForkSessionRequest) -> ForkSessionResponse:
    """Store a copy of the parent's history as a new session and open it here."""
    store = store_of(server, SESSION_FORK)
    if params.system_prompt is not None:
        raise AcpError.invalid_params(
            "Invalid params: systemPrompt: this agent does not take a system prompt "
            "(it does not advertise sessionCapabilities.systemPrompt)"
        )
    check_cwd(params.cwd, must_exist=True)
    directories = check_additional_directories(params.additional_directories)
    parent_id = params.session_id
    parent = server.sessions.get(parent_id)
    if parent is not None and parent.running is None and parent.recorder is not None:
        parent.recorder.flush()  # a log not created yet is created (nothing else is pending)
    fork_id = uuid.uuid4().hex
    await _store_fork(store, parent_id, fork_id, params.cwd, directories)
    try:
        session = await attach(
            server,
            SESSION_FORK,
            fork_id,
            params.cwd,
            params.mcp_servers,
            params.additional_directories,
            replay=False,
        )
    except BaseException:
        _remove(store, fork_id)
        raise
    state = session_state(server, session)
    return ForkSessionResponse(
        session_id=fork_id, modes=state.modes, config_options=state.config_options
    )


async def _store_fork(
    store: SessionStore, parent_id: str, fork_id: str, cwd: str, directories: tuple[str, ...]
) -> None:
    """Write the fork's log (in a worker thread: the parent's is read whole), or raise the
    request's error."""
    from acp_sidecar.store import SessionNotFoundError, StoreError
    from acp_sidecar.store.forking import fork_title

    def fork() -> None:
        title = fork_title(store.summary(parent_id).title)
        store.fork(parent_id, fork_id, cwd, additional_directories=directories, title=title)

    try:
        await asyncio.to_thread(fork)
    except SessionNotFoundError:
        raise AcpError(
            INVALID_PARAMS,
            f"Invalid params: sessionId: no session {parent_id} to fork",
            {"sessionId": parent_id},
        ) from None
    except StoreError as exc:
        raise store_failure("fork", parent_id, exc) from None
    except OSError as exc:
        raise AcpError(INTERNAL_ERROR, f"Cannot fork session {parent_id}: {exc}") from None


def _remove(store: SessionStore, fork_id: str) -> None:
    """Remove a fork whose attach failed (it was never answered)."""
    from acp_sidecar.store import StoreError

    try:
        store.delete(fork_id)
    except (StoreError, OSError):
        logger.exception("could not remove the unanswered fork %s", fork_id)
