"""v2's per-item cancels: ``tool_call/cancel`` stops one running call (the core's
:class:`~acp_sidecar.tools.cancel.RunningCalls`) while its turn goes on, ``terminal/cancel``
one listed job (the job table's ``kill``); and :class:`CallControls`, which advertises a
running call as cancellable and clears that in its final patch, ``cancelled`` when it was.

Invariants: a card advertises ``capabilities.cancel`` only from the moment its call runs
under its own signal, in the session the card is drawn in (a subagent's, for a child's call),
and its final ``tool_call_update`` clears it (``null``); a cancel names an item that can
still be stopped, in a session that shows it, or it is ``-32602`` and nothing is stopped.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from acp_sidecar import protocol as v1
from acp_sidecar.bridge.v2.cards import card_patched
from acp_sidecar.bridge.v2.updates import Encoded, encode_update
from acp_sidecar.protocol.encoding import to_wire
from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.protocol.v2.cancel import (
    CancelTerminalRequest,
    CancelTerminalResponse,
    CancelToolCallRequest,
    CancelToolCallResponse,
)
from acp_sidecar.protocol.v2.tool_call import CancelControl, ToolCallCapabilities, ToolCallUpdate
from acp_sidecar.server.children import root_of

if TYPE_CHECKING:
    from collections.abc import Callable

    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.session import Session
    from acp_sidecar.server.v2.background import SessionStates
    from acp_sidecar.tools.builtin.shell.jobs import JobTable
    from acp_sidecar.tools.cancel import RunningCalls

TOOL_CALL_CANCEL = "tool_call/cancel"
"""The reason a call cancelled alone is given (its tool may report it)."""


class CallControls:
    """What one v2 connection's clients may do to the cards of running calls; its
    :meth:`encode` is the connection's update encoder."""

    def __init__(self) -> None:
        self._closing: dict[str, bool] = {}
        """Calls whose next patch is their final one, and whether each was cancelled alone
        (by call id alone: the encoder is not told the session; two sessions would have to
        close calls of the same id at the same moment to be confused)."""
        self._watched: dict[str, tuple[RunningCalls, Callable[[], None]]] = {}
        """Each watched session's running calls (a resumed session has new ones) and what
        stops hearing them."""

    def watch(self, server: Connection, session: Session) -> None:
        """Advertise ``session``'s running calls from now on (once per :class:`RunningCalls`:
        a session closed and resumed is watched anew)."""
        watched = self._watched.get(session.session_id)
        if watched is not None and watched[0] is session.calls:
            return
        self.forget(session.session_id)
        stop = session.calls.listen(partial(_started, server, session), self._close)
        self._watched[session.session_id] = (session.calls, stop)

    def forget(self, session_id: str) -> None:
        """Stop hearing ``session_id``'s calls (the session closed)."""
        watched = self._watched.pop(session_id, None)
        if watched is not None:
            watched[1]()

    def _close(self, call_id: str, alone: bool) -> None:
        self._closing[call_id] = alone

    def encode(self, update: v1.SessionUpdate) -> Encoded:
        """``update`` in v2 (:func:`~acp_sidecar.bridge.v2.updates.encode_update`), a running
        call's final patch with its cancel cleared."""
        if type(update) is v1.ToolCallProgress and update.tool_call_id in self._closing:
            alone = self._closing.pop(update.tool_call_id)
            cancelled = alone and update.status == "failed"  # not if it finished first
            return card_patched(
                update, status="cancelled" if cancelled else update.status, capabilities=None
            )
        return encode_update(update)


def _started(server: Connection, session: Session, call_id: str) -> None:
    session_id = session.calls.session_of(call_id) or session.session_id
    cancel = ToolCallCapabilities(cancel=CancelControl())
    advertised = ToolCallUpdate(tool_call_id=call_id, capabilities=cancel)
    server.protocol.notify_update(session_id, to_wire(advertised))  # where its card is


async def tool_call_cancel(
    server: Connection, params: CancelToolCallRequest
) -> CancelToolCallResponse:
    """Stop one running call alone, named by the session its card is in (a child's calls
    run in its root parent's table); its final patch confirms it."""
    session = server.session(root_of(server.children, params.session_id))
    call_id = params.tool_call_id
    drawn = session.calls.session_of(call_id) == params.session_id
    if not drawn or not session.calls.cancel(call_id, TOOL_CALL_CANCEL):
        raise AcpError.invalid_params(
            f"Invalid params: toolCallId: tool call {call_id} is not running in session "
            f"{params.session_id} (unknown, or final)"
        )
    return CancelToolCallResponse()


async def terminal_cancel(
    states: SessionStates, server: Connection, params: CancelTerminalRequest
) -> CancelTerminalResponse:
    """Stop one listed job (SIGTERM, then SIGKILL), named by the session that lists it or
    the one its terminal is in (a child's); its ``exitStatus`` confirms it."""
    session = server.session(root_of(server.children, params.session_id))
    number = states.terminal(session.session_id, params.terminal_id, params.session_id)
    jobs = session.jobs
    if number is None or jobs is None or jobs.get(number) is None:
        raise AcpError.invalid_params(
            f"Invalid params: terminalId: terminal {params.terminal_id} is not running in "
            f"session {params.session_id} (unknown, or it exited)"
        )
    server.after_answer(_kill(jobs, number))
    return CancelTerminalResponse()


async def _kill(jobs: JobTable, number: int) -> None:
    await jobs.kill(number)
