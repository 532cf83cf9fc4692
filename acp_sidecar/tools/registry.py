"""The tool registry: its tools and seams, and the fixed order of the ``execute`` chain.

Invariants:
- ``execute`` never raises (except ``CancelledError``): every failure is an ``is_error`` result.
  Order: input snapshot → pre-execute (``Ask`` → ``ask_permission``) → guards → wrappers →
  dispatch (with the deadline) → post-execute → JSON-safe rebuild → observers.
- Each seam runs the listeners registered when the call reaches it (the list is copied then).
- A failure is blamed where it arose: a listener that raises or returns a malformed decision
  fails as itself, not as the tool. Observers cannot change the outcome.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from acp_sidecar.tools.asking import ask_permission
from acp_sidecar.tools.boundary import TOOL_NAME, admit_call, snapshot_definition
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
    ToolListenerError,
    ToolNotFoundError,
    ToolResultError,
)
from acp_sidecar.tools.execution import ToolExecution, ToolExecutionInput
from acp_sidecar.tools.json_values import (
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

__all__ = ["TOOL_NAME", "ToolRegistry"]

logger = logging.getLogger(__name__)


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
        snapshot = snapshot_definition(definition, self._tools)
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
        execution, rejected = admit_call(request)
        call_id = execution.call_id
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
        # The deadline lives here, not in a wrapper: it bounds exactly the tool's own run, and a
        # wrapper may be prepended, swap the signal or never call next.
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
