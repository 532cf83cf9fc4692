"""Session modes and permissions: the pre-execute policy and the editor's permission dialog.

What is risky is what the tool declares (not ``read_only``, or an ``open_world`` reader), never
how its card is drawn; a plugin's own ``Deny`` always stands. The session's permission rules
(:mod:`.rules`) decide before the mode, which still caps them (``read-only`` refuses a risky
call whatever a rule allows). An ``Ask`` becomes ``session/request_permission``; an "always"
answer writes a rule to the scope chosen. Every decision is reported to the
:class:`PermissionRecorder`, whose failure never fails a call.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol, assert_never

import attrs

from acp_sidecar.bridge.cards import call_start, status_update
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.modes import SessionPolicy
from acp_sidecar.bridge.permission_options import _WHERE, ALWAYS, ANSWERS, permission_options
from acp_sidecar.bridge.rules import (
    Origin,
    Rule,
    RuleScope,
    RuleSet,
    SessionRules,
    Verdict,
    call_facts,
    deciding_rule,
)
from acp_sidecar.protocol import (
    CancelledPermissionOutcome,
    PermissionOption,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
    SessionUpdate,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)
from acp_sidecar.store.records import PermissionAnswer
from acp_sidecar.tools.cancel import CancelSignal, RunningCalls
from acp_sidecar.tools.context import (
    EditorFiles,
    PermissionCall,
    SessionPermissions,
    WorkspaceRoot,
    fixed_roots,
    permissions_of,
)
from acp_sidecar.tools.decisions import Allow, Ask, Deny, PermissionDecision, PreToolDecision
from acp_sidecar.tools.definition import ToolDefinition
from acp_sidecar.tools.errors import ToolCancelledError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.presentation import ToolCallView
from acp_sidecar.tools.registry import ToolRegistry
from acp_sidecar.tools.result import ToolExecutionResult
from acp_sidecar.tools.seams import NextExecute, NextPre, PreExecuteListener

if TYPE_CHECKING:
    from acp_sidecar.tools.builtin.shell.jobs import JobTable
    from acp_sidecar.tools.effects import FileEffectKeeper

logger = logging.getLogger(__name__)


class PermissionRecorder(Protocol):
    """Keeps a session's permission decisions for later views (the server hands the session's
    log recorder; the bridge does not know the store)."""

    def permission_asked(self, call_id: str, tool: str, options: Sequence[str]) -> None:
        """The user is being asked about ``call_id`` of ``tool``, offered ``options`` (ids)."""

    def permission_answered(self, call_id: str, tool: str, answer: PermissionAnswer) -> None:
        """The user answered the dialog about ``call_id``."""

    def permission_ruled(self, call_id: str, tool: str, verdict: Verdict, rule: Rule) -> None:
        """``rule`` decided ``call_id`` (``verdict``: allowed, refused or asked about)."""


class PermissionAsker(Protocol):
    """Sends ``session/request_permission`` to the editor (the server's client implements it)."""

    async def request_permission(
        self, request: RequestPermissionRequest, *, signal: CancelSignal | None = None
    ) -> RequestPermissionResponse: ...


@attrs.frozen(eq=False)
class CallScope:
    """What a call made inside a session carries as its ``context``: the session's seams.

    It is the tools' :class:`~acp_sidecar.tools.context.ToolContext` (``cwd``,
    ``allow_outside_workspace``, ``roots``, ``files``) and its own
    ``permissions``: the session's mode and the editor's permission dialog.
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
    roots: tuple[WorkspaceRoot, ...] = attrs.field(
        default=attrs.Factory(lambda self: fixed_roots(self.cards.cwd), takes_self=True)
    )
    """The session's workspace roots as it fixed them (default: its cwd, resolved now)."""
    files: EditorFiles | None = None
    """The editor's files, when the client offers ``fs/*``."""
    pending: dict[str, tuple[ToolCallStart, ToolCallView]] = attrs.field(factory=dict)
    """Open cards by call id (the permission dialog shows them)."""
    rules: SessionRules | None = None
    """The session's rules in force (``None``: only the session's own, in ``policy``)."""
    declared: weakref.WeakKeyDictionary[PermissionCall, tuple[bool, bool]] = attrs.field(
        factory=weakref.WeakKeyDictionary
    )
    """What each call's tool declared when the policy judged it (what a session rule an
    "always" answer writes is kept with); gone with the call."""
    decisions: PermissionRecorder | None = None
    """Where the session's permission decisions are recorded (``None``: nowhere)."""
    jobs: JobTable | None = None
    """The session's kept jobs (what ``bash`` with ``background`` adds to)."""
    calls: RunningCalls = attrs.field(factory=RunningCalls)
    """The session's calls running now, each under its own signal (``runner.execute_call``)."""
    effects: FileEffectKeeper | None = None
    """Keeps the before-images of the files calls declare they change (``None``: the
    session keeps none, and nothing it does can be undone)."""

    @property
    def cwd(self) -> str:
        """The session's absolute working directory."""
        return self.cards.cwd

    @property
    def permissions(self) -> SessionPermissions:
        """The session's permission system: this scope."""
        return self

    @property
    def session_rules(self) -> SessionRules:  # its own only, when no others were handed
        return self.rules if self.rules is not None else OwnRules(self.policy)

    def judge(
        self, call: PermissionCall, risky: bool, decision: PreToolDecision, *, open_world: bool
    ) -> PreToolDecision:
        """The rules' verdict, capped by the mode's (see :func:`judge` and :func:`ruled`)."""
        moded = judge(self.policy, call.name, risky, decision, open_world=open_world)
        if self.policy.mode == "read-only" and risky:
            return moded  # the cap: no rule widens read-only, and its refusal says why
        rule = self._deciding_rule(call, (risky, open_world))
        if rule is None:
            return moded
        _record(self, lambda r: r.permission_ruled(call.call_id, call.name, rule.verdict, rule))
        return ruled(rule, call.name, decision)

    def _deciding_rule(self, call: PermissionCall, risk: tuple[bool, bool]) -> Rule | None:
        self.declared[call] = risk
        try:
            rules = self.session_rules.rule_set().rules
            if not rules:
                return None
            facts = call_facts(call.name, call.arguments, self.cwd, risk)
            return deciding_rule(rules, facts, self.roots)
        except Exception:
            logger.exception("the permission rules could not judge call %s", call.call_id)
            return None

    async def ask(self, call: PermissionCall, ask: Ask) -> PermissionDecision:
        """The editor's dialog (see :func:`ask_the_editor`)."""
        return await ask_the_editor(self, call, ask)

    async def cleared(self, call: PermissionCall) -> None:
        """Tell the editor the call is now running."""
        await self.send(status_update(call.call_id, "in_progress"))


@attrs.frozen
class OwnRules:
    """A session's own rules alone (a scope handed no others): the session scope only."""

    policy: SessionPolicy

    def rule_set(self) -> RuleSet:
        return RuleSet(tuple(self.policy.rules), name=f"session ({len(self.policy.rules)})")

    def scopes(self) -> tuple[RuleScope, ...]:
        return ("session",)

    def remember(self, rule: Rule, scope: RuleScope) -> None:
        if scope != "session":
            raise ValueError(f"no {scope} rules here")
        if rule not in self.policy.rules:
            self.policy.rules.append(rule)


def ruled(rule: Rule, name: str, decision: PreToolDecision) -> PreToolDecision:
    """What ``rule`` makes of a call of ``name`` the other listeners decided ``decision`` for
    (an ``Ask`` of theirs keeps its preview)."""
    match rule.verdict:
        case "deny":
            return Deny(f"the permission rule `{rule}` ({rule.origin}) refuses {name}")
        case "ask":
            if isinstance(decision, Ask):
                return decision
            return Ask(f"the permission rule `{rule}` ({rule.origin}) asks about {name}")
        case "allow":
            return Allow()
        case _:
            assert_never(rule.verdict)


def may_change_things(definition: ToolDefinition | None) -> bool:
    """Whether calls of a tool need the user's consent: all but those declared read-only."""
    return definition is None or not definition.read_only


def reaches_open_world(definition: ToolDefinition | None) -> bool:
    """Whether a tool declared that it reaches outside the machine (an unknown one is treated
    as able to change things, which already covers it)."""
    return definition is not None and definition.open_world


def mode_policy(lookup: Callable[[str], ToolDefinition | None]) -> PreExecuteListener:
    """The pre-execute listener that applies the session's mode to a registry's tools."""

    async def apply_mode(execution: ToolExecution, next_: NextPre) -> PreToolDecision:
        decision = await next_()
        permissions = permissions_of(execution.context)
        if permissions is None or isinstance(decision, Deny):
            return decision
        definition = lookup(execution.name)
        return permissions.judge(
            execution,
            may_change_things(definition),
            decision,
            open_world=reaches_open_world(definition),
        )

    return apply_mode


async def announce_dispatch(execution: ToolExecution, next_: NextExecute) -> ToolExecutionResult:
    """The outermost execute wrapper: tells the session the call passed every check."""
    permissions = permissions_of(execution.context)
    if permissions is not None:
        await permissions.cleared(execution)
    return await next_()


def judge(
    policy: SessionPolicy,
    name: str,
    risky: bool,
    decision: PreToolDecision,
    *,
    open_world: bool = False,
) -> PreToolDecision:
    """The mode's verdict on a call the other listeners decided ``decision`` for.

    ``risky``: the tool may change things (not declared read-only); ``open_world``: it
    reaches outside the machine. ``read-only`` mode looks only at ``risky`` (a read-only
    fetcher reads); ``ask`` asks about either.
    """
    match policy.mode:
        case "auto":
            return Allow()
        case "read-only":
            if risky:
                return Deny(
                    f"the session is in read-only mode, which refuses {name} "
                    "(it is not declared read-only)"
                )
            return decision
        case "ask":
            if risky:
                return Ask(f"{name} may change the workspace")
            if open_world:
                return Ask(f"{name} reaches outside this machine")
            return decision
        case _:
            assert_never(policy.mode)


def asked_card(
    scope: CallScope, execution: PermissionCall, preview: ToolCallView | None
) -> ToolCallStart | None:
    """The card the user is asked about: the call-time preview drawn, else the pending card.

    A preview that cannot be drawn is logged and the pending card is used.
    """
    call_id = execution.call_id
    if preview is not None:
        try:
            return call_start(
                call_id, preview, scope.cards, execution.arguments, name=execution.name
            )
        except Exception:
            logger.exception("the preview of call %s could not be drawn", call_id)
    opened = scope.pending.get(call_id)
    return None if opened is None else opened[0]


def preview_update(start: ToolCallStart) -> ToolCallProgress:
    """The pending card redrawn from its call-time preview (status stays ``pending``)."""
    return ToolCallProgress(
        tool_call_id=start.tool_call_id,
        title=start.title,
        kind=start.kind,
        content=start.content,
        locations=start.locations,
        raw_input=start.raw_input,
        meta=start.meta,
    )


def permission_request(
    session_id: str,
    call_id: str,
    start: ToolCallStart | None,
    options: list[PermissionOption] | None = None,
) -> RequestPermissionRequest:
    """The dialog for a pending call: its card as it is asked about, and ``options`` (default:
    once, and always in the session)."""
    if start is None:
        card = ToolCallUpdate(tool_call_id=call_id, status="pending")
    else:
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
    if options is None:
        options = permission_options("it", ("session",))
    return RequestPermissionRequest(session_id=session_id, tool_call=card, options=options)


async def ask_the_editor(
    scope: CallScope, execution: PermissionCall, ask: Ask
) -> PermissionDecision:
    """A session's answer to an ``Ask``: the editor's dialog; an "always" answer is kept as a
    rule for the tool in the scope chosen (one not kept is logged; it still decides the call)."""
    call_id, name = execution.call_id, execution.name
    rules = scope.session_rules
    try:
        scopes = rules.scopes()
    except Exception:
        logger.exception("the permission rules' scopes could not be listed")
        scopes = ("session",)
    start = asked_card(scope, execution, ask.preview)
    opened = scope.pending.get(call_id)
    redrawn = opened is None or opened[1] != ask.preview
    if ask.preview is not None and start is not None and redrawn:
        await scope.send(preview_update(start))
    options = permission_options(name, scopes)
    request = permission_request(scope.session_id, call_id, start, options)
    offered = [option.option_id for option in request.options]
    _record(scope, lambda r: r.permission_asked(call_id, name, offered))
    try:
        response = await scope.asker.request_permission(request, signal=scope.signal)
    except (ToolCancelledError, asyncio.CancelledError):
        _record(scope, lambda r: r.permission_answered(call_id, name, "cancelled"))
        raise
    match response.outcome:
        case CancelledPermissionOutcome():
            _record(scope, lambda r: r.permission_answered(call_id, name, "cancelled"))
            scope.signal.cancel("the permission request was cancelled")
            raise ToolCancelledError("the permission request was cancelled")
        case SelectedPermissionOutcome(option_id=option):
            answer = next((known for known in ANSWERS if known == option), None)
            if answer is None:
                logger.warning("unknown permission option %r; treating it as reject", option)
                _record(scope, lambda r: r.permission_answered(call_id, name, "reject_once"))
                return Deny(f"the editor answered with an unknown option {option!r}")
            chosen = answer
            _record(scope, lambda r: r.permission_answered(call_id, name, chosen))
            match answer:
                case "allow_once":
                    return Allow()
                case "reject_once":
                    return Deny("the user rejected it")
                case "cancelled":
                    raise AssertionError("not an option")
                case (
                    "allow_always"
                    | "allow_always_project"
                    | "allow_always_user"
                    | "reject_always"
                    | "reject_always_project"
                    | "reject_always_user"
                ):
                    verdict, where = ALWAYS[answer]
                    risk = scope.declared.get(execution) if where == "session" else None
                    _keep(rules, Rule(verdict, name, origin=Origin(where), risk=risk), where)
                    if verdict == "allow":
                        return Allow()
                    return Deny(f"the user rejected it (always, {_WHERE[where]})")
                case _:
                    assert_never(answer)
        case _:
            assert_never(response.outcome)


def _keep(rules: SessionRules, rule: Rule, where: RuleScope) -> None:
    try:
        rules.remember(rule, where)
    except Exception:
        logger.exception("the rule `%s` could not be kept (%s)", rule, where)


def _record(scope: CallScope, note: Callable[[PermissionRecorder], None]) -> None:
    """Report a decision to the scope's recorder, if any; a failing recorder is logged, never
    raised: the decision stands."""
    if scope.decisions is None:
        return
    try:
        note(scope.decisions)
    except Exception:
        logger.exception("recording a permission decision failed")


def install_policy(registry: ToolRegistry) -> Callable[[], None]:
    """Plug the mode policy and dispatch announcements into a registry (shared by sessions;
    each call reaches its own session through its context).

    Returns a function that takes them out again.
    """
    removers = [
        registry.on_pre_execute(mode_policy(registry.get)),
        registry.on_execute(announce_dispatch, prepend=True),
    ]

    def remove() -> None:
        for remover in removers:
            remover()

    return remove
