"""The values one tool call is made of: input, pipeline-owned execution, result, and the
shaping of what a tool returns (or raises) into that result.

Invariants:
- :class:`ToolExecutionInput` is caller-owned; the registry never keeps it. It snapshots it
  into a :class:`ToolExecution` whose ``token``, ``call_id``, ``name``, ``arguments`` (deep-
  frozen), ``agent``, ``context`` and ``parent`` can never be reassigned. Only ``signal`` can
  change, and only while the execute wrappers run; after the pipeline the execution is sealed
  for good. The registry drives that window through its methods (``_open_signal``/
  ``_lock_signal`` around the wrappers, ``_begin_dispatch``/``_end_dispatch`` around the tool,
  ``_seal``); nothing else writes the execution's fields.
- :class:`ToolExecutionToken` is identity only: no fields, equality is ``is``.
- Both can be weakly referenced (weak-map keys for observers); that adds nothing writable.
- :class:`ToolExecutionResult` is deep-frozen and round-trips losslessly through JSON
  (:func:`result_to_json` / :func:`result_from_json`).
- Result shaping never raises on a bad result, it names it: :func:`error_result` turns any
  exception into an ``is_error`` result with ``ToolErrorInfo(name, code)`` (a
  :class:`ToolError` keeps its own; anything else is ``EXECUTION_ERROR``);
  :func:`normalize_output` accepts exactly ``str``, a sequence of content blocks or
  :class:`ToolOutput`; :func:`rebuild_result` checks every part of a finished result and
  replaces a malformed one with a ``ToolResultError`` result.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol

import attrs

from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.content import (
    ContentBlock,
    ImageContent,
    TextContent,
    ToolOutput,
    content_from_json,
    content_to_json,
)
from acp_sidecar.tools.errors import ToolError, ToolExecutionError, ToolResultError
from acp_sidecar.tools.json_values import (
    FrozenJson,
    JsonValue,
    JsonValueError,
    freeze_json,
    json_violations,
    thaw,
)

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


@attrs.frozen
class ToolErrorInfo:
    """Machine-routable structure of a failed call: the error's name and stable code."""

    name: str
    code: str


def _content_tuple(value: Iterable[ContentBlock]) -> tuple[ContentBlock, ...]:
    return tuple(value)


def _freeze_optional(value: JsonValue) -> FrozenJson:
    return freeze_json(value)


@attrs.frozen
class ToolExecutionResult:
    """The authoritative outcome of one call.

    ``content`` is what the model sees; ``error`` is set when the call failed with a known
    error; ``additional_context`` is extra model-facing context for the next request (not part
    of this result); ``meta`` is the tool's private presentation payload (successful calls).
    """

    call_id: str
    content: tuple[ContentBlock, ...] = attrs.field(converter=_content_tuple)
    is_error: bool
    error: ToolErrorInfo | None = None
    additional_context: FrozenJson = attrs.field(default=None, converter=_freeze_optional)
    meta: FrozenJson = attrs.field(default=None, converter=_freeze_optional)


def result_to_json(result: ToolExecutionResult) -> dict[str, Any]:
    """The JSON object of a result (camelCase keys, as it is stored in a session log)."""
    data: dict[str, Any] = {
        "callId": result.call_id,
        "content": [content_to_json(block) for block in result.content],
        "isError": result.is_error,
    }
    if result.error is not None:
        data["error"] = {"name": result.error.name, "code": result.error.code}
    if result.additional_context is not None:
        data["additionalContext"] = thaw(result.additional_context)
    if result.meta is not None:
        data["meta"] = thaw(result.meta)
    return data


def result_from_json(data: Mapping[str, Any]) -> ToolExecutionResult:
    """The result of a JSON object made by :func:`result_to_json`; ``ValueError`` otherwise."""
    try:
        error = data.get("error")
        call_id = data["callId"]
        is_error = data["isError"]
        if not isinstance(call_id, str) or not isinstance(is_error, bool):
            raise ValueError("callId must be a string and isError a boolean")
        return ToolExecutionResult(
            call_id=call_id,
            content=[content_from_json(block) for block in data["content"]],
            is_error=is_error,
            error=None if error is None else ToolErrorInfo(str(error["name"]), str(error["code"])),
            additional_context=data.get("additionalContext"),
            meta=data.get("meta"),
        )
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a tool result: {exc}") from exc


# --- result shaping ---------------------------------------------------------------------------


def error_result(call_id: str, error: BaseException) -> ToolExecutionResult:
    """The ``is_error`` result of a call that failed with ``error``."""
    if isinstance(error, ToolError):
        name, code, text = error.name, error.code, str(error)
    else:
        name, code = type(error).__name__, ToolExecutionError.code
        text = f"{name}: {error}" if str(error) else name
    return ToolExecutionResult(
        call_id=call_id,
        content=(TextContent(text),),
        is_error=True,
        error=ToolErrorInfo(name=name, code=code),
    )


def normalize_output(call_id: str, name: str, output: object) -> ToolExecutionResult:
    """The successful result of what tool ``name``'s ``execute`` returned.

    Raises:
        ToolResultError: ``output`` is none of the return forms, or its meta is not JSON.
    """
    meta: Any = None
    if isinstance(output, ToolOutput):
        meta = output.meta
        output = output.content
    content: tuple[ContentBlock, ...]
    if isinstance(output, str):
        content = (TextContent(output),)
    elif isinstance(output, list | tuple) and all(
        isinstance(block, TextContent | ImageContent) for block in output
    ):
        content = tuple(output)
    else:
        raise ToolResultError(
            f"{name} returned {type(output).__name__}; expected str, a list of content "
            "blocks, or ToolOutput"
        )
    try:
        return ToolExecutionResult(call_id=call_id, content=content, is_error=False, meta=meta)
    except JsonValueError as exc:
        raise ToolResultError(f"{name} returned meta that is not lossless JSON: {exc}") from exc


def rebuild_result(call_id: str, result: ToolExecutionResult) -> ToolExecutionResult:
    """``result`` checked part by part; anything malformed becomes an error result.

    A listener or wrapper may hand back a result built around the attrs checks (or mutated
    after them); this is the last look before the result leaves the pipeline.
    """
    problems: list[str] = []
    if result.call_id != call_id:
        problems.append(f"callId {result.call_id!r} is not the call's {call_id!r}")
    is_error: object = result.is_error
    if type(is_error) is not bool:
        problems.append("isError is not a boolean")
    content: Sequence[object] = result.content
    for index, block in enumerate(content):
        if isinstance(block, TextContent):
            if type(block.text) is not str:
                problems.append(f"content/{index}: text is not a string")
        elif isinstance(block, ImageContent):
            if type(block.data) is not str or type(block.mime_type) is not str:
                problems.append(f"content/{index}: image data and mimeType must be strings")
        else:
            problems.append(f"content/{index}: {type(block).__name__} is not a content block")
    error = result.error
    if error is not None and (
        not isinstance(error, ToolErrorInfo)
        or type(error.name) is not str
        or type(error.code) is not str
    ):
        problems.append("error is not a ToolErrorInfo of two strings")
    for field_name in ("additional_context", "meta"):
        problems.extend(f"{field_name}{v}" for v in json_violations(getattr(result, field_name)))
    if problems:
        return error_result(
            call_id,
            ToolResultError("the tool result is malformed: " + "; ".join(problems)),
        )
    return result
