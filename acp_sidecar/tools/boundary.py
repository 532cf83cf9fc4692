"""The registry's value boundaries: a definition on ``register``, a call's input on ``execute``.

Both read caller-owned, only type-hinted objects once and keep frozen copies. A call's
``parent`` must be exactly a :class:`ToolExecutionToken`: a live execution would hand the
nested call's listeners the enclosing call's mutable state.
"""

from __future__ import annotations

import math
import re
from collections.abc import Container
from typing import Any

from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.definition import ToolDefinition
from acp_sidecar.tools.errors import ToolError, ToolInputError, ToolRegistrationError
from acp_sidecar.tools.execution import ToolExecution, ToolExecutionInput, ToolExecutionToken
from acp_sidecar.tools.json_values import FrozenDict, JsonValueError, freeze_json, json_violations

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""Tool names every OpenAI-compatible provider accepts."""


def snapshot_definition(definition: object, taken: Container[str]) -> ToolDefinition:
    """The frozen snapshot of a definition (a :class:`ToolDefinition` or any object with its
    fields): parameters deep-frozen, callbacks read once (a method stays bound to its object).

    Raises:
        ToolRegistrationError: the name is in ``taken``, or a field is invalid (all listed).
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
    file_effects = getattr(definition, "file_effects", None)
    if file_effects is not None and not callable(file_effects):
        problems.append("file_effects: expected a callable or None")
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
    if not problems and name in taken:
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
        file_effects=file_effects,
    )
    return snapshot


def admit_call(request: ToolExecutionInput) -> tuple[ToolExecution, ToolError | None]:
    """The execution of one call, and why its input is refused (``None`` when it is not).

    A refused call's execution carries no signal and no progress sink: nothing may run.
    """
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
    return execution, rejected
