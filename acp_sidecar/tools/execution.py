"""The values one tool call is made of: the caller's input and the pipeline-owned execution.

The registry snapshots the caller's :class:`ToolExecutionInput` into a :class:`ToolExecution`
whose fields are never reassigned but ``signal``, and that only while the execute wrappers run
(the registry's ``_open_signal`` … ``_seal`` drive that window). :class:`ToolExecutionToken` is
identity only. What a call ends with: :mod:`acp_sidecar.tools.result`.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING, Final, Protocol

import attrs

from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.json_values import FrozenJson

if TYPE_CHECKING:
    from acp_sidecar.tools.context import ToolContext

logger = logging.getLogger(__name__)


class ProgressSink(Protocol):
    """Where a running call's progress goes (the bridge's live emitter implements it).

    Both methods may wait — that is the back-pressure that keeps memory bounded when a tool
    writes faster than the editor reads.
    """

    async def text(self, text: str) -> None:
        """The call's current progress message (replaces the previous one)."""

    async def output(self, data: str) -> None:
        """A chunk of terminal output (appended to what came before)."""


class ToolExecutionToken:
    """An opaque identity shared with nested calls as their ``parent``; nothing else."""

    # ``__weakref__`` lets observers key weak maps by it; it is a read-only slot.
    __slots__ = ("__weakref__",)

    def __repr__(self) -> str:
        return f"<ToolExecutionToken {id(self):#x}>"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a ToolExecutionToken has no attributes")


@attrs.frozen
class ToolCallRecord:
    """A tool call as it was made: enough to redraw its pending card and tell the model.

    The session log stores this value for a call, and the live path and replay both draw the
    call's pending card from it.
    """

    call_id: str
    """The call's id, unique within the session (the ACP ``toolCallId``)."""
    name: str
    """The tool's registered name."""
    arguments: FrozenJson
    """The call's arguments (``None`` when they were not lossless JSON)."""
    title: str | None = attrs.field(default=None, kw_only=True, eq=False)
    """The title its card was first drawn with, as the editor showed it; kept for a replay
    that has not the tool any more (an MCP server that is not running, a plugin removed),
    which draws a generic card. ``None``: not kept (a log written before it was). It says how
    the call was shown, not what was called: not part of equality."""
    kind: str | None = attrs.field(default=None, kw_only=True, eq=False)
    """The ACP kind its card was first drawn with (see :attr:`title`)."""
    at: datetime | None = attrs.field(default=None, kw_only=True, eq=False)
    """When the call was recorded (aware, UTC), as every record of a session log says;
    ``None`` until the log's writer stamps it, or when the log did not say. Not part of
    equality: it says when, not what."""


@attrs.define
class ToolExecutionInput:
    """What a caller (the agent loop, the console) asks the registry to run."""

    call_id: str
    """The call's id, unique within the session (it becomes the ACP ``toolCallId``)."""
    name: str
    """The registered tool's name."""
    arguments: object
    """Parsed JSON arguments; must be lossless JSON (checked before any policy)."""
    agent: object | None = None
    """The agent on whose behalf the call runs (set by the agent loop; opaque here)."""
    context: ToolContext | None = None
    """The session the call runs in: workspace, editor files, permission system (see
    :mod:`acp_sidecar.tools.context`); ``None`` outside a session."""
    parent: ToolExecutionToken | None = None
    """The token of an enclosing execution, for nested dispatches.

    Only the opaque token: the registry refuses anything else (a live execution above all).
    """
    signal: CancelSignal | None = None
    """Cancels the call (``session/cancel``)."""
    progress: ProgressSink | None = None
    """Receives the call's progress while it runs (the bridge streams it to the editor)."""


_SIGNAL_LOCKED: Final = 0
_SIGNAL_OPEN: Final = 1
_SEALED: Final = 2


class ToolExecution:
    """The pipeline-owned snapshot of one call that every listener, guard and tool sees."""

    # ``__weakref__`` makes the finished execution a weak-map key (the spec's promise to
    # result observers); the slot itself cannot be assigned, so nothing becomes writable.
    __slots__ = (
        "__weakref__",
        "_agent",
        "_arguments",
        "_call_id",
        "_context",
        "_name",
        "_parent",
        "_progress",
        "_signal",
        "_state",
        "_token",
    )
    _agent: object | None
    _arguments: FrozenJson
    _call_id: str
    _context: ToolContext | None
    _name: str
    _parent: ToolExecutionToken | None
    _progress: ProgressSink | None
    _signal: CancelSignal | None
    _state: int
    _token: ToolExecutionToken

    def __init__(
        self,
        *,
        call_id: str,
        name: str,
        arguments: FrozenJson,
        agent: object | None,
        parent: ToolExecutionToken | None,
        signal: CancelSignal | None,
        progress: ProgressSink | None = None,
        context: ToolContext | None = None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "_token", ToolExecutionToken())
        set_(self, "_call_id", call_id)
        set_(self, "_name", name)
        set_(self, "_arguments", arguments)
        set_(self, "_agent", agent)
        set_(self, "_context", context)
        set_(self, "_parent", parent)
        set_(self, "_signal", signal)
        set_(self, "_progress", progress)
        set_(self, "_state", _SIGNAL_LOCKED)

    def __repr__(self) -> str:
        return f"<ToolExecution {self._name} call_id={self._call_id!r}>"

    def __setattr__(self, name: str, value: object) -> None:
        if name == "signal":
            object.__setattr__(self, name, value)  # the property's setter decides
            return
        raise AttributeError(f"ToolExecution.{name} is read-only")

    def __delattr__(self, name: str) -> None:
        if name == "signal":
            object.__delattr__(self, name)
            return
        raise AttributeError(f"ToolExecution.{name} is read-only")

    @property
    def token(self) -> ToolExecutionToken:
        """The registry-assigned identity of this call."""
        return self._token

    @property
    def call_id(self) -> str:
        """The caller's id for this call."""
        return self._call_id

    @property
    def name(self) -> str:
        """The tool's name."""
        return self._name

    @property
    def arguments(self) -> FrozenJson:
        """The deep-frozen arguments as the caller sent them."""
        return self._arguments

    @property
    def agent(self) -> object | None:
        """The agent on whose behalf the call runs."""
        return self._agent

    @property
    def context(self) -> ToolContext | None:
        """The session the call runs in (``None`` outside a session)."""
        return self._context

    @property
    def parent(self) -> ToolExecutionToken | None:
        """The enclosing execution's token, if any."""
        return self._parent

    @property
    def signal(self) -> CancelSignal | None:
        """The call's cancellation signal (timeouts and ``session/cancel`` trigger it).

        Only a ``tools/execute`` wrapper may set or delete it, while it runs.
        """
        return self._signal

    @signal.setter
    def signal(self, value: CancelSignal | None) -> None:
        if self._state != _SIGNAL_OPEN:
            raise AttributeError("signal can be changed only by a tools/execute wrapper")
        checked: object = value
        if checked is not None and not isinstance(checked, CancelSignal):
            raise TypeError("signal must be a CancelSignal or None")
        object.__setattr__(self, "_signal", value)

    @signal.deleter
    def signal(self) -> None:
        self.signal = None

    async def report_progress(self, text: str) -> None:
        """Show ``text`` as the call's progress while it runs (best effort, never raises)."""
        sink = self._progress
        if sink is not None and not self.sealed:
            try:
                await sink.text(text)
            except Exception:
                self._drop_progress("text progress")

    async def write_output(self, data: str) -> None:
        """Stream a chunk of terminal output to the call's card (best effort, never raises).

        Awaiting it applies back-pressure: it returns once the chunk is buffered within the
        emitter's bound.
        """
        sink = self._progress
        if sink is not None and data and not self.sealed:
            try:
                await sink.output(data)
            except Exception:
                self._drop_progress("terminal output")

    def _drop_progress(self, what: str) -> None:
        logger.exception("progress sink failed on %s for %s; progress is off for it", what, self)
        object.__setattr__(self, "_progress", None)

    @property
    def sealed(self) -> bool:
        """Whether the pipeline has finished with this execution."""
        return self._state == _SEALED

    # -- the registry's API for the signal window (not for listeners or tools) --------------

    # Plain method pairs, not context managers: they run twice on every call, and a
    # generator-based context manager costs about a microsecond each time.

    def _open_signal(self) -> None:
        """Let the execute wrappers set or delete ``signal``, until :meth:`_lock_signal`."""
        if self._state != _SEALED:
            object.__setattr__(self, "_state", _SIGNAL_OPEN)

    def _lock_signal(self) -> None:
        if self._state != _SEALED:
            object.__setattr__(self, "_state", _SIGNAL_LOCKED)

    def _begin_dispatch(self, deadline: CancelSignal | None) -> CancelSignal | None:
        """Lock ``signal`` for the tool's own run, and make it ``deadline`` when one is given.

        Returns the wrappers' signal, for :meth:`_end_dispatch`.
        """
        outer = self._signal
        if deadline is not None:
            object.__setattr__(self, "_signal", deadline)
        self._lock_signal()
        return outer

    def _end_dispatch(self, outer: CancelSignal | None) -> None:
        """Give the wrappers back their signal (``outer``) and their window."""
        object.__setattr__(self, "_signal", outer)
        self._open_signal()

    def _seal(self) -> None:
        object.__setattr__(self, "_state", _SEALED)
