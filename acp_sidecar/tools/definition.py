"""Tool definitions and ``define_tool``, the typed way to write one.

Presenters are pure functions of ``(args)`` and ``(args, result)``: they run live and on
replay. Whether a call may change anything is declared (``read_only``), never inferred from
its card; a tool that declares nothing is treated as able to. ``preview_call`` runs live only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, overload

import attrs

from acp_sidecar.tools.content import ContentBlock, ToolOutput
from acp_sidecar.tools.effects import FileEffect
from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.json_values import FrozenDict, freeze_json

if TYPE_CHECKING:
    from acp_sidecar.tools.execution import ToolExecution
    from acp_sidecar.tools.presentation import ToolCallView, ToolResult, ToolResultView
    from acp_sidecar.tools.schema import SchemaProp

ToolReturn: TypeAlias = "str | Sequence[ContentBlock] | ToolOutput"
"""What ``execute`` may return: text, content blocks, or the object form with ``meta``."""

RawExecute: TypeAlias = "Callable[[Any, ToolExecution], Awaitable[ToolReturn]]"
RawPresentCall: TypeAlias = "Callable[[Any], ToolCallView | None]"
RawPresentResult: TypeAlias = "Callable[[Any, ToolResult], ToolResultView | None]"
RawPreviewCall: TypeAlias = "Callable[[Any, ToolExecution], Awaitable[ToolCallView | None]]"
RawFileEffects: TypeAlias = "Callable[[Any], Sequence[FileEffect]]"

A = TypeVar("A")


@attrs.frozen
class ToolDefinition:
    """A registered tool: the model-facing schema plus ``execute`` and optional presenters."""

    name: str
    """The name the model calls it by (``[A-Za-z0-9_-]{1,64}``)."""
    description: str
    """What the tool does, for the model."""
    parameters: FrozenDict
    """The JSON Schema (``type: object``) of its arguments, deep-frozen."""
    execute: RawExecute
    """Runs one call: ``await execute(args, execution)``."""
    present_call: RawPresentCall | None = None
    """Pure: the pending card for ``args``, or ``None`` for a generic card."""
    present_result: RawPresentResult | None = None
    """Pure: the completed card for ``(args, result)``, or ``None`` to keep the raw result."""
    timeout_ms: float | None = None
    """Cooperative deadline for one call; never sent to the model."""
    read_only: bool = False
    """The tool never changes anything — files, processes, anything outside — so session
    modes run it without asking. ``False`` (undeclared) means it may change things."""
    preview_call: RawPreviewCall | None = None
    """Impure, live only: the pending card as the call would change things *now* (it may read
    the workspace, never change it), shown when the user is asked for permission. Raising a
    :class:`~acp_sidecar.tools.errors.ToolError` refuses the call before anyone is asked;
    ``None`` (or no method) keeps the ``present_call`` card."""
    open_world: bool = False
    """The tool reaches outside the workspace and the machine (the web, a remote service):
    even a read-only one can leak what it is given, so ``ask`` mode asks before running it
    (``read-only`` mode still allows it when it is ``read_only``)."""
    file_effects: RawFileEffects | None = None
    """Pure: the paths a call with these arguments may create, change or delete, so the
    session can keep their before-images and ``/undo`` the call. ``None``: undeclared (its
    changes are listed as not undoable). Invalid arguments declare nothing."""


SchemaSpecInput: TypeAlias = "Mapping[str, SchemaProp | Mapping[str, Any]]"


@overload
def define_tool(
    *,
    name: str,
    description: str,
    parameters: type[A],
    execute: Callable[[A, ToolExecution], Awaitable[ToolReturn]],
    present_call: Callable[[A], ToolCallView | None] | None = None,
    present_result: Callable[[A, ToolResult], ToolResultView | None] | None = None,
    timeout_ms: float | None = None,
    read_only: bool = False,
    preview_call: Callable[[A, ToolExecution], Awaitable[ToolCallView | None]] | None = None,
    open_world: bool = False,
    file_effects: Callable[[A], Sequence[FileEffect]] | None = None,
) -> ToolDefinition: ...


@overload
def define_tool(
    *,
    name: str,
    description: str,
    parameters: SchemaSpecInput,
    execute: Callable[[FrozenDict, ToolExecution], Awaitable[ToolReturn]],
    present_call: Callable[[FrozenDict], ToolCallView | None] | None = None,
    present_result: Callable[[FrozenDict, ToolResult], ToolResultView | None] | None = None,
    timeout_ms: float | None = None,
    read_only: bool = False,
    preview_call: Callable[[FrozenDict, ToolExecution], Awaitable[ToolCallView | None]]
    | None = None,
    open_world: bool = False,
    file_effects: Callable[[FrozenDict], Sequence[FileEffect]] | None = None,
) -> ToolDefinition: ...


def define_tool(
    *,
    name: str,
    description: str,
    parameters: Any,
    execute: Callable[[Any, ToolExecution], Awaitable[ToolReturn]],
    present_call: Callable[[Any], ToolCallView | None] | None = None,
    present_result: Callable[[Any, ToolResult], ToolResultView | None] | None = None,
    timeout_ms: float | None = None,
    read_only: bool = False,
    preview_call: Callable[[Any, ToolExecution], Awaitable[ToolCallView | None]] | None = None,
    open_world: bool = False,
    file_effects: Callable[[Any], Sequence[FileEffect]] | None = None,
) -> ToolDefinition:
    """Build a :class:`ToolDefinition` whose callbacks receive validated, narrowed arguments.

    ``parameters`` is either a schema spec (a mapping of property name to
    :class:`~acp_sidecar.tools.schema.SchemaProp` or its dict form) or an attrs class; the JSON
    Schema the model sees is derived from it once, here. ``read_only=True`` declares that the
    tool never changes anything (see :attr:`ToolDefinition.read_only`); leave it unset for a
    tool that writes, deletes, runs programs or reaches outside. ``open_world=True`` declares
    that it reaches the world outside the machine (see :attr:`ToolDefinition.open_world`).
    ``file_effects`` declares the files a call changes (see :attr:`ToolDefinition.file_effects`).

    Raises:
        SchemaSpecError: the spec is malformed (every problem listed with its path).
        TypeError: an attrs parameters class uses a type the DSL cannot express.
    """
    # The DSL modules are imported here, not at module level: a raw ToolDefinition (and the
    # registry) must not pay for them.
    from acp_sidecar.tools.args import compile_spec
    from acp_sidecar.tools.params import (
        attrs_args_narrower,
        attrs_json_schema,
        is_attrs_parameters,
    )
    from acp_sidecar.tools.schema import coerce_spec

    narrow: Callable[[object], Any]
    if is_attrs_parameters(parameters):
        json_schema = attrs_json_schema(parameters)
        narrow = attrs_args_narrower(parameters)

    else:
        compiled = compile_spec(coerce_spec(parameters))
        json_schema = compiled.json_schema()
        narrow = compiled.validate

    async def run(args: object, execution: ToolExecution) -> ToolReturn:
        return await execute(narrow(args), execution)

    # A call's card and then its result card narrow the same stored arguments (on replay, one
    # after the other): frozen arguments are narrowed once. Presenters are pure, so the two
    # may share what narrowing made.
    last: list[tuple[object, Any]] = [(object(), None)]  # nothing is that object

    def narrow_once(args: object) -> Any:
        seen, narrowed = last[0]
        if seen is args:
            return narrowed
        narrowed = narrow(args)
        if type(args) is FrozenDict:
            last[0] = (args, narrowed)
        return narrowed

    call_presenter: RawPresentCall | None = None
    if present_call is not None:
        typed_call = present_call

        def call_presenter(args: object) -> ToolCallView | None:
            try:
                narrowed = narrow_once(args)
            except ToolArgsError:
                return None
            return typed_call(narrowed)

    result_presenter: RawPresentResult | None = None
    if present_result is not None:
        typed_result = present_result

        def result_presenter(args: object, result: ToolResult) -> ToolResultView | None:
            try:
                narrowed = narrow_once(args)
            except ToolArgsError:
                return None
            return typed_result(narrowed, result)

    previewer: RawPreviewCall | None = None
    if preview_call is not None:
        typed_preview = preview_call

        async def previewer(args: object, execution: ToolExecution) -> ToolCallView | None:
            # Unlike the pure presenters, invalid arguments are not hidden here: the preview
            # runs just before the call would, and the call would fail the same way.
            return await typed_preview(narrow(args), execution)

    effects: RawFileEffects | None = None
    if file_effects is not None:
        typed_effects = file_effects

        def effects(args: object) -> Sequence[FileEffect]:
            try:
                narrowed = narrow_once(args)
            except ToolArgsError:
                return ()
            return tuple(typed_effects(narrowed))

    frozen_schema = freeze_json(json_schema)
    assert isinstance(frozen_schema, FrozenDict)
    return ToolDefinition(
        name=name,
        description=description,
        parameters=frozen_schema,
        execute=run,
        present_call=call_presenter,
        present_result=result_presenter,
        timeout_ms=timeout_ms,
        read_only=read_only,
        preview_call=previewer,
        open_world=open_world,
        file_effects=effects,
    )
