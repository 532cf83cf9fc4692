"""One ACP connection: its state (client capabilities, sessions, driver, store), the client
proxy, sending updates, and :meth:`Connection.tell`, the one way the user is told something.

Invariants: this module knows no handler (:mod:`.handlers` uses it, :mod:`.app` registers
them); what the sidecar tells the user outside a turn's stream goes through :meth:`tell`, and
what must follow an answer on the wire through :meth:`after_answer`.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Protocol

import attrs
from pygls.server import JsonRPCServer

from acp_sidecar.agent.driver import Driver, DriverFactory
from acp_sidecar.agent.model.budget import NO_LIMITS, Limits
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.message_ids import new_message_id
from acp_sidecar.bridge.modes import DEFAULT_MODE, ModeId
from acp_sidecar.bridge.notices import UserMessage, user_updates
from acp_sidecar.protocol.converter import converter, to_wire
from acp_sidecar.protocol.errors import RESOURCE_NOT_FOUND, AcpError
from acp_sidecar.protocol.initialize import ClientCapabilities
from acp_sidecar.protocol.updates import SessionUpdate
from acp_sidecar.server.children import ChildSession
from acp_sidecar.server.client import ClientProxy, Elicitor
from acp_sidecar.server.drivers import DriverSlot
from acp_sidecar.server.driving import SHUTDOWN
from acp_sidecar.server.files import ClientFiles
from acp_sidecar.server.held import HeldLogs
from acp_sidecar.server.messages import shown_id, throttled
from acp_sidecar.server.session import DEFAULT_CANCEL_GRACE, Session
from acp_sidecar.server.transport import AcpJsonRpcProtocol
from acp_sidecar.tools.cancel import CancelSignal

if TYPE_CHECKING:
    from pathlib import Path

    # The tool pipeline is imported when the first turn runs, not at start-up.
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.bridge.policy import CallScope, PermissionAsker
    from acp_sidecar.bridge.rules import Rule
    from acp_sidecar.server.recording import SessionRecorder
    from acp_sidecar.server.rule_book import RuleBook
    from acp_sidecar.server.settings import ServeSettings
    from acp_sidecar.server.wire import UpdateEncoder
    from acp_sidecar.store import SessionStore
    from acp_sidecar.tools.builtin.shell.job_records import JobLedger
    from acp_sidecar.tools.builtin.shell.jobs import JobTable

logger = logging.getLogger(__name__)

DEFAULT_MCP_START_TIMEOUT = 10.0
"""Seconds each MCP server of a session gets to start, by default."""
MCP_KILL_MARGIN_S = 0.3
"""At shutdown an MCP server's stop gets the shutdown grace less this: the SIGKILL, the group
vanishing and the last stderr lines fit in it."""


class Stopping(Protocol):
    """MCP servers still starting for a session (:meth:`Connection.close` stops them)."""

    async def aclose(self, grace: float | None = None) -> None: ...


def notification_params(session_id: str, update: SessionUpdate) -> dict[str, Any]:
    """The wire params of a ``session/update`` (a ``SessionNotification`` without ``_meta``).

    Built directly: it is sent once per streamed chunk, and making a ``SessionNotification``
    only to unstructure it again at once cost 2.1 us where this costs 0.7 us.
    """
    return {"sessionId": session_id, "update": to_wire(update)}


class Connection(JsonRPCServer):
    """One ACP connection: the client's capabilities, the sessions, the driver."""

    protocol: AcpJsonRpcProtocol

    def __init__(
        self,
        driver_factory: DriverFactory | None = None,
        *,
        tools: ToolsProvider | None = None,
        store: Callable[[], SessionStore] | None = None,
        allow_outside_workspace: bool = False,
        cancel_grace: float = DEFAULT_CANCEL_GRACE,
        mcp_start_timeout: float = DEFAULT_MCP_START_TIMEOUT,
        default_mode: ModeId = DEFAULT_MODE,
        settings: ServeSettings | None = None,
        job_records: Callable[[], Path] | None = None,
        budget: Limits = NO_LIMITS,
    ) -> None:
        super().__init__(AcpJsonRpcProtocol, lambda: converter)
        if tools is None:
            from acp_sidecar.agent.toolset import ToolsProvider

            tools = ToolsProvider()
        self.tools = tools
        self._store_factory = store
        self._store: SessionStore | None = None
        self.drivers = DriverSlot(driver_factory or self.console_driver)
        self.allow_outside_workspace = allow_outside_workspace
        self.cancel_grace = cancel_grace
        self.mcp_start_timeout = mcp_start_timeout
        """Seconds each MCP server of a session gets to start (connect and list its tools)."""
        self.default_mode: ModeId = default_mode
        """The mode new sessions start in."""
        self.budget = budget
        """The budget new sessions start with, with a model (the config file's)."""
        self.settings = settings
        """The settings re-read from the config file (``None``: fixed at start)."""
        self.settings_warned: set[str] = set()
        """The settings' warnings shown already (each is shown once per connection)."""
        self.initialized = False
        self.client_capabilities = ClientCapabilities()
        self.encode_update: UpdateEncoder = to_wire
        """A core update → its wire form for the negotiated version (``None``: not sent)."""
        self.sessions: dict[str, Session] = {}
        self.children: dict[str, ChildSession] = {}
        """The child sessions (subagents) the client was told of, by id."""
        self.starting_mcp: set[Stopping] = set()
        """Sessions' MCP servers still starting (a session may not be in ``sessions`` yet)."""
        self.held_logs = HeldLogs()
        """The session logs held open (a bounded number; see :mod:`acp_sidecar.server.held`)."""
        self.client = ClientProxy(self.protocol, lambda: self.client_capabilities)
        self.asker: PermissionAsker = self.client  # the v2 mapping asks in v2's form
        self.elicitor: Elicitor = self.client  # and reports the state around a question
        self._background: set[asyncio.Task[None]] = set()
        self._turns: set[asyncio.Task[None]] = set()
        """Turns started by a steer (no request holds them): shutdown waits for them too."""
        self._tool_problems_told = 0
        self.job_records = job_records
        """Where kept jobs are recorded for the next start, found when first needed (``None``:
        nowhere)."""
        self._job_ledger: JobLedger | None = None

    @property
    def stores_sessions(self) -> bool:
        """Whether sessions are kept (``session/load`` and ``session/list`` work)."""
        return self._store_factory is not None

    @property
    def store(self) -> SessionStore | None:
        """Where sessions are kept, made on first use (the store stays off the cold start)."""
        if self._store is None and self._store_factory is not None:
            self._store = self._store_factory()
        return self._store

    def require_store(self) -> SessionStore:
        """The store, when sessions are kept (callers check :attr:`stores_sessions`)."""
        store = self.store
        if store is None:
            raise RuntimeError("sessions are not stored by this server")
        return store

    @property
    def driver(self) -> Driver:
        """The driver later turns and new sessions get (:mod:`acp_sidecar.server.refresh`
        replaces it)."""
        return self.drivers.current

    def console_driver(self) -> Driver:
        """The slash-command console, the driver when no other is given."""
        from acp_sidecar.agent.direct import ConsoleDriver

        return ConsoleDriver(lambda: self.tools.registry)

    def session(self, session_id: str) -> Session:
        """The session ``session_id``, or ``-32002`` naming it."""
        session = self.sessions.get(session_id)
        if session is None:
            raise AcpError(
                RESOURCE_NOT_FOUND, f"Session not found: {session_id}", {"sessionId": session_id}
            )
        return session

    def jobs_of(self, session: Session) -> JobTable:
        """``session``'s job table, made on first use (off the cold start), recording its jobs
        where this connection does."""
        if session.jobs is not None:
            return session.jobs
        from acp_sidecar.tools.builtin.shell.jobs import JobTable

        if self._job_ledger is None and self.job_records is not None:
            from acp_sidecar.tools.builtin.shell.job_records import JobLedger

            self._job_ledger = JobLedger(self.job_records)
        session.jobs = JobTable(session.session_id, self._job_ledger)
        return session.jobs

    async def recover_jobs(self) -> None:
        """Stop the jobs a sidecar that crashed recorded (off the loop; see
        :mod:`~acp_sidecar.tools.builtin.shell.job_records`)."""
        locate = self.job_records
        if locate is None:
            return
        try:
            directory = locate()  # computed, nothing read: no thread is started for nothing
            if not os.path.isdir(directory):  # False where a stat is refused, as the glob was
                return
            from acp_sidecar.tools.builtin.shell.job_records import recover_jobs

            stopped = await asyncio.to_thread(recover_jobs, directory)
        except Exception:
            logger.exception("stopping the jobs of a crashed sidecar failed")
            return
        if stopped:
            logger.warning("stopped %d process(es) of jobs a crashed sidecar left", stopped)

    def rules_of(self, session: Session) -> RuleBook:
        """``session``'s permission rules, made on first use: the config file's (when this
        server reads one), the workspace's as trusted in the store's record (when sessions are
        stored), the session's own."""
        if session.rules is not None:
            return session.rules
        from acp_sidecar.server.rule_book import RuleBook
        from acp_sidecar.server.rule_files import TRUST_FILE, TrustRecord

        trust = None
        if self.stores_sessions:
            trust = TrustRecord(lambda: self.require_store().directory / TRUST_FILE)
        user_file = None if self.settings is None else self.settings.location.path
        session.rules = RuleBook(session.policy, session.cwd, user_file, trust)

        def keep(rule: Rule, removed: bool) -> None:
            if session.recorder is not None:
                session.recorder.session_rule(rule, removed)

        session.rules.logged = keep
        return session.rules

    def tell_rule_problems(self, session: Session) -> None:
        """Tell the user, once each, what in the session's rules could not be used."""
        try:
            problems = self.rules_of(session).untold()
        except Exception:
            logger.exception("the permission rules of session %s could not be read", session)
            return
        if problems:
            text = "Permission rules: " + "; ".join(problems)
            self.tell(session.session_id, UserMessage("warning", text), keep=True)

    def card_context(self, cwd: str) -> CardContext:
        """The card context of a session working in ``cwd`` for this client."""
        capabilities = self.client_capabilities
        meta = capabilities.meta or {}
        return CardContext(
            cwd=cwd,
            terminal_output=meta.get("terminal_output") is True,
            plan_operations=capabilities.takes_plan_operations,
        )

    def call_scope(
        self,
        session: Session,
        signal: CancelSignal,
        send: Callable[[SessionUpdate], Awaitable[None]],
    ) -> CallScope:
        """What the tool calls of one turn in ``session`` carry."""
        from acp_sidecar.bridge.policy import CallScope

        scope = CallScope(
            session_id=session.session_id,
            cards=self.card_context(session.cwd),
            policy=session.policy,
            send=send,
            asker=self.asker,
            signal=signal,
            allow_outside_workspace=self.allow_outside_workspace
            if session.allow_outside_workspace is None
            else session.allow_outside_workspace,
            roots=session.roots,
            files=ClientFiles(self.client, session.session_id, signal),
            decisions=session.recorder,
            jobs=self.jobs_of(session),
            calls=session.calls,
            rules=self.rules_of(session),
        )
        recorder, store = session.recorder, self.store
        if recorder is None or store is None:
            return scope
        from acp_sidecar.server.undo.keeper import SessionEffects
        from acp_sidecar.store.blobs import BlobStore, blobs_path

        if session.blobs is None:
            session.blobs = BlobStore(blobs_path(store.path_of(session.session_id)))
        effects = SessionEffects(scope, session.blobs, recorder.undo_record)
        return attrs.evolve(scope, effects=effects)

    def recorder_for(
        self, session_id: str, cwd: str, mode: str, *, additional_directories: tuple[str, ...] = ()
    ) -> SessionRecorder | None:
        """A new session's log (written on first use), or ``None`` without a store."""
        if not self.stores_sessions:
            return None
        from acp_sidecar.server.recording import SessionRecorder

        return SessionRecorder(
            self.require_store,
            session_id,
            cwd,
            mode,
            held=self.held_logs,
            tell=lambda text: self.tell(session_id, UserMessage("warning", text)),
            additional_directories=additional_directories,
        )

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in the background, keeping a reference until it ends."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def spawn_turn(self, turn: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run a turn no request waits on (a steer started it), held until it ends."""
        task = asyncio.get_running_loop().create_task(turn)
        self._turns.add(task)
        task.add_done_callback(self._turns.discard)
        return task

    def after_answer(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` once the answer of the request being handled is written: scheduled
        with ``call_soon`` from inside a handler, it starts behind that answer on the wire
        (and behind the work scheduled before it)."""
        asyncio.get_running_loop().call_soon(self.spawn, work)

    async def send_update(self, session_id: str, update: SessionUpdate) -> None:
        """Emit one ``session/update``; waits while the client reads behind."""
        self._notify(session_id, update)
        wire = self.protocol.wire
        if wire is not None:
            await wire.drain()

    async def send_updates(self, session_id: str, updates: Iterable[SessionUpdate]) -> None:
        """Emit ``updates`` in order, as :meth:`send_update` one by one would (a replay):
        without a coroutine per update, awaiting only where the wire makes them wait."""
        notify = self._notify
        for update in updates:
            notify(session_id, update)
            wire = self.protocol.wire
            if wire is not None and wire.must_drain():
                await wire.drain()

    def tell(self, session_id: str, *messages: UserMessage, keep: bool = False) -> None:
        """Tell the user of ``session_id`` something that is not for the model, now: as
        ``notice`` updates where the client shows them, else as one agent message
        (:func:`~acp_sidecar.bridge.notices.user_updates`). ``keep`` also records each in the
        session's log with its severity, so a load replays it as the loading client takes it.
        """
        session = self.sessions.get(session_id)
        shown = None if session is None else session.paragraphs
        message_id = new_message_id() if session is None else session.message_ids.agent_text()
        updates = user_updates(self.client_capabilities, messages, shown, message_id)
        if keep and session is not None and session.recorder is not None:
            for message in messages:
                session.recorder.notice(message.text, message.severity, message_id)
        for update in updates:
            self._notify(session_id, update)

    def _notify(self, session_id: str, update: SessionUpdate) -> None:
        """Write ``update`` in this connection's version: one message, several in order (a v2
        card and its terminal), or none (a kind that version does not have)."""
        encoded = self.encode_update(update)
        if isinstance(encoded, dict):
            self.protocol.notify_update(session_id, encoded)
        elif encoded is not None:
            for each in encoded:
                self.protocol.notify_update(session_id, each)

    def untold_tool_problems(self) -> list[UserMessage]:
        """The tools' problems (plugins that failed to load, tools not registered) not told on
        this connection yet, marked told: an editor shows nothing of the sidecar's stderr."""
        problems = self.tools.problems[self._tool_problems_told :]
        self._tool_problems_told += len(problems)
        return [UserMessage("warning", f"Warning: {p}.") for p in problems]

    def cancel_turn(self, session_id: str) -> None:
        """Cancel the running turn of ``session_id``, if there is one (of a child session: its
        work alone)."""
        child = self.children.get(session_id)
        if child is not None:
            if child.running is not None:
                child.running.cancel("session/cancel of the subagent")
            return
        session = self.sessions.get(session_id)
        if session is None:
            throttled(
                logging.WARNING,
                "a cancel for an unknown session",
                "session/cancel for unknown session %s",
                shown_id(session_id),
            )
        elif not session.cancel("session/cancel"):
            logger.debug("session/cancel with no turn running in %s", shown_id(session_id))

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls reports every refused request here too; the answer already went out.
        logger.debug("%s: %s", getattr(source, "__name__", source), error)

    async def close(self, grace: float) -> None:
        """Cancel every running turn and every request in flight, and stop every session's
        MCP servers, within ``grace`` seconds; then close the session logs and the drivers."""
        for session in self.sessions.values():
            session.cancel(SHUTDOWN)
        pending = [*self.protocol.handler_tasks(), *self._turns]
        # The servers stop alongside the turns: a call still running on one fails at once.
        # Each is SIGKILLed early enough to be gone within ``grace`` even if it ignores the
        # end of its stdin and SIGTERM.
        mcp_grace = max(grace - MCP_KILL_MARGIN_S, 0.1)
        owners: dict[int, Stopping] = {id(mcp): mcp for mcp in self.starting_mcp}
        owners.update(
            (id(session.mcp), session.mcp)
            for session in self.sessions.values()
            if session.mcp is not None
        )
        loop = asyncio.get_running_loop()
        stopping = {loop.create_task(mcp.aclose(mcp_grace)) for mcp in owners.values()}
        from acp_sidecar.tools.builtin.shell.jobs import SHUTDOWN_GRACE_S

        stopping.update(
            loop.create_task(session.jobs.close(SHUTDOWN_GRACE_S))
            for session in self.sessions.values()
            if session.jobs is not None and session.jobs.jobs
        )
        if pending or stopping:
            await asyncio.wait([*pending, *stopping], timeout=grace)
        for task in stopping:
            if not task.done():
                logger.warning("an MCP server or a job did not stop in time")
            elif not task.cancelled() and task.exception() is not None:
                logger.error("stopping MCP servers or jobs failed", exc_info=task.exception())
        self.protocol.cancel_all_requests()
        for turn in self._turns:
            turn.cancel()
        leftover = [task for task in pending if not task.done()]
        if leftover:
            await asyncio.wait(leftover, timeout=0.2)
        for session in self.sessions.values():
            if session.recorder is not None:
                session.recorder.close()
        await self.drivers.aclose()
