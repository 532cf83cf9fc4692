"""Delegating a job to a child conversation (a subagent): what a turn's driver hands over and
what it gets back. The server runs the child (:mod:`acp_sidecar.server.subagents`); a driver
only sees :data:`Delegate` on its :class:`~acp_sidecar.agent.driver.Turn`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeAlias

import attrs

from acp_sidecar.protocol.session import StopReason
from acp_sidecar.store.records import UsageRecord
from acp_sidecar.tools.cancel import CancelSignal


@attrs.frozen
class Delegation:
    """One job for a child conversation: self-contained, since the child starts with a fresh
    context."""

    call_id: str
    """The call that delegates it (the child's session id derives from it)."""
    description: str
    """A short title, shown to the user as the child's."""
    prompt: str
    """The whole job, the child's first and only prompt."""
    write: bool
    """Whether the child may be offered the tools that change things (when the parent's
    mode allows them; each call is judged as the parent's are)."""
    progress: Callable[[str], Awaitable[None]]
    """Shows the child's current step on the delegating call's card (clients that do not
    take child sessions)."""
    signal: CancelSignal | None = None
    """The delegating call's signal: when it fires, the child stops."""


@attrs.frozen
class Delegated:
    """How a child conversation ended."""

    session_id: str
    """The child's session id."""
    stop_reason: StopReason
    """Why its turn ended."""
    answer: str | None
    """Its final answer (the text of its last message), ``None`` when it gave none."""
    explained: str | None = None
    """What the sidecar last told about the child (why a request failed), if anything."""
    usage: tuple[UsageRecord, ...] = ()
    """What its model requests used, in order (the last one's cost is the child's total)."""


Delegate: TypeAlias = Callable[[Delegation], Awaitable[Delegated]]
"""Runs one job in a child conversation, to its end."""
