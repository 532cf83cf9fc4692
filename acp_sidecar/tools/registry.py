"""The tool registry: registration as a value boundary, and the guarded execution pipeline.

This module owns the registry's tools and seams and the order of the ``execute`` chain. The
seams' callable types live in :mod:`acp_sidecar.tools.seams`; what an ``Ask`` becomes (the
tool's preview, the session's permissions) in :mod:`acp_sidecar.tools.asking`; the race
between a running tool and its cancel signal or deadline in :mod:`acp_sidecar.tools.cancel`;
and the shaping of what a tool returns or raises into a :class:`ToolExecutionResult` in
:mod:`acp_sidecar.tools.result`.

A definition's ``timeout_ms`` is enforced in the core dispatch (the innermost step, inside
every execute wrapper), not as an execute wrapper of its own. Wrappers are extension points:
they may be added in front (``prepend``), removed, may replace or delete
``execution.signal``, or never call ``next``. A deadline among them would depend on where it
sits in that list, would count the other wrappers' time against the tool, and could be
undone by a wrapper that swaps the signal. In the dispatch it bounds exactly the tool's own
run, and the tool sees it as its ``signal``: a child of whatever signal the wrappers left, so
a ``session/cancel`` still reaches the tool and a timeout never cancels the turn.

Invariants:
- ``register`` copies a definition into a frozen :class:`ToolDefinition` snapshot: parameters
  checked as lossless JSON before and after a deep-frozen clone, scalar fields copied, callbacks
  read once (so a method stays bound to the original object, and replacing an attribute on
  the caller's object later changes nothing). ``get``/``visible`` return that snapshot;
  ``schemas`` returns fresh detached dicts with exactly ``name``, ``description``,
  ``parameters``.
- ``execute`` never raises (except ``asyncio.CancelledError``): every failure is an
  ``is_error`` result with ``error = ToolErrorInfo(name, code)``. The order is fixed: input
  snapshot → pre-execute waterfall (→ on ``Ask``: :func:`~acp_sidecar.tools.asking.ask_permission`,
  the tool's preview and the execution context's ``permissions``) → guards → execute
  wrappers around dispatch (with the deadline) → post-execute waterfall → JSON-safe rebuild →
  result observers.
- The input snapshot refuses, before any policy, arguments that are not lossless JSON and a
  ``parent`` that is anything but a :class:`ToolExecutionToken` (never a live execution).
- Each seam runs the listeners registered when the call reaches it: the list is copied then,
  so adding or removing one (a listener removing itself, another call's setup — calls run
  concurrently) affects later calls only, and never skips a listener or runs one twice.
- A failure is blamed where it arose: a listener that raises or returns a malformed decision
  (wrong type, non-JSON ``additional_context``) fails as itself, not as the tool, and outer
  listeners that delegated to it pass that error on unchanged.
- Guards can only reduce permission; observers cannot change the outcome, and one failing
  observer neither changes the result nor stops the others. Observers receive the sealed
  execution, which (like its token) can be a weak-map key.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Awaitable, Callable
from typing import Any

from acp_sidecar.tools.asking import ask_permission
from acp_sidecar.tools.cancel import CancelSignal, run_watched
from acp_sidecar.tools.decisions import (
    Accept,
    Allow,
    Ask,
    Block,
    Deny,
    PostToolDecision,
    PreToolDecision,
)
from acp_sidecar.tools.definition import ToolDefinition
from acp_sidecar.tools.errors import (
    ToolBlockedError,
    ToolDeniedError,
    ToolError,
    ToolInputError,
    ToolListenerError,
    ToolNotFoundError,
    ToolRegistrationError,
    ToolResultError,
)
from acp_sidecar.tools.execution import ToolExecution, ToolExecutionInput, ToolExecutionToken
from acp_sidecar.tools.json_values import (
    FrozenDict,
    JsonValueError,
    freeze_json,
    json_violations,
    thaw,
)
from acp_sidecar.tools.result import (
    ToolErrorInfo,
    ToolExecutionResult,
    error_result,
    normalize_output,
    rebuild_result,
)
from acp_sidecar.tools.seams import (
    ExecuteWrapper,
    PostExecuteListener,
    PreExecuteListener,
    ResultObserver,
    ToolGuard,
    describe,
    listener_failed,
    resolve,
)

logger = logging.getLogger(__name__)

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""Tool names every OpenAI-compatible provider accepts."""


class ToolRegistry:
    """Holds tools and runs calls through the guarded pipeline."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolDefinition] = {}
        self._pre: list[PreExecuteListener] = []
        self._guards: list[ToolGuard] = []
        self._wrappers: list[ExecuteWrapper] = []
        self._post: list[PostExecuteListener] = []
        self._observers: list[ResultObserver] = []

    # -- registration ---------------------------------------------------------------------

    def register(self, definition: object) -> ToolDefinition:
        """Register a definition (a :class:`ToolDefinition` or any object with its fields).

        Returns the frozen snapshot the registry keeps.

        Raises:
            ToolRegistrationError: the name is taken, or a field is invalid (all listed).
        """
        problems: list[str] = []
        name = getattr(definition, "name", None)
        if type(name) is not str or not TOOL_NAME.fullmatch(name):
            problems.append(f"name: expected 1-64 characters of [A-Za-z0-9_-], got {name!r}")
        description = getattr(definition, "description", None)
        if type(description) is not str:
            problems.append(f"description: expected a string, got {type(description).__name__}")
        parameters = getattr(definition, "parameters", None)
        frozen_parameters: object = None
        violations = json_violations(parameters)
        if violations:
            problems.extend(f"parameters{v}" for v in violations)
        elif not isinstance(parameters, dict) or parameters.get("type") != "object":
            problems.append('parameters: expected a JSON Schema object with "type": "object"')
        else:
            try:
                frozen_parameters = freeze_json(parameters)
            except JsonValueError as exc:  # pragma: no cover - unstable container
                problems.extend(f"parameters{v}" for v in exc.violations)
        execute = getattr(definition, "execute", None)
        if not callable(execute):
            problems.append("execute: expected a callable")
        present_call = getattr(definition, "present_call", None)
        if present_call is not None and not callable(present_call):
            problems.append("present_call: expected a callable or None")
        present_result = getattr(definition, "present_result", None)
        if present_result is not None and not callable(present_result):
            problems.append("present_result: expected a callable or None")
        preview_call = getattr(definition, "preview_call", None)
        if preview_call is not None and not callable(preview_call):
            problems.append("preview_call: expected a callable or None")
        read_only = getattr(definition, "read_only", False)
        if type(read_only) is not bool:
            problems.append(f"read_only: expected True or False, got {read_only!r}")
        open_world = getattr(definition, "open_world", False)
        if type(open_world) is not bool:
            problems.append(f"open_world: expected True or False, got {open_world!r}")
        timeout_ms = getattr(definition, "timeout_ms", None)
        if timeout_ms is not None and (
            type(timeout_ms) not in (int, float) or not math.isfinite(timeout_ms) or timeout_ms <= 0
        ):
            problems.append(f"timeout_ms: expected a positive number or None, got {timeout_ms!r}")
        if not problems and name in self._tools:
            problems.append(f"name: a tool named {name!r} is already registered")
        if problems:
            raise ToolRegistrationError(
                f"cannot register tool {name!r}:\n" + "\n".join(f"- {p}" for p in problems)
            )
        assert isinstance(frozen_parameters, FrozenDict)
        snapshot = ToolDefinition(
            name=str(name),
            description=str(description),
            parameters=frozen_parameters,
            execute=execute,  # type: ignore[arg-type]
            present_call=present_call,
            present_result=present_result,
            timeout_ms=None if timeout_ms is None else float(timeout_ms),
            read_only=read_only,
            preview_call=preview_call,
            open_world=open_world,
        )
        self._tools[snapshot.name] = snapshot
        return snapshot

    def unregister(self, name: str) -> bool:
        """Remove a tool; returns whether it was registered."""
        return self._tools.pop(name, None) is not None

    def get(self, name: str) -> ToolDefinition | None:
        """The frozen snapshot of a registered tool."""
        return self._tools.get(name)

    def visible(self) -> tuple[ToolDefinition, ...]:
        """Every registered tool's snapshot, in registration order."""
        return tuple(self._tools.values())

    def schemas(self) -> list[dict[str, Any]]:
        """Detached model-facing schemas: exactly ``name``, ``description``, ``parameters``."""
        return [
            {"name": d.name, "description": d.description, "parameters": thaw(d.parameters)}
            for d in self._tools.values()
        ]

    # -- seams ----------------------------------------------------------------------------

    def on_pre_execute(
        self, listener: PreExecuteListener, *, prepend: bool = False
    ) -> Callable[[], None]:
        """Add a ``(execution, next) -> Allow | Deny | Ask`` listener; returns its remover."""
        return self._add(self._pre, listener, prepend)

    def add_guard(self, guard: ToolGuard, *, prepend: bool = False) -> Callable[[], None]:
        """Add a ``(execution) -> reason | None`` guard (can only deny); returns its remover."""
        return self._add(self._guards, guard, prepend)

    def on_execute(self, wrapper: ExecuteWrapper, *, prepend: bool = False) -> Callable[[], None]:
        """Add an around-dispatch ``(execution, next) -> result`` wrapper; returns its remover.

        The first wrapper is the outermost. A wrapper may set or delete ``execution.signal``.
        """
        return self._add(self._wrappers, wrapper, prepend)

    def on_post_execute(
        self, listener: PostExecuteListener, *, prepend: bool = False
    ) -> Callable[[], None]:
        """Add a ``(execution, result, next) -> Accept | Block`` listener; returns its remover."""
        return self._add(self._post, listener, prepend)

    def on_result(self, observer: ResultObserver, *, prepend: bool = False) -> Callable[[], None]:
        """Add an ``(execution, result)`` observer of every final outcome; returns its remover."""
        return self._add(self._observers, observer, prepend)

    @staticmethod
    def _add(items: list[Any], item: Any, prepend: bool) -> Callable[[], None]:
        if not callable(item):
            raise TypeError(f"expected a callable, got {type(item).__name__}")
        if prepend:
            items.insert(0, item)
        else:
            items.append(item)

        def remove() -> None:
            for index, existing in enumerate(items):
                if existing is item:  # by identity: an equal callback may be added twice
                    del items[index]
                    return

        return remove

    # -- execution ------------------------------------------------------------------------

    async def execute(self, request: ToolExecutionInput) -> ToolExecutionResult:
        """Run one call through the whole pipeline; every failure becomes an error result."""
        # The input is caller-owned and only type-hinted: check it like any outside value.
        raw_call_id: object = request.call_id
        raw_name: object = request.name
        raw_signal: object = request.signal
        raw_parent: object = request.parent
        call_id = raw_call_id if isinstance(raw_call_id, str) else str(raw_call_id)
        arguments: Any = None
        rejected: ToolError | None = None
        if not isinstance(raw_name, str):
            rejected = ToolInputError(f"tool name must be a string, got {raw_name!r}")
        elif raw_signal is not None and not isinstance(raw_signal, CancelSignal):
            rejected = ToolInputError("signal must be a CancelSignal")
        elif raw_parent is not None and type(raw_parent) is not ToolExecutionToken:
            # Exactly the token: a live execution (or a subclass that could hold one) would
            # hand the nested call's listeners the enclosing call's mutable state.
            rejected = ToolInputError(
                f"parent must be a ToolExecutionToken or None, got {type(raw_parent).__name__}"
            )
        else:
            try:
                arguments = freeze_json(request.arguments)
            except JsonValueError as exc:
                rejected = ToolInputError(
                    "arguments are not lossless JSON:\n"
                    + "\n".join(f"- arguments{v}" for v in exc.violations)
                )
        execution = ToolExecution(
            call_id=call_id,
            name=raw_name if isinstance(raw_name, str) else repr(raw_name),
            arguments=arguments,
            agent=request.agent,
            context=request.context,
            parent=raw_parent if type(raw_parent) is ToolExecutionToken else None,
            signal=request.signal if rejected is None else None,
            progress=request.progress if rejected is None else None,
        )
        if rejected is not None:
            result = error_result(call_id, rejected)
        else:
            try:
                result = await self._run(execution)
            except Exception as exc:  # the outer catch: every failure class becomes a result
                result = error_result(call_id, exc)
            result = rebuild_result(call_id, result)
        execution._seal()
        await self._notify(execution, result)
        return result

    async def _run(self, execution: ToolExecution) -> ToolExecutionResult:
        definition = self._tools.get(execution.name)
        if definition is None:
            known = ", ".join(sorted(self._tools)) or "none"
            raise ToolNotFoundError(f"Unknown tool {execution.name!r}. Available tools: {known}")
        decision = await self._pre_execute(execution, tuple(self._pre), 0)
        if isinstance(decision, Ask):
            decision = await ask_permission(execution, definition, decision)
        if isinstance(decision, Deny):
            raise ToolDeniedError(f"{execution.name} was denied: {decision.reason}")
        for guard in tuple(self._guards):
            try:
                reason = await resolve(guard(execution))
            except Exception as exc:
                raise listener_failed("guard", guard, exc) from exc
            if reason is not None:
                raise ToolDeniedError(f"{execution.name} was denied: {reason}")
        execution._open_signal()
        try:
            result = await self._wrapped(execution, definition, tuple(self._wrappers), 0)
        finally:
            execution._lock_signal()
        return await self._post_execute(execution, result)

    async def _pre_execute(
        self, execution: ToolExecution, chain: tuple[PreExecuteListener, ...], index: int
    ) -> PreToolDecision:
        if index >= len(chain):
            return Allow()
        listener = chain[index]

        def next_() -> Awaitable[PreToolDecision]:
            return self._pre_execute(execution, chain, index + 1)

        try:
            decision = await resolve(listener(execution, next_))
        except Exception as exc:
            raise listener_failed("pre-execute listener", listener, exc) from exc
        if not isinstance(decision, Allow | Deny | Ask):
            raise ToolListenerError(
                f"pre-execute listener {describe(listener)} returned "
                f"{type(decision).__name__}, expected Allow, Deny or Ask"
            )
        return decision

    async def _wrapped(
        self,
        execution: ToolExecution,
        definition: ToolDefinition,
        chain: tuple[ExecuteWrapper, ...],
        index: int,
    ) -> ToolExecutionResult:
        if index >= len(chain):
            return await self._dispatch(execution, definition)
        wrapper = chain[index]

        def next_() -> Awaitable[ToolExecutionResult]:
            return self._wrapped(execution, definition, chain, index + 1)

        try:
            result = await resolve(wrapper(execution, next_))
        except Exception as exc:
            raise listener_failed("execute wrapper", wrapper, exc) from exc
        if not isinstance(result, ToolExecutionResult):
            raise ToolListenerError(
                f"execute wrapper {describe(wrapper)} returned {type(result).__name__}, "
                "expected ToolExecutionResult"
            )
        return result

    async def _dispatch(
        self, execution: ToolExecution, definition: ToolDefinition
    ) -> ToolExecutionResult:
        timeout_ms = definition.timeout_ms
        deadline: CancelSignal | None = None
        if timeout_ms is not None:
            # A child of the wrappers' signal: a cancel still reaches the tool, and a timeout
            # never cancels the turn.
            current = execution.signal
            deadline = current.child() if current is not None else CancelSignal()
        outer = execution._begin_dispatch(deadline)
        try:
            output = await run_watched(
                # Typed as async, but a hand-written definition may pass a plain function.
                lambda: definition.execute(execution.arguments, execution),
                execution.signal,
                name=definition.name,
                timeout_ms=timeout_ms,
            )
            return normalize_output(execution.call_id, definition.name, output)
        except Exception as exc:
            return error_result(execution.call_id, exc)
        finally:
            execution._end_dispatch(outer)

    async def _post_execute(
        self, execution: ToolExecution, result: ToolExecutionResult
    ) -> ToolExecutionResult:
        decision = await self._post_waterfall(execution, result, tuple(self._post), 0)
        match decision:
            case Accept(content=content, additional_context=context):
                if content is None and context is None:
                    return result
                return ToolExecutionResult(
                    call_id=result.call_id,
                    content=result.content if content is None else content,
                    is_error=result.is_error,
                    error=result.error,
                    additional_context=result.additional_context if context is None else context,
                    meta=result.meta,
                )
            case Block(feedback=feedback, additional_context=context):
                return ToolExecutionResult(
                    call_id=result.call_id,
                    content=feedback,
                    is_error=True,
                    error=ToolErrorInfo(ToolBlockedError.__name__, ToolBlockedError.code),
                    additional_context=context,
                )

    async def _post_waterfall(
        self,
        execution: ToolExecution,
        result: ToolExecutionResult,
        chain: tuple[PostExecuteListener, ...],
        index: int,
    ) -> PostToolDecision:
        if index >= len(chain):
            return Accept()
        listener = chain[index]

        def next_() -> Awaitable[PostToolDecision]:
            return self._post_waterfall(execution, result, chain, index + 1)

        try:
            decision = await resolve(listener(execution, result, next_))
        except Exception as exc:
            raise listener_failed("post-execute listener", listener, exc) from exc
        if not isinstance(decision, Accept | Block):
            raise ToolListenerError(
                f"post-execute listener {describe(listener)} returned "
                f"{type(decision).__name__}, expected Accept or Block"
            )
        # Checked here, as the chain unwinds, so the error names the listener that made the
        # decision (an outer one passing it on finds it checked) — not the tool, which ran fine.
        violations = json_violations(decision.additional_context)
        if violations:
            raise ToolResultError(
                f"post-execute listener {describe(listener)} returned "
                f"{type(decision).__name__} with additional_context that is not lossless JSON: "
                + "; ".join(f"additional_context{v}" for v in violations)
            )
        return decision

    async def _notify(self, execution: ToolExecution, result: ToolExecutionResult) -> None:
        for observer in tuple(self._observers):
            try:
                await resolve(observer(execution, result))
            except Exception:
                logger.exception("result observer %s raised; ignored", describe(observer))
