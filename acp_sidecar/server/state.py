"""A session's state as the editor is given it: in the answers of ``session/new``,
``session/load`` and ``session/resume``, and in the updates that follow a resume.

Invariants:
- :func:`session_state` is the one place these answers' state is built: every answer carries
  the same ``modes`` (and, when the agent has them, the same ``configOptions``).
- After a ``session/resume`` answer (no replay ran, so nothing else told the editor), the
  session's current mode follows it (:func:`announce_state`), read when it is sent.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

import attrs

from acp_sidecar.bridge.modes import mode_state
from acp_sidecar.protocol.session import SessionConfigOption, SessionModeState
from acp_sidecar.protocol.updates import CurrentModeUpdate

if TYPE_CHECKING:
    from acp_sidecar.server.app import AcpServer
    from acp_sidecar.server.session import Session

logger = logging.getLogger(__name__)


@attrs.frozen
class SessionState:
    """What a session-opening answer reports of the session."""

    modes: SessionModeState
    """The modes and the current one."""
    config_options: list[SessionConfigOption] | None = None
    """The session's configuration options; ``None``: the agent offers none."""


def session_state(server: AcpServer, session: Session) -> SessionState:
    """The state ``session/new``, ``load`` and ``resume`` answer with for ``session``."""
    from acp_sidecar.server.config_options import config_options

    return SessionState(
        modes=mode_state(session.policy.mode), config_options=config_options(server, session)
    )


def announce_state(server: AcpServer, session_id: str) -> None:
    """Send the session's current mode after the answer being written (as
    :meth:`~acp_sidecar.server.app.AcpServer.announce_commands` does for commands)."""

    async def send() -> None:
        session = server.sessions.get(session_id)
        if session is None:
            return  # closed meanwhile
        try:
            await server.send_update(
                session_id, CurrentModeUpdate(current_mode_id=session.policy.mode)
            )
        except Exception:
            logger.exception("sending the session state failed")

    asyncio.get_running_loop().call_soon(server.spawn, send())
