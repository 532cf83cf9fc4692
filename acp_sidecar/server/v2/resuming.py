"""``session/resume`` over v2: the core's ``session/load`` (which replays the log) when
``replayFrom`` is ``start``, its ``session/resume`` (which does not) when it is absent or
``null`` (both attach the session the same way, ``server.loading.attach``); then one
``state_update`` snapshot, then the answer.

Invariants: an unsupported or malformed cursor, or MCP transport, is ``-32602`` before anything
is attached or sent (never another cursor instead); the snapshot is the last update before the
answer, after every replayed one; the replay goes through the connection's v2 encoder, as the
live cards do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_sidecar.bridge.v2.updates import command_of, option_of
from acp_sidecar.protocol import methods as m
from acp_sidecar.protocol import session as v1s
from acp_sidecar.protocol.errors import RESOURCE_NOT_FOUND, AcpError
from acp_sidecar.protocol.v2.prompt import IdleState, RunningState
from acp_sidecar.protocol.v2.session import ReplayFrom, ResumeSessionRequest, ResumeSessionResponse
from acp_sidecar.server.v2.mcp_servers import check_transports

if TYPE_CHECKING:
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.v2.background import SessionStates
    from acp_sidecar.server.v2.handlers import Core

START = "start"
"""The one replay cursor served: the whole retained history."""


def wants_replay(replay_from: ReplayFrom | None) -> bool:
    """Whether ``replay_from`` asks for the whole history (``start``) or none (absent, null);
    any other cursor is ``-32602``, as the schema requires, naming the one served."""
    if replay_from is None:
        return False
    if replay_from.type == START:
        return True
    raise AcpError.invalid_params(
        f"Invalid params: replayFrom: unsupported cursor type {replay_from.type[:40]!r} "
        f"(this agent replays from {START!r} only, or not at all)"
    )


async def session_resume(
    states: SessionStates, core: Core, server: Connection, params: ResumeSessionRequest
) -> ResumeSessionResponse:
    """Reattach ``params.session_id`` through the core's ``session/load`` (replaying it) or
    ``session/resume`` (not), then its state, then the answer with its options and commands
    in their v2 form."""
    replay = wants_replay(params.replay_from)
    if not server.stores_sessions:
        # v2's resume is baseline: without a store no session is stored, so none is found
        # (v1 does not offer the method then), as ``session/load`` says of an unknown id.
        raise AcpError(
            RESOURCE_NOT_FOUND,
            f"Session not found: {params.session_id}",
            {"sessionId": params.session_id},
        )
    servers = params.mcp_servers or []
    check_transports(servers)
    attached: v1s.LoadSessionResponse | v1s.ResumeSessionResponse
    if replay:
        load = v1s.LoadSessionRequest(
            session_id=params.session_id,
            cwd=params.cwd,
            mcp_servers=servers,
            additional_directories=params.additional_directories,
            meta=params.meta,
        )
        attached = await core[m.SESSION_LOAD](server, load)
    else:
        resume = v1s.ResumeSessionRequest(
            session_id=params.session_id,
            cwd=params.cwd,
            mcp_servers=servers,
            additional_directories=params.additional_directories,
            meta=params.meta,
        )
        attached = await core[m.SESSION_RESUME](server, resume)
    session = server.session(params.session_id)
    # The core refuses a session whose turn runs, but a prompt may start one while it
    # restores the session's choices; the snapshot says which, with no stop reason of its own.
    state = IdleState() if session.running is None else RunningState()
    states.watch(server, session)  # the snapshot lists its jobs
    states.send(server, session.session_id, state)
    # Here, not at module level: a v2 start loads this module, not the session's commands.
    from acp_sidecar.server.commands.base import advertised
    from acp_sidecar.server.commands.table import SESSION_COMMANDS

    commands = advertised(SESSION_COMMANDS, server.driver.commands_update(session.tools))
    return ResumeSessionResponse(
        config_options=[option_of(o) for o in attached.config_options or ()],
        available_commands=[command_of(c) for c in commands.available_commands],
    )
