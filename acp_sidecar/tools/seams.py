"""The shapes of the registry's seams, and what the pipeline does with any callback on them.
A callback typed async may be written plain (:func:`resolve`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TypeAlias, TypeVar

from acp_sidecar.tools.decisions import PostToolDecision, PreToolDecision
from acp_sidecar.tools.errors import ToolError, ToolListenerError, ToolResultError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.result import ToolExecutionResult

T = TypeVar("T")

NextPre: TypeAlias = Callable[[], Awaitable[PreToolDecision]]
PreExecuteListener: TypeAlias = Callable[
    [ToolExecution, NextPre], "PreToolDecision | Awaitable[PreToolDecision]"
]
ToolGuard: TypeAlias = Callable[[ToolExecution], "str | None | Awaitable[str | None]"]
NextExecute: TypeAlias = Callable[[], Awaitable[ToolExecutionResult]]
ExecuteWrapper: TypeAlias = Callable[
    [ToolExecution, NextExecute], "ToolExecutionResult | Awaitable[ToolExecutionResult]"
]
NextPost: TypeAlias = Callable[[], Awaitable[PostToolDecision]]
PostExecuteListener: TypeAlias = Callable[
    [ToolExecution, ToolExecutionResult, NextPost], "PostToolDecision | Awaitable[PostToolDecision]"
]
ResultObserver: TypeAlias = Callable[[ToolExecution, ToolExecutionResult], "None | Awaitable[None]"]


async def resolve(value: T | Awaitable[T]) -> T:
    """``value``, awaited if it is awaitable."""
    if inspect.isawaitable(value):
        return await value
    return value


def describe(callback: object) -> str:
    """How an error names ``callback``: its qualified name, else its type's name."""
    return getattr(callback, "__qualname__", None) or type(callback).__name__


def listener_failed(seam: str, callback: object, exc: Exception) -> ToolError:
    """The error a call fails with when ``callback`` on ``seam`` raised ``exc``."""
    if isinstance(exc, ToolListenerError | ToolResultError):
        return exc
    return ToolListenerError(f"{seam} {describe(callback)} raised {type(exc).__name__}: {exc}")
