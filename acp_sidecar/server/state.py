"""What the editor is told of a session's state: the answers of ``session/new``, ``load`` and
``resume`` (:func:`session_state`, the one place they are built), and the updates that follow
an answer (commands, a resumed session's mode and context meter), read when they are sent.
"""

from __future__ import annotations

import logging

import attrs

from acp_sidecar.agent.model.budget import metered
from acp_sidecar.bridge.modes import mode_state
from acp_sidecar.protocol.session import ConfigOption, SessionModeState
from acp_sidecar.protocol.updates import CurrentModeUpdate, UsageUpdate
from acp_sidecar.server.config_options import config_options
from acp_sidecar.server.connection import Connection
from acp_sidecar.server.session import Session
from acp_sidecar.values import Value

logger = logging.getLogger(__name__)


@attrs.frozen(repr=False, eq=False)
class SessionState(Value):
    """What a session-opening answer reports of the session."""

    modes: SessionModeState
    """The modes and the current one."""
    config_options: list[ConfigOption] | None = None
    """The session's configuration options; ``None``: the agent offers none."""


def session_state(connection: Connection, session: Session) -> SessionState:
    """The state ``session/new``, ``load`` and ``resume`` answer with for ``session``."""
    return SessionState(
        modes=mode_state(session.policy.mode), config_options=config_options(connection, session)
    )


def announce_commands(connection: Connection, session_id: str) -> None:
    """Send the session's commands after the answer: the driver's (a console's, for the
    session's own tools when it has them) and the session's own; after ``session/new`` or
    ``session/load``, and again when its tools change."""
    driver = connection.driver  # the one serving now, as the answer said

    async def send() -> None:
        # After the answer: the session's commands are not imported at start.
        from acp_sidecar.server.commands.base import advertised
        from acp_sidecar.server.commands.table import SESSION_COMMANDS

        session = connection.sessions.get(session_id)
        if session is None:
            return  # gone meanwhile (a failed load)
        try:
            own = driver.commands_update(session.tools)
            await connection.send_update(session_id, advertised(SESSION_COMMANDS, own))
            # The tools were built for the commands: their problems are known now.
            connection.tell(session_id, *connection.untold_tool_problems())
        except Exception:
            logger.exception("sending the available commands failed")

    connection.after_answer(send())


def announce_state(
    connection: Connection, session_id: str, meter: UsageUpdate | None, *, replayed: bool
) -> None:
    """Send the session's current mode after the answer (a resume replays nothing), then
    ``meter``: the context meter its log left (the last ``usage_update`` a load replays) with
    the budget's figures now. After a replay, only a meter that adds budget figures is sent."""

    async def send() -> None:
        session = connection.sessions.get(session_id)
        if session is None:
            return  # closed meanwhile
        try:
            if not replayed:
                update = CurrentModeUpdate(current_mode_id=session.policy.mode)
                await connection.send_update(session_id, update)
            shown = None if meter is None else metered(meter, session.budget)
            if shown is not None and (shown is not meter or not replayed):
                await connection.send_update(session_id, shown)
        except Exception:
            logger.exception("sending the session state failed")

    connection.after_answer(send())
