"""Small builders shared by the tool-pipeline tests."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from acp_sidecar.tools.context import fixed_roots
from acp_sidecar.tools.definition import ToolDefinition
from acp_sidecar.tools.execution import ToolExecution, ToolExecutionInput
from acp_sidecar.tools.json_values import freeze_json

OBJECT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "integer"}}}


async def echo(args: Any, execution: ToolExecution) -> str:
    return f"echo {args.get('x')}"


def raw_tool(
    name: str = "echo",
    execute: Callable[[Any, ToolExecution], Awaitable[Any]] = echo,
    **fields: Any,
) -> ToolDefinition:
    return ToolDefinition(
        name=name,
        description=f"the {name} tool",
        parameters=freeze_json(OBJECT_SCHEMA),  # type: ignore[arg-type]
        execute=execute,
        **fields,
    )


def call(
    name: str = "echo", arguments: object = None, call_id: str = "c1", **kw: Any
) -> ToolExecutionInput:
    return ToolExecutionInput(
        call_id=call_id, name=name, arguments={"x": 1} if arguments is None else arguments, **kw
    )


class Asking:
    """A session context whose permission system answers each ``Ask`` with ``ask``."""

    def __init__(self, ask: Callable[..., Any]) -> None:
        self.ask = ask  # the registry calls ``permissions.ask(execution, ask)``
        self.cwd = os.getcwd()
        self.allow_outside_workspace = False
        self.roots = fixed_roots(self.cwd)
        self.files = None

    @property
    def permissions(self) -> Asking:
        return self
