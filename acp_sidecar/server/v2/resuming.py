"""``session/resume`` over v2: the core's attach (:func:`~acp_sidecar.server.loading.attach`),
replaying the log first when ``replayFrom`` is ``start`` (what v1's ``session/load`` does) and
not at all when it is absent or ``null`` (v1's ``session/resume``); then one ``state_update``
snapshot, then the answer.

Invariants: an unsupported or malformed cursor is ``-32602`` before anything is attached or
sent (never another cursor instead); the snapshot is the last update before the answer, after
every replayed one; the replay goes through the connection's v2 encoder, as the live cards do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_sidecar.bridge.v2.updates import command_of, option_of
from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.protocol.methods import SESSION_RESUME
from acp_sidecar.protocol.v2.prompt import IdleState, RunningState
from acp_sidecar.protocol.v2.session import ReplayFrom, ResumeSessionRequest, ResumeSessionResponse
from acp_sidecar.server.commands.base import advertised
from acp_sidecar.server.commands.table import SESSION_COMMANDS
from acp_sidecar.server.config_options import config_options
from acp_sidecar.server.loading import attach
from acp_sidecar.server.v2.prompting import send_state

if TYPE_CHECKING:
    from acp_sidecar.server.connection import Connection

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


async def session_resume(server: Connection, params: ResumeSessionRequest) -> ResumeSessionResponse:
    """Reattach ``params.session_id``, replaying it if asked (the core's attach, which v1's
    load and resume share), then its state, then the answer with its options and commands in
    their v2 form."""
    replay = wants_replay(params.replay_from)
    session = await attach(
        server,
        SESSION_RESUME,
        params.session_id,
        params.cwd,
        params.mcp_servers,
        params.additional_directories,
        replay=replay,
    )
    # attach refuses a session whose turn runs, but a prompt may start one while attach
    # restores its choices; the snapshot says which, with no stop reason of its own.
    state = IdleState() if session.running is None else RunningState()
    send_state(server, session.session_id, state)
    commands = advertised(SESSION_COMMANDS, server.driver.commands_update(session.tools))
    return ResumeSessionResponse(
        config_options=[option_of(o) for o in config_options(server, session) or ()],
        available_commands=[command_of(c) for c in commands.available_commands],
    )
