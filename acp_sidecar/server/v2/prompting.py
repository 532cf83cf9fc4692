"""``session/prompt`` over v2: answered with ``{messageId}`` once the prompt is inserted (echoed
and logged), the turn running on in the background and reported by ``state_update``:
``running`` when it starts, ``idle`` with its stop reason (and the tokens it used) when it
ends.

A prompt for a session whose turn runs is not refused:
- offered to the turn when its driver takes steering (v1's ``_session/steering``), it is
  answered when the driver takes it at its next step boundary, with the id it is then echoed
  and logged under; one the turn never took is echoed, logged and answered as the turn ends
  (not echoed, but logged and answered all the same, when the turn is torn down: v1's rule);
- otherwise (a driver that does not steer, a session command, immediate ones included, or a
  turn past its last boundary) it waits until the session is idle and its last turn's
  ``idle`` went out, then starts a turn of its own; such prompts start one at a time, in
  arrival order (the session's ``steering`` lock, v1's steers' too); one the running turn
  takes goes in ahead of them, as over v1.
``session/cancel`` cancels the running turn only, as over v1: prompts waiting go on to run, in
order; ``$/cancel_request`` of a prompt not yet inserted withdraws it (``-32800``).

Invariant: every turn that sent ``running`` ends with exactly one ``idle``, after every other
update of the turn and before the next turn's ``running``; a turn that fails before insertion
answers an error and sends neither.
"""

from __future__ import annotations

import asyncio
import logging
from functools import partial
from typing import TYPE_CHECKING

from acp_sidecar.bridge.subagents import tokens_used
from acp_sidecar.protocol.errors import INTERNAL_ERROR, RESOURCE_NOT_FOUND, AcpError
from acp_sidecar.protocol.v2.prompt import (
    IdleState,
    PromptRequest,
    PromptResponse,
    RunningState,
    TurnError,
    V2StopReason,
)
from acp_sidecar.server.turns import check_prompt_content, run_prompt_turn, runs_command

if TYPE_CHECKING:
    from acp_sidecar.protocol.content import ContentBlock
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.session import Session
    from acp_sidecar.server.v2.background import SessionStates
    from acp_sidecar.server.v2.cancelling import CallControls

logger = logging.getLogger(__name__)


class Foreground:
    """Each session's last turn started over one v2 connection, until it has said ``idle``."""

    def __init__(self) -> None:
        self._turns: dict[str, asyncio.Task[None]] = {}

    def track(self, session_id: str, turn: asyncio.Task[None]) -> None:
        """``turn`` is ``session_id``'s foreground turn from now on (forgotten once done)."""
        self._turns[session_id] = turn
        turn.add_done_callback(partial(self._forget, session_id))

    def _forget(self, session_id: str, turn: asyncio.Task[None]) -> None:
        if self._turns.get(session_id) is turn:
            del self._turns[session_id]

    async def settled(self, session: Session) -> None:
        """Return once ``session`` runs no turn and its last one's ``idle`` went out."""
        while True:
            if session.running is not None:
                await session.idle.wait()
                continue
            turn = self._turns.get(session.session_id)
            if turn is None or turn.done():
                return
            await asyncio.wait((turn,))


async def session_prompt(
    states: SessionStates,
    controls: CallControls,
    foreground: Foreground,
    server: Connection,
    params: PromptRequest,
) -> PromptResponse:
    """Insert ``params.prompt`` into the session as the module docstring says; the answer is
    the id it was inserted under."""
    session = server.session(params.session_id)
    states.watch(server, session)  # its jobs listed, its running calls cancellable
    controls.watch(server, session)
    if not params.prompt:
        raise AcpError.invalid_params("Invalid params: prompt: a prompt needs at least one block")
    check_prompt_content(params.prompt, server.driver.prompt_capabilities)
    message_id = await steered(session, params.prompt)
    if message_id is None:
        message_id = await own_turn(states, foreground, server, session, params.prompt)
    return PromptResponse(message_id=message_id)


async def steered(session: Session, prompt: list[ContentBlock]) -> str | None:
    """Offer ``prompt`` to the running turn; the id it went in under (``None``: no turn takes
    it: none runs, or the one running was cancelled and only winds down). Cancelled before the
    driver took it, the prompt is withdrawn; after, it is the turn's, and answered with its id."""
    inbox, running = session.inbox, session.running
    if inbox is None or runs_command(prompt) or (running is not None and running.cancelled):
        return None
    placed: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def place(message_id: str) -> None:
        if not placed.done():
            placed.set_result(message_id)

    if not inbox.offer(prompt, place):
        return None
    try:
        return await asyncio.shield(placed)  # a cancel must not cancel the id, which may come
    except asyncio.CancelledError:
        if inbox.withdraw(place):
            raise
    return await placed  # taken already: the model reads it, so the client gets its id


async def own_turn(
    states: SessionStates,
    foreground: Foreground,
    server: Connection,
    session: Session,
    prompt: list[ContentBlock],
) -> str:
    """Start a turn on ``prompt`` once the session is settled, after those that came first;
    the id it was inserted under."""
    session_id = session.session_id
    async with session.steering:
        await foreground.settled(session)
        if server.sessions.get(session_id) is not session:
            raise AcpError(  # closed while the prompt waited
                RESOURCE_NOT_FOUND, f"Session not found: {session_id}", {"sessionId": session_id}
            )
        inserted: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        turn = server.spawn_turn(run_turn(states, server, session, prompt, inserted))
        foreground.track(session_id, turn)
        try:
            return await asyncio.shield(inserted)
        except asyncio.CancelledError:
            if not inserted.done():  # cancelled before insertion: the turn never starts
                turn.cancel()
            raise


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
            if began:  # it reported running, its prompt never went in: no stop to report
                states.send(server, session_id, IdleState())
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
