"""A v2 connection's ``state_update``s and the background list they carry: each session's kept
jobs (``bash`` with ``background``, ``/keep``) as ``{type: "terminal", terminalId}``, the
terminal being the card's of the call the job was kept from.

A subagent's job is listed by its root parent, whose job table holds it and whose close stops
it: the stable ``BackgroundWork`` has no subagent variant (the unstable one is not sent) and
no ``state_update`` goes out under a child's id (its state is its ``subagent_update``). Its
announcement, output and exit go to the child's session, where its terminal was drawn (its
id is its call's: parent and children share one job table and one table of running calls,
both keyed by call id).

Invariants: every ``state_update`` goes out through :meth:`SessionStates.send`, with the whole
list (``[]`` included); a job is announced (``terminal_update`` with ``capabilities.cancel``)
before the first snapshot that lists it, and its ``exitStatus`` (capabilities cleared) goes
out before the snapshot that no longer does; its output after its call returned goes out as
``terminal_output_chunk`` between the two.
"""

from __future__ import annotations

import base64
import signal as signals
from functools import partial
from typing import TYPE_CHECKING, Literal

import attrs

from acp_sidecar.protocol.encoding import to_wire
from acp_sidecar.protocol.v2.prompt import (
    BackgroundTerminal,
    IdleState,
    RequiresActionState,
    RunningState,
    StateUpdate,
)
from acp_sidecar.protocol.v2.tool_call import (
    CancelControl,
    TerminalCapabilities,
    TerminalExitStatus,
    TerminalOutputChunk,
    TerminalUpdate,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.session import Session
    from acp_sidecar.tools.builtin.shell.jobs import Job, JobTable

State = Literal["running", "requires_action", "idle"]


@attrs.define
class _Listed:
    """A job in a session's background list."""

    number: int
    """Its number in the session's job table."""
    shown_in: str
    """The session its terminal was announced in (a child's, for a subagent's job)."""
    unfollow: Callable[[], None]
    """Stops its output going out."""


class SessionStates:
    """Each session's foreground state as last reported and its background list, for one v2
    connection."""

    def __init__(self) -> None:
        self._states: dict[str, State] = {}
        self._listed: dict[str, dict[str, _Listed]] = {}
        self._watched: dict[str, tuple[JobTable, Callable[[], None]]] = {}
        """Each watched session's job table (a resumed session has a new one) and what
        stops hearing it."""

    def send(self, server: Connection, session_id: str, state: StateUpdate) -> None:
        """Write ``state`` for ``session_id`` now, with its background list, behind every
        update sent before."""
        background = [BackgroundTerminal(terminal_id=t) for t in self._listed.get(session_id, {})]
        self._states[session_id] = state.state
        state = attrs.evolve(state, background=background)
        server.protocol.notify_update(session_id, to_wire(state))

    def repeat(self, server: Connection, session_id: str) -> None:
        """Send the session's state again (its list changed): no stop reason is repeated."""
        match self._states.get(session_id, "idle"):
            case "running":
                self.send(server, session_id, RunningState())
            case "requires_action":
                self.send(server, session_id, RequiresActionState())
            case "idle":
                self.send(server, session_id, IdleState())

    def terminal(self, session_id: str, terminal_id: str, named_in: str) -> int | None:
        """The job number of a terminal ``session_id`` lists, named in that session or the
        one its terminal is in (``None``: not listed, or exited)."""
        listed = self._listed.get(session_id, {}).get(terminal_id)
        if listed is None or named_in not in (session_id, listed.shown_in):
            return None
        return listed.number

    def watch(self, server: Connection, session: Session) -> None:
        """List ``session``'s jobs from now on (once per job table: a session closed and
        resumed is watched anew)."""
        session_id = session.session_id
        jobs = server.jobs_of(session)
        watched = self._watched.get(session_id)
        if watched is not None and watched[0] is jobs:
            return
        self.forget(session_id)
        stop = jobs.listen(
            partial(self._kept, server, session), partial(self._exited, server, session_id)
        )
        self._watched[session_id] = (jobs, stop)

    def forget(self, session_id: str) -> None:
        """Stop hearing ``session_id``'s jobs and drop its state (the session closed)."""
        watched = self._watched.pop(session_id, None)
        if watched is not None:
            watched[1]()
        for listed in self._listed.pop(session_id, {}).values():
            listed.unfollow()
        self._states.pop(session_id, None)

    def _kept(self, server: Connection, session: Session, job: Job) -> None:
        terminal_id = job.call_id
        if terminal_id is None:  # kept outside a call's card: it has no terminal to name
            return
        session_id = session.session_id
        # Kept while its call runs: the call knows the session its card (and terminal) is in.
        shown_in = session.calls.session_of(terminal_id) or session_id
        cancel = TerminalCapabilities(cancel=CancelControl())
        announced = TerminalUpdate(terminal_id=terminal_id, capabilities=cancel)
        server.protocol.notify_update(shown_in, to_wire(announced))
        unfollow = job.running.follow(partial(_output, server, shown_in, terminal_id))
        listed = _Listed(job.number, shown_in, unfollow)
        self._listed.setdefault(session_id, {})[terminal_id] = listed
        self.repeat(server, session_id)

    def _exited(
        self, server: Connection, session_id: str, job: Job, returncode: int | None
    ) -> None:
        terminal_id = job.call_id
        listed = self._listed.get(session_id, {}).pop(terminal_id or "", None)
        if terminal_id is None or listed is None:
            return
        listed.unfollow()
        ended = TerminalUpdate(
            terminal_id=terminal_id, exit_status=exit_status(returncode), capabilities=None
        )
        server.protocol.notify_update(listed.shown_in, to_wire(ended))
        self.repeat(server, session_id)


def exit_status(returncode: int | None) -> TerminalExitStatus:
    """How a shell ended: its exit code, or the name of the signal that killed it."""
    if returncode is None:
        return TerminalExitStatus()
    if returncode < 0:
        try:
            return TerminalExitStatus(signal=signals.Signals(-returncode).name)
        except ValueError:
            return TerminalExitStatus()
    return TerminalExitStatus(exit_code=returncode)


async def _output(server: Connection, session_id: str, terminal_id: str, text: str) -> None:
    data = base64.b64encode(text.encode("utf-8")).decode("ascii")
    chunk = TerminalOutputChunk(terminal_id=terminal_id, data=data)
    server.protocol.notify_update(session_id, to_wire(chunk))
    wire = server.protocol.wire
    if wire is not None:
        await wire.drain()
