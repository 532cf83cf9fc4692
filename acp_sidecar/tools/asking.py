"""An ``Ask`` on the way to a decision: the tool's preview, then the session's permissions.

With no context or no ``permissions`` to ask, an ``Ask`` is denied (the spec's rule). A
preview raising a ``ToolError`` refuses the call before anyone is asked.
"""

from __future__ import annotations

import logging

from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.context import ToolContext, permissions_of
from acp_sidecar.tools.decisions import Allow, Ask, Deny, PermissionDecision
from acp_sidecar.tools.definition import ToolDefinition
from acp_sidecar.tools.errors import ToolCancelledError, ToolError, ToolListenerError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.json_values import FrozenJson
from acp_sidecar.tools.presentation import ToolCallView, is_call_view
from acp_sidecar.tools.seams import describe, listener_failed, resolve

logger = logging.getLogger(__name__)

CANCELLED_BEFORE_PERMISSION = "Cancelled before permission was given"
"""The text of a call whose permission dialog was abandoned because the turn was cancelled."""


async def ask_permission(
    execution: ToolExecution, definition: ToolDefinition, ask: Ask
) -> PermissionDecision:
    """The decision on ``ask`` for ``execution`` (see the module invariants)."""
    handler = permissions_of(execution.context)
    if handler is None:
        why = f" ({ask.reason})" if ask.reason else ""
        return Deny(f"it needs permission{why} and there is no one to ask")
    ask = await previewed(execution, definition, ask)
    try:
        # Typed as async, but a hand-written one may answer plainly or with anything.
        asked: object = handler.ask(execution, ask)
        answer = await resolve(asked)
    except ToolCancelledError as exc:
        # The turn was cancelled while the dialog was open: not the handler's failure, and
        # the user sees this text on the card, so nothing internal goes in it.
        raise ToolCancelledError(CANCELLED_BEFORE_PERMISSION) from exc
    except Exception as exc:
        raise listener_failed("permission handler", handler.ask, exc) from exc
    if not isinstance(answer, Allow | Deny):
        raise ToolListenerError(
            f"permission handler {describe(handler.ask)} returned {type(answer).__name__}, "
            "expected Allow or Deny"
        )
    return answer


async def previewed(execution: ToolExecution, definition: ToolDefinition, ask: Ask) -> Ask:
    """``ask`` carrying the tool's call-time card (see the module invariants)."""
    if ask.preview is not None:
        return ask
    view = await call_time_view(execution, definition)
    return ask if view is None else Ask(reason=ask.reason, preview=view)


async def call_time_view(
    execution: ToolExecution, definition: ToolDefinition
) -> ToolCallView | None:
    """The tool's ``preview_call`` for ``execution``: what the call would change now, or
    ``None`` (no preview, or one that failed otherwise than with a ``ToolError``, logged).

    Raises:
        ToolError: the preview says the call would fail this way.
    """
    preview = definition.preview_call
    if preview is None:
        return None
    try:
        # Typed as async, but a hand-written definition may pass a plain function.
        view: object = await resolve(preview(execution.arguments, execution))
    except ToolError:
        raise  # the call would fail this way: nobody is asked about it
    except Exception:
        logger.exception("preview_call of %s raised; using its pending card", execution.name)
        return None
    if view is None:
        return None
    if not is_call_view(view):
        logger.error(
            "preview_call of %s returned %s, not a call view; using its pending card",
            execution.name,
            type(view).__name__,
        )
        return None
    return view


async def first_view(
    definition: ToolDefinition | None,
    call_id: str,
    arguments: FrozenJson,
    context: ToolContext | None,
    signal: CancelSignal | None = None,
) -> ToolCallView | None:
    """What a call not yet run would change now (its tool's ``preview_call``), for the card
    first drawn for it; ``None`` when there is nothing to show: no tool or preview, or a
    preview that fails, with a ``ToolError`` too (the call's run then reports it). None of the
    pipeline runs, and no listener sees the execution the preview is given."""
    if definition is None or definition.preview_call is None:
        return None
    execution = ToolExecution(
        call_id=call_id,
        name=definition.name,
        arguments=arguments,
        agent=None,
        parent=None,
        signal=signal,
        context=context,
    )
    try:
        return await call_time_view(execution, definition)
    except ToolError:
        return None
