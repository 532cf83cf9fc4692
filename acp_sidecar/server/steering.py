"""``_session/steering``: a prompt sent while a turn may be running.

Invariants:
- A prompt offered to a running turn whose driver takes steering (its inbox open) is answered
  ``injected`` at once; the driver takes it at its next step boundary (after the model's
  response or the tool batch under way, never inside one), and only then is it echoed as a
  ``user_message_chunk`` under an id of its own and logged, so the log and the echo keep the
  order the model read things in. What the turn never took is echoed and logged when it ends.
- Otherwise (no turn, a turn whose driver does not steer, one already past its last
  boundary, or a prompt that runs a session command) the prompt waits for the session to be
  idle, then starts a turn of its own, answered ``startedNewTurn`` once it runs -- or
  ``promptRequired`` at once when idle if the request's ``_meta.steering.idleBehavior``
  asked for it. Steers of one session that start turns are served one at a time, in arrival
  order (no two start rival turns).
- An immediate session command (``/keep``) steered into a running turn runs at once beside
  it, answered ``injected``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from acp_sidecar.protocol.content import ContentBlock
from acp_sidecar.protocol.steering import SessionSteeringRequest, SessionSteeringResponse

if TYPE_CHECKING:
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.session import Session

logger = logging.getLogger(__name__)


async def steer(
    server: Connection, session: Session, params: SessionSteeringRequest
) -> SessionSteeringResponse:
    """Serve one steer of ``session`` as the module docstring says."""
    from acp_sidecar.server.turns import run_beside_turn, runs_command

    if await run_beside_turn(server, session, params.prompt):
        return SessionSteeringResponse(outcome="injected")
    inbox = session.inbox
    if inbox is not None and not runs_command(params.prompt) and inbox.offer(params.prompt):
        return SessionSteeringResponse(outcome="injected")
    async with session.steering:
        while session.running is not None:
            await session.idle.wait()
        if server.sessions.get(session.session_id) is not session:
            return SessionSteeringResponse(outcome="failed")  # closed meanwhile
        if params.prompt_required:
            return SessionSteeringResponse(outcome="promptRequired")
        loop = asyncio.get_running_loop()
        started: asyncio.Future[None] = loop.create_future()
        turn = server.spawn_turn(_steered_turn(server, session, params.prompt, started))
        waited = await asyncio.wait((started, turn), return_when=asyncio.FIRST_COMPLETED)
        if started in waited[0]:
            return SessionSteeringResponse(outcome="startedNewTurn")
        started.cancel()
        return SessionSteeringResponse(outcome="failed")


async def _steered_turn(
    server: Connection,
    session: Session,
    prompt: list[ContentBlock],
    started: asyncio.Future[None],
) -> None:
    """Run the turn a steer started, as ``session/prompt`` would (nobody is answered)."""
    from acp_sidecar.server.turns import run_prompt_turn

    def on_start() -> None:
        if not started.done():
            started.set_result(None)

    try:
        stop_reason = await run_prompt_turn(server, session, prompt, started=on_start)
    except asyncio.CancelledError:
        raise
    except Exception:
        logger.exception("the turn steering started in %s failed", session.session_id)
        return
    logger.debug("the steered turn of %s ended: %s", session.session_id, stop_reason)
