"""``session/load`` and ``session/list``: stored sessions come back to the editor.

Invariants:
- Every check that can fail is made before the first update is sent: the session exists, its
  log is a regular file (not a link) whose header names it, every record's schema version is
  one we read (the whole log is checked), its cwd is the one asked for, and this process can
  take its lock and write the log (another sidecar holding it, or a log this process may not
  write, gets a clear error).
- Every failure gives the log's lock back: a failed load leaves the session loadable.
- Loads of different sessions at once are bounded (:meth:`HeldLogs.replaying`): each holds a
  writer's and a reader's descriptor until it answers, so the rest wait their turn rather
  than exhaust the descriptor limit.
- Two loads of one session at once: the second waits for the first, then replays from the
  session the first loaded (both succeed).
- The whole history is replayed as ``session/update`` notifications before ``session/load``
  answers, and ends with a ``session_info_update``: the title and ``updatedAt`` that
  ``session/list`` shows for it (the title is left out before the first prompt). Afterwards
  the session continues, appending to the same log. Its ``available_commands_update``
  follows the answer, as after ``session/new``.
- The ``mcpServers`` of the request are started before the replay (so a present server's
  calls replay with its tools' cards; an absent one's as generic cards); a session loaded
  again has its previous servers stopped first (replaced); a failed load stops the ones it
  started.
- A session is stored from ``session/new`` on, so one that was never prompted loads too;
  ``session/list`` leaves such sessions out until their first prompt.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from acp_sidecar.bridge.modes import SessionPolicy, mode_state
from acp_sidecar.protocol.errors import INTERNAL_ERROR, RESOURCE_NOT_FOUND, AcpError
from acp_sidecar.protocol.session import (
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    LoadSessionResponse,
    SessionInfo,
)
from acp_sidecar.protocol.updates import CurrentModeUpdate
from acp_sidecar.server.cwd import check_cwd
from acp_sidecar.server.notices import UserMessage
from acp_sidecar.server.session import Session

if TYPE_CHECKING:
    from acp_sidecar.server.app import AcpServer
    from acp_sidecar.server.mcp_session import SessionServers
    from acp_sidecar.store import SessionStore, SessionWriter


def _store(server: AcpServer, method: str) -> SessionStore:
    if server.store is None:
        raise AcpError.method_not_found(method)
    return server.store


def _not_found(session_id: str) -> AcpError:
    return AcpError(
        RESOURCE_NOT_FOUND, f"Session not found: {session_id}", {"sessionId": session_id}
    )


async def session_load(server: AcpServer, params: LoadSessionRequest) -> LoadSessionResponse:
    """Replay a stored session's history, then continue it."""
    store = _store(server, "session/load")
    if not os.path.isabs(params.cwd):
        raise AcpError.invalid_params(
            f"Invalid params: cwd: must be an absolute path, got {params.cwd!r}"
        )
    # A second load of one session waits for the first; loads at once are bounded (two fds each).
    async with server.held_logs.loading(params.session_id), server.held_logs.replaying():
        return await _load(server, store, params)


async def _load(
    server: AcpServer, store: SessionStore, params: LoadSessionRequest
) -> LoadSessionResponse:
    from acp_sidecar.server.recording import SessionRecorder
    from acp_sidecar.server.replay import replay_updates, session_info
    from acp_sidecar.store import (
        SessionLockedError,
        SessionNotFoundError,
        StoreError,
        UnsupportedVersionError,
    )

    session_id = params.session_id
    check_cwd(params.cwd, must_exist=False)
    loaded = server.sessions.get(session_id)
    if loaded is not None and loaded.running is not None:
        raise AcpError.invalid_request(
            f"Invalid request: session {session_id} is running a prompt turn"
        )
    if loaded is not None and loaded.recorder is not None:
        loaded.recorder.flush()  # its log exists (a new one is created meanwhile) and is whole
    if loaded is not None and loaded.mcp is not None:
        # Loaded again: the servers this request names replace the ones it had.
        replaced, loaded.mcp, loaded.tools = loaded.mcp, None, None
        await replaced.aclose()
    writer: SessionWriter | None = None
    servers: SessionServers | None = None
    loaded_now = False
    try:
        try:
            if loaded is None:
                writer = store.reopen(session_id)  # the lock first: nothing is sent if it is held
            with store.open_log(session_id) as log:
                header = log.header
                if os.path.normpath(header.cwd) != os.path.normpath(params.cwd):
                    raise AcpError.invalid_params(
                        f"Invalid params: cwd: session {session_id} works in {header.cwd}, "
                        f"not {params.cwd}"
                    )
                log.check_versions()  # a newer record anywhere refuses the log before any update
                session = loaded or Session(session_id=session_id, cwd=header.cwd)
                if params.mcp_servers:
                    # Started before the replay, so stored calls of a server that is there
                    # draw the cards they drew live; a server that is absent leaves its calls
                    # to the generic card, as for any tool no longer registered.
                    from acp_sidecar.server.mcp_session import start_session_servers

                    servers = await start_session_servers(server, session, params.mcp_servers)
                ctx = server.card_context(header.cwd)
                lookup = (session.tools or server.tools.registry).get
                mode = None
                for update in replay_updates(header, log, lookup, ctx):
                    if isinstance(update, CurrentModeUpdate):
                        mode = update.current_mode_id
                    await server.send_update(session_id, update)
                summary = store.summary(session_id)
                session.prompted, session.title = summary.prompted, summary.title
                await server.send_update(
                    session_id, session_info(summary.title, summary.updated_at)
                )
        except SessionNotFoundError:
            raise _not_found(session_id) from None
        except SessionLockedError as exc:
            raise AcpError(INTERNAL_ERROR, f"Cannot load session {session_id}: {exc}") from None
        except UnsupportedVersionError as exc:
            raise AcpError(
                INTERNAL_ERROR,
                f"Cannot load session {session_id}: {exc}",
                {"found": exc.found, "supported": exc.supported},
            ) from None
        except StoreError as exc:
            raise AcpError(INTERNAL_ERROR, f"Cannot load session {session_id}: {exc}") from None
        except OSError as exc:
            raise AcpError(
                INTERNAL_ERROR,
                f"Cannot load session {session_id}: its log could not be read "
                f"({exc.strerror or exc})",
            ) from None
        if loaded is None:
            assert writer is not None
            from acp_sidecar.server.replay import known_mode

            session.policy = SessionPolicy(mode=known_mode(mode))
            session.recorder = SessionRecorder(
                server.require_store,
                session_id,
                header.cwd,
                session.policy.mode,
                held=server.held_logs,
                tell=lambda text: server.inform(session_id, UserMessage("warning", text)),
                writer=writer,
            )
            server.sessions[session_id] = session
            loaded = session
        loaded.mcp = servers
        loaded_now = True
    finally:
        if not loaded_now:
            if writer is not None:  # every failure gives the lock back
                writer.close()
            if servers is not None:  # and the servers it started stop
                if loaded is not None:
                    loaded.tools = None
                await servers.aclose()
    server.announce_commands(session_id)  # a reloaded session keeps its slash commands
    if servers is not None:
        servers.release()  # problems starting them, told after the answer and commands
    return LoadSessionResponse(modes=mode_state(loaded.policy.mode))


async def session_list(server: AcpServer, params: ListSessionsRequest) -> ListSessionsResponse:
    """Stored sessions, newest first, optionally only those for ``cwd``; cursor paging."""
    from acp_sidecar.store import InvalidCursorError, format_timestamp

    store = _store(server, "session/list")
    try:
        page = store.list(cwd=params.cwd, cursor=params.cursor)
    except InvalidCursorError as exc:
        raise AcpError.invalid_params(f"Invalid params: cursor: {exc}") from None
    return ListSessionsResponse(
        sessions=[
            SessionInfo(
                session_id=summary.session_id,
                cwd=summary.cwd,
                title=summary.title,
                updated_at=format_timestamp(summary.updated_at),
            )
            for summary in page.sessions
        ],
        next_cursor=page.next_cursor,
    )
