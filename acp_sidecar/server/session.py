"""Per-session state and the running of one prompt turn through a driver.

Invariants:
- A session runs at most one turn at a time; a second ``session/prompt`` is refused.
- Once the turn's signal fires the answer is ``cancelled``, whatever the driver does; a driver
  still running ``grace`` seconds later is stopped (:mod:`acp_sidecar.server.driving`).
- Every step of a driver runs in the one task made for it, never in the request's task:
  deadlines and task groups a driver enters bind to that task.
- A prompt steered into a turn (:mod:`acp_sidecar.server.steering`) is echoed and logged
  when the driver takes it, at a step boundary; one it never took, when the turn ends; only
  then is its offerer told the id it went in under (:meth:`Steered.place`).
- Every turn that ends (not one whose request was cancelled from under it) sends one
  ``session_info_update`` (``updatedAt``, and the title its first prompt gave) before
  ``session/prompt`` answers; neither is recorded.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import attrs

from acp_sidecar.agent.driver import ClientRequests, Driver, Turn
from acp_sidecar.agent.model.budget import BudgetGate
from acp_sidecar.bridge.message_ids import MessageIds
from acp_sidecar.bridge.modes import SessionPolicy
from acp_sidecar.bridge.notices import Paragraphs
from acp_sidecar.bridge.subagents import task_card
from acp_sidecar.protocol.content import ContentBlock, TextContentBlock
from acp_sidecar.protocol.converter import to_wire
from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.protocol.session import StopReason
from acp_sidecar.protocol.tool_call import ToolCallProgress
from acp_sidecar.protocol.updates import (
    AgentMessageChunk,
    AvailableCommand,
    SessionInfoUpdate,
    SessionUpdate,
    UserMessageChunk,
)
from acp_sidecar.server.driving import drive
from acp_sidecar.server.inbox import Steered, SteeringInbox
from acp_sidecar.tools.cancel import CancelSignal, RunningCalls
from acp_sidecar.tools.context import WorkspaceRoot, fixed_roots

if TYPE_CHECKING:
    from acp_sidecar.agent.delegation import Delegate
    from acp_sidecar.bridge.policy import CallScope
    from acp_sidecar.server.recording import SessionRecorder
    from acp_sidecar.server.rule_book import RuleBook
    from acp_sidecar.store import HistoryItem
    from acp_sidecar.store.blobs import BlobStore
    from acp_sidecar.store.records import CompactionRecord, UsageRecord
    from acp_sidecar.tools.builtin.shell.jobs import JobTable
    from acp_sidecar.tools.registry import ToolRegistry

logger = logging.getLogger(__name__)

DelegateFactory = Callable[[Callable[[], Turn], dict[str, str]], "Delegate | None"]
"""Makes a turn's :attr:`Turn.delegate`: ``(parent, links) -> Delegate`` (see
:meth:`Session.run_turn`); ``parent()`` makes the turn a child works for, the turn's fields
but the delegate (made when a child starts: nothing the delegate holds holds the turn, so no
cycle keeps a turn's history alive after it)."""

ScopeFactory = Callable[
    ["Session", CancelSignal, Callable[[SessionUpdate], Awaitable[None]]], "CallScope"
]
"""Makes the call scope of one turn: ``(session, turn signal, send) -> CallScope``.

The server supplies it (it knows the client); the session calls it at most once per turn, at
the turn's first tool call, because the scope carries that turn's signal and its recording
``send``."""

DEFAULT_CANCEL_GRACE = 3.0
"""Seconds a cancelled driver may take to wind down before it is stopped.

Longer than the registry's grace for a cancelled tool (``CANCEL_GRACE_S``, 2 s), which is
longer than ``bash``'s SIGTERM-to-SIGKILL wait: a command that ignores SIGTERM is killed, its
card completed and its result logged before the turn itself is stopped. (Shutdown has its own,
shorter bound.)"""


class SessionMcp(Protocol):
    """A session's MCP servers, as the session and the connection hold them
    (:class:`~acp_sidecar.server.mcp_session.SessionServers`)."""

    def release(self) -> None:
        """Tell the problems held while the session's answer was being made."""

    async def aclose(self, grace: float | None = None) -> None:
        """Stop every server (idempotent)."""


@attrs.define
class Session:
    """One ACP session: where it works and the turn it is running."""

    session_id: str
    """The id the client names the session by."""
    cwd: str
    """The session's absolute working directory."""
    additional_directories: tuple[str, ...] = ()
    """Extra workspace roots (absolute) the tools admit like ``cwd``, as the client named them."""
    roots: tuple[WorkspaceRoot, ...] = attrs.field(
        default=attrs.Factory(
            lambda self: fixed_roots(self.cwd, self.additional_directories), takes_self=True
        )
    )
    """``cwd`` and the extra roots as the tools receive them: resolved when the session is
    made and again only by :meth:`fix_roots` (``session/load``, ``session/resume``)."""
    policy: SessionPolicy = attrs.field(factory=SessionPolicy)
    """The session's mode and remembered permission answers."""
    running: CancelSignal | None = None
    """The signal of the turn in progress, if any."""
    recorder: SessionRecorder | None = None
    """The session's log (``None`` when sessions are not stored)."""
    tools: ToolRegistry | None = None
    """The session's own registry (the server's tools and its MCP servers'); ``None``: the
    session uses the server's. Replaced, never changed, when its tools change, so a turn keeps
    the registry it started with."""
    mcp: SessionMcp | None = None
    """The session's MCP servers, if it named any."""
    idle: asyncio.Event = attrs.field(factory=lambda: _set(asyncio.Event()))
    """Set while no turn runs (``session/close`` waits on it for a cancelled turn to end)."""
    model: str | None = None
    """The model the session chose (its ``model`` config option); ``None``: the driver's
    default. Read when a turn starts: a switch applies from the next turn's requests."""
    reasoning_effort: str | None = None
    """The reasoning effort the session chose; ``None``: the endpoint's default (not sent).
    Set only while the chosen model accepts one (:mod:`acp_sidecar.server.config_options`)."""
    budget: BudgetGate = attrs.field(factory=BudgetGate)
    """The session's budget (``/budget``), which its model turns are counted against."""
    allow_outside_workspace: bool | None = None
    """Whether its tools may work outside its directories, as the session chose (its boolean
    ``allow_outside_workspace`` option); ``None``: the setting's value."""
    title: str | None = None
    """The session's title, from its first prompt (``None``: no prompt yet, or one with no
    text to make a title of)."""
    prompted: bool = False
    """Whether the session had its first prompt (the one its title comes from)."""
    paragraphs: Paragraphs = attrs.field(factory=Paragraphs)
    """Where the agent message shown ends (the sidecar's own texts get paragraphs)."""
    message_ids: MessageIds = attrs.field(factory=MessageIds)
    """Which message the session's updates are in (every chunk carries its id)."""
    inbox: SteeringInbox | None = None
    """Where prompts steered into the running turn wait for its driver (``None``: no turn
    runs, or its driver does not take steering)."""
    steering: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    """Held by a steer that waits to start a turn of its own (one at a time, in order)."""
    rules: RuleBook | None = None
    """The session's permission rules in force, made with its first turn's call scope or
    ``/permissions`` (``None``: not yet)."""
    jobs: JobTable | None = None
    """The ``bash`` calls kept running (``background``, ``/keep``), stopped when the session
    closes; made with the first turn's call scope (``None``: no turn ran yet)."""
    blobs: BlobStore | None = None
    """Where its before-images go, found with the first turn's call scope."""
    used: list[UsageRecord] = attrs.Factory(list)
    """What the model's responses of the last (or running) turn used, its children's too."""
    calls: RunningCalls = attrs.field(factory=RunningCalls)
    """Its tool calls while they run, each cancellable alone (its turns' call scopes share it)."""

    def fix_roots(self) -> None:
        """Resolve the session's roots now, as they are on disk (at ``new``, ``load`` and
        ``resume`` only: a root swapped for a link afterwards must not move the boundary)."""
        self.roots = fixed_roots(self.cwd, self.additional_directories)

    def cancel(self, reason: str) -> bool:
        """Cancel the running turn, if any; whether there was one."""
        if self.running is None:
            return False
        self.running.cancel(reason)
        return True

    async def run_turn(
        self,
        driver: Driver,
        prompt: list[ContentBlock],
        send: Callable[[str, SessionUpdate], Awaitable[None]],
        client: ClientRequests,
        make_scope: ScopeFactory,
        *,
        grace: float = DEFAULT_CANCEL_GRACE,
        inform: Callable[[str], None] | None = None,
        waiting: Callable[[str, bool], None] | None = None,
        started: Callable[[], None] | None = None,
        accepted: Callable[[str], None] | None = None,
        command: str | None = None,
        commands: tuple[AvailableCommand, ...] = (),
        delegating: DelegateFactory | None = None,
    ) -> StopReason:
        """Run one prompt turn; refuses to start while another turn runs. ``started`` is
        called once it runs, ``accepted`` with the prompt's id once it is echoed; prompts
        steered into it are echoed and logged when the driver takes them (what it never took,
        when it ends). ``command``: the session command the
        prompt runs (``driver`` runs it), logged with the prompt so no model reads the turn;
        ``commands``: the session's own commands, for the driver's help. ``delegating`` makes
        the turn's :attr:`Turn.delegate`, given the turn and where each task call's child id
        goes (its card's later updates keep the link to the child)."""
        if self.running is not None:
            raise AcpError.invalid_request(
                f"Invalid request: session {self.session_id} is already running a prompt turn"
            )
        signal = CancelSignal()
        session_id = self.session_id
        recorder = self.recorder
        used: list[UsageRecord] = []
        self.used = used

        def keep(record: UsageRecord | CompactionRecord) -> None:
            from acp_sidecar.store import records  # the driver's: loaded by now

            if isinstance(record, records.UsageRecord):
                used.append(record)
            if recorder is not None:
                recorder.keep(record)

        history: tuple[HistoryItem, ...] = ()
        ids = self.message_ids
        prompt_id = ids.user_message()  # the client's own messageId, if any, is not ours
        if recorder is not None:
            if driver.wants_history:
                history = recorder.history()
            recorder.prompt(prompt, prompt_id, command)
        titled = None if self.prompted else self._title_from(prompt)
        paragraphs = self.paragraphs
        paragraphs.new_message()

        links: dict[str, str] = {}

        async def send_update(update: SessionUpdate) -> None:
            update = ids.stamp(update)
            if recorder is not None:
                recorder.update(update)
            if links and type(update) is ToolCallProgress and update.tool_call_id in links:
                for shown in task_card(update, session_id, links[update.tool_call_id]):
                    await send(session_id, shown)
                return
            await send(session_id, paragraphs.shown(update))

        def log_prompt(blocks: Sequence[ContentBlock]) -> str:
            message_id = ids.user_message()
            if recorder is not None:
                recorder.prompt(blocks, message_id)
            paragraphs.new_message()
            return message_id

        async def insert(steered: Steered) -> None:
            message_id = log_prompt(steered.prompt)
            await echo(steered.prompt, message_id)
            steered.place(message_id)

        async def echo(blocks: Sequence[ContentBlock], message_id: str) -> None:
            for block in blocks:  # the prompt echoed, under the id the agent gave it
                await send(session_id, UserMessageChunk(content=block, message_id=message_id))

        inbox = SteeringInbox() if driver.steers else None
        scopes: list[CallScope] = []

        def open_scope() -> CallScope:
            if not scopes:
                scopes.append(make_scope(self, signal, send_update))
            return scopes[0]

        async def take_steered(last: bool) -> tuple[tuple[ContentBlock, ...], ...]:
            assert inbox is not None
            taken = inbox.take(last)
            for steered in taken:
                await insert(steered)
            return tuple(steered.prompt for steered in taken)

        async def send_notice(text: str, blocks: Sequence[ContentBlock] = ()) -> None:
            await self.notice(send, text, blocks)

        # Read now, not when a task call makes the parent turn (a model chosen meanwhile
        # applies from the next turn).
        cwd, tools, model, effort, budget = (
            self.cwd,
            self.tools,
            self.model,
            self.reasoning_effort,
            self.budget,
        )
        prompt_blocks = tuple(prompt)
        record_call = None if recorder is None else recorder.record_call_event
        taking = None if inbox is None else take_steered

        def make_turn(delegate: Delegate | None = None) -> Turn:
            return Turn(
                session_id=session_id,
                cwd=cwd,
                prompt=prompt_blocks,
                signal=signal,
                send=send_update,
                client=client,
                scope=open_scope,
                record=record_call,
                history=history,
                notice=send_notice,
                tools=tools,
                model=model,
                reasoning_effort=effort,
                budget=budget,
                inform=inform,
                waiting=waiting,
                keep=keep,
                commands=commands,
                steered=taking,
                delegate=delegate,
            )

        turn = make_turn(None if delegating is None else delegating(make_turn, links))
        self.running = signal
        self.inbox = inbox
        self.idle.clear()
        if started is not None:
            started()
        ended = "error"  # what the log says if the driver fails
        try:
            await echo(prompt, prompt_id)
            if accepted is not None:
                accepted(prompt_id)
            stop_reason = await drive(driver, turn, grace)
            ended = stop_reason
            for steered in () if inbox is None else inbox.close():
                await insert(steered)  # steered in, never taken
        except asyncio.CancelledError:
            ended = "cancelled"
            raise
        finally:
            for steered in () if inbox is None else inbox.close():
                steered.place(log_prompt(steered.prompt))  # torn down: logged all the same
            self.running = None
            self.inbox = None
            ids.end()
            if recorder is not None:
                recorder.end_turn(ended)
            self.idle.set()
        await self._announce(send, SessionInfoUpdate(title=titled, updated_at=_now()))
        return stop_reason

    async def notice(
        self,
        send: Callable[[str, SessionUpdate], Awaitable[None]],
        text: str,
        blocks: Sequence[ContentBlock] = (),
    ) -> None:
        """Tell the user ``text`` (then ``blocks``) in the agent's voice, in the agent message
        open if any, and log it as a notice."""
        message_id = self.message_ids.agent_text()
        if self.recorder is not None:
            # Not as agent text: the model must not read it as its own.
            self.recorder.notice(text, message_id=message_id, blocks=blocks)
        shown = TextContentBlock(text=self.paragraphs.notice(text))
        await send(self.session_id, AgentMessageChunk(content=shown, message_id=message_id))
        for block in blocks:
            await send(self.session_id, AgentMessageChunk(content=block, message_id=message_id))

    def _title_from(self, prompt: list[ContentBlock]) -> str | None:
        """Take the session's title from its first prompt (``None``: it gives none)."""
        from acp_sidecar.store.listing import title_of

        self.prompted = True
        self.title = title_of(tuple(to_wire(block) for block in prompt))
        return self.title

    async def _announce(
        self, send: Callable[[str, SessionUpdate], Awaitable[None]], info: SessionUpdate
    ) -> None:
        """Send a session update about the session itself; a failure is logged, never the
        turn's (the update describes the session, the turn is the user's work)."""
        try:
            await send(self.session_id, info)
        except Exception:
            logger.exception("announcing the session's info failed")


def _now() -> str:
    """The current time as ``updatedAt`` takes it (the store's form)."""
    if not _clock:
        from acp_sidecar.store.records import timestamp_now  # the store: not at start

        _clock.append(timestamp_now)
    return _clock[0]()


_clock: list[Callable[[], str]] = []
"""The store's ``timestamp_now``, once a turn ended (an import each turn costs twice its call)."""


def _set(event: asyncio.Event) -> asyncio.Event:
    event.set()
    return event
