"""The execute wrapper that keeps a call's declared file effects undoable.

Before a tool that declares file effects runs, the session's keeper stores each declared
path's before-image; after it ran (also when it failed: a failed call may have changed
something), the keeper records what it left. A keeper's failure never fails the call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import attrs

from acp_sidecar.bridge.policy import CallScope
from acp_sidecar.tools.definition import ToolDefinition
from acp_sidecar.tools.effects import UNDO_NOTE
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.json_values import FrozenDict
from acp_sidecar.tools.result import ToolExecutionResult
from acp_sidecar.tools.seams import ExecuteWrapper, NextExecute

logger = logging.getLogger(__name__)


def keep_file_effects(lookup: Callable[[str], ToolDefinition | None]) -> ExecuteWrapper:
    """The wrapper (innermost: it runs after every permission check) for ``lookup``'s tools."""

    async def keep(execution: ToolExecution, next_: NextExecute) -> ToolExecutionResult:
        scope = execution.context
        definition = lookup(execution.name)
        declared = None if definition is None else definition.file_effects
        if not isinstance(scope, CallScope) or scope.effects is None or declared is None:
            return await next_()
        keeper = scope.effects
        try:
            effects = declared(execution.arguments)
            token = await keeper.before(execution.call_id, effects) if effects else None
        except Exception:
            logger.exception("keeping the before-images of call %s failed", execution.call_id)
            token = None
        result = await next_()
        if token is None:
            return result
        try:
            note = await keeper.after(token)
        except Exception:
            logger.exception("recording the file changes of call %s failed", execution.call_id)
            return result
        return result if note is None else with_note(result, note)

    return keep


def with_note(result: ToolExecutionResult, note: str) -> ToolExecutionResult:
    """``result`` with ``note`` in its meta, for its card (see :func:`undo_note`)."""
    meta = result.meta if isinstance(result.meta, FrozenDict) else FrozenDict({})
    return attrs.evolve(result, meta={**meta, UNDO_NOTE: note})
