"""Session modes and permissions: the pre-execute policy and the editor's permission dialog.

Invariants:
- Modes: ``ask`` (the default) asks before calls whose card kind is edit, delete, move or
  execute; ``auto`` allows everything; ``read-only`` denies those kinds with a clear reason.
  The policy listener delegates first, so a plugin's own ``Deny`` always stands. In ``auto``
  a plugin's ``Ask`` is allowed too: the user chose not to be asked.
- An ``Ask`` becomes ``session/request_permission`` with the pending card and the options
  allow once / allow always / reject once / reject always. "Always" is remembered for that
  session and tool. A ``cancelled`` outcome denies the call and cancels the turn.
- Calls run outside a session (no :class:`CallScope` on the execution) are left alone: with
  no one to ask, the registry degrades ``Ask`` to deny.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final, Protocol, assert_never

import attrs

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.modes import RISKY_KINDS, SessionPolicy
from acp_sidecar.protocol import (
    CancelledPermissionOutcome,
    PermissionOption,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    SessionUpdate,
    ToolCallStart,
    ToolCallUpdate,
)
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.context import EditorFiles
from acp_sidecar.tools.decisions import Allow, Ask, Deny, PermissionDecision, PreToolDecision
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.presentation import (
    DiffCallView,
    GenericCallView,
    TerminalCallView,
    ToolCallKind,
    ToolCallView,
)
from acp_sidecar.tools.registry import NextPre, ToolRegistry

logger = logging.getLogger(__name__)

ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE, REJECT_ALWAYS = (
    "allow_once",
    "allow_always",
    "reject_once",
    "reject_always",
)
OPTIONS: Final = [
    PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=ALLOW_ALWAYS, name="Always allow", kind="allow_always"),
    PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
    PermissionOption(option_id=REJECT_ALWAYS, name="Always reject", kind="reject_always"),
]


def view_kind(view: ToolCallView) -> ToolCallKind:
    """The kind a card is shown with (what the mode policy judges)."""
    match view:
        case GenericCallView():
            return view.kind or "other"
        case DiffCallView():
            return "edit"
        case TerminalCallView():
            return "execute"
        case _:
            assert_never(view)


class PermissionAsker(Protocol):
    """Sends ``session/request_permission`` to the editor."""

    async def request_permission(
        self, request: RequestPermissionRequest, *, signal: CancelSignal | None = None
    ) -> RequestPermissionResponse: ...


@attrs.frozen(eq=False)
class CallScope:
    """What a call made inside a session carries as its ``agent``: the session's seams.

    It is also the tools' :class:`~acp_sidecar.tools.context.ToolContext` (``cwd``,
    ``allow_outside_workspace``, ``files``).
    """

    session_id: str
    cards: CardContext
    policy: SessionPolicy
    send: Callable[[SessionUpdate], Awaitable[None]]
    """Sends a ``session/update`` for this session."""
    asker: PermissionAsker
    signal: CancelSignal
    """The turn's signal; a cancelled permission dialog cancels it."""
    allow_outside_workspace: bool = False
    """Tools may touch paths outside the session cwd."""
    files: EditorFiles | None = None
    """The editor's files, when the client offers ``fs/*``."""
    pending: dict[str, tuple[ToolCallStart, ToolCallView]] = attrs.field(factory=dict)
    """Open cards by call id (for the permission dialog and the mode policy)."""

    @property
    def cwd(self) -> str:
        """The session's absolute working directory."""
        return self.cards.cwd


def _scope(execution: ToolExecution) -> CallScope | None:
    agent = execution.agent
    return agent if isinstance(agent, CallScope) else None


async def mode_policy(execution: ToolExecution, next_: NextPre) -> PreToolDecision:
    """The pre-execute listener that applies the session's mode."""
    decision = await next_()
    scope = _scope(execution)
    if scope is None or isinstance(decision, Deny):
        return decision
    opened = scope.pending.get(execution.call_id)
    risky = opened is not None and view_kind(opened[1]) in RISKY_KINDS
    match scope.policy.mode:
        case "auto":
            return Allow()
        case "read-only":
            if risky:
                return Deny(f"the session is in read-only mode, which refuses {execution.name}")
            return decision
        case "ask":
            return Ask(f"{execution.name} changes the workspace") if risky else decision
        case _:
            assert_never(scope.policy.mode)


def permission_request(scope: CallScope, call_id: str) -> RequestPermissionRequest:
    """The dialog for a pending call: its card as drawn, and the four options."""
    opened = scope.pending.get(call_id)
    if opened is None:
        card = ToolCallUpdate(tool_call_id=call_id, status="pending")
    else:
        start = opened[0]
        card = ToolCallUpdate(
            tool_call_id=call_id,
            title=start.title,
            kind=start.kind,
            status="pending",
            content=start.content,
            locations=start.locations,
            raw_input=start.raw_input,
            meta=start.meta,
        )
    return RequestPermissionRequest(session_id=scope.session_id, tool_call=card, options=OPTIONS)


async def ask_the_editor(execution: ToolExecution, ask: Ask) -> PermissionDecision:
    """The registry's permission handler: remembered answers first, then the dialog."""
    scope = _scope(execution)
    if scope is None:
        return Deny("it needs permission and there is no one to ask")
    remembered = scope.policy.always.get(execution.name)
    if remembered is not None:
        return Allow() if remembered else Deny("the user always rejects this tool")
    response = await scope.asker.request_permission(
        permission_request(scope, execution.call_id), signal=scope.signal
    )
    match response.outcome:
        case CancelledPermissionOutcome():
            scope.signal.cancel("the permission request was cancelled")
            return Deny("the user cancelled the turn")
        case SelectedPermissionOutcome(option_id=option):
            if option == ALLOW_ONCE:
                return Allow()
            if option == ALLOW_ALWAYS:
                scope.policy.always[execution.name] = True
                return Allow()
            if option == REJECT_ALWAYS:
                scope.policy.always[execution.name] = False
                return Deny("the user rejected it (always)")
            if option == REJECT_ONCE:
                return Deny("the user rejected it")
            logger.warning("unknown permission option %r; treating it as reject", option)
            return Deny(f"the editor answered with an unknown option {option!r}")
        case _:
            assert_never(response.outcome)


def install_policy(registry: ToolRegistry) -> Callable[[], None]:
    """Plug the mode policy, the permission dialog and dispatch announcements into a registry.

    Returns a function that takes them out again.
    """
    from acp_sidecar.bridge.runner import announce_dispatch

    removers = [
        registry.on_pre_execute(mode_policy),
        registry.on_execute(announce_dispatch, prepend=True),
    ]
    previous = registry.permission_handler
    registry.permission_handler = ask_the_editor

    def remove() -> None:
        for remover in removers:
            remover()
        registry.permission_handler = previous

    return remove
