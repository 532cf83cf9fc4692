"""``session/prompt`` over v2: answered with ``{messageId}`` once the prompt is inserted (echoed
and logged), the turn running on in the background and reported by ``state_update``:
``running`` when it starts, ``idle`` with its stop reason (and the tokens it used) when it
ends.

Invariant: every turn that sent ``running`` ends with exactly one ``idle``, after every other
update of the turn; a turn that fails before insertion answers an error and sends neither.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from acp_sidecar.bridge.subagents import tokens_used
from acp_sidecar.protocol.errors import INTERNAL_ERROR, AcpError
from acp_sidecar.protocol.v2.prompt import (
    IdleState,
    PromptRequest,
    PromptResponse,
    RunningState,
    TurnError,
    V2StopReason,
)
from acp_sidecar.server.turns import check_prompt_content, run_prompt_turn

if TYPE_CHECKING:
    from acp_sidecar.protocol.content import ContentBlock
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.session import Session
    from acp_sidecar.server.v2.background import SessionStates
    from acp_sidecar.server.v2.cancelling import CallControls

logger = logging.getLogger(__name__)


async def session_prompt(
    states: SessionStates, controls: CallControls, server: Connection, params: PromptRequest
) -> PromptResponse:
    """Start a turn on ``params.prompt`` and answer once its message is inserted. A prompt
    for a session that runs a turn is refused, as over v1."""
    session = server.session(params.session_id)
    states.watch(server, session)  # its jobs listed, its running calls cancellable
    controls.watch(server, session)
    if not params.prompt:
        raise AcpError.invalid_params("Invalid params: prompt: a prompt needs at least one block")
    check_prompt_content(params.prompt, server.driver.prompt_capabilities)
    if session.running is not None:
        raise AcpError.invalid_request(
            f"Invalid request: session {session.session_id} is already running a prompt turn"
        )
    inserted: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    turn = server.spawn_turn(run_turn(states, server, session, params.prompt, inserted))
    try:
        message_id = await asyncio.shield(inserted)
    except asyncio.CancelledError:
        if not inserted.done():  # cancelled before insertion: the turn never starts
            turn.cancel()
        raise
    return PromptResponse(message_id=message_id)


async def run_turn(
    states: SessionStates,
    server: Connection,
    session: Session,
    prompt: list[ContentBlock],
    inserted: asyncio.Future[str],
) -> None:
    """Run the turn, resolving ``inserted`` with the prompt's id (or the failure that kept it
    out), and report its states."""
    session_id = session.session_id

    def accepted(message_id: str) -> None:
        if not inserted.done():
            inserted.set_result(message_id)

    began = False

    def started() -> None:
        nonlocal began
        began = True
        states.send(server, session_id, RunningState())

    error: TurnError | None = None
    stop_reason: V2StopReason
    try:
        stop_reason = await run_prompt_turn(
            server, session, prompt, started=started, accepted=accepted
        )
    except asyncio.CancelledError:
        if inserted.done():  # the connection closes: the turn it started ends
            states.send(server, session_id, IdleState(stop_reason="cancelled"))
        else:
            inserted.cancel()
        raise
    except Exception as exc:
        if not inserted.done():
            inserted.set_exception(exc)
            if began:  # ran, but its prompt never went in: no stop to report
                states.send(server, session_id, IdleState())
            return
        logger.exception("the turn of session %s failed after its prompt", session_id)
        stop_reason = "error"
        error = failure_of(exc)
    if not inserted.done():  # an immediate command ran beside a turn begun meanwhile
        inserted.set_exception(
            AcpError.invalid_request(
                f"Invalid request: session {session_id} is already running a prompt turn"
            )
        )
        return
    usage = tokens_used(session.used)  # unstable: sent to every v2 client (same flag)
    states.send(server, session_id, IdleState(stop_reason=stop_reason, error=error, usage=usage))


def failure_of(exc: Exception) -> TurnError:
    """The error an idle ``error`` reports: a protocol error as it is, anything else as an
    internal error named by its type only (its text may hold what must not be shown)."""
    if isinstance(exc, AcpError):
        return TurnError(code=exc.code, message=exc.message)
    return TurnError(
        code=INTERNAL_ERROR, message=f"Internal error: the turn failed ({type(exc).__name__})"
    )
