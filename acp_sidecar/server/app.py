"""The ACP agent server: one connection's state (client capabilities, sessions, driver,
store) and the registration of the handlers.

Handlers are registered through one table, :data:`acp_sidecar.server.handlers.HANDLERS`:
when an :class:`AcpServer` is made it registers each entry with pygls, wrapped so that the
params are decoded into the method's type from
:data:`acp_sidecar.protocol.methods.METHOD_TO_TYPES` (``-32602`` naming the field), requests
before ``initialize`` are refused, and the result is encoded. The handlers themselves live in
:mod:`acp_sidecar.server.handlers` (and :mod:`acp_sidecar.server.loading`); the work of a turn
in :mod:`acp_sidecar.server.session` and the driver.

Invariants:
- Every request but ``initialize`` is refused (``-32600``) until ``initialize`` succeeded;
  notifications before it are ignored, as are notifications whose params do not decode (a
  notification has no answer; both are logged, throttled).
- An unknown ``sessionId`` is answered ``-32002`` naming the session.
- The settings a running server can change (:mod:`acp_sidecar.server.settings`) change only
  in :meth:`AcpServer.refresh_settings`. A new driver serves later turns and new sessions; a
  turn keeps the driver it started with, and a replaced driver is closed once every turn
  running when it was replaced has ended (or when the server closes). A driver given at
  start as ``driver_factory`` with ``settings.driver_pinned`` (``--driver``) is never
  replaced.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from pygls.server import JsonRPCServer

from acp_sidecar.agent.driver import Driver, DriverFactory
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.modes import DEFAULT_MODE, ModeId
from acp_sidecar.bridge.notices import UserMessage, user_updates
from acp_sidecar.protocol.converter import converter, from_wire, to_wire
from acp_sidecar.protocol.errors import RESOURCE_NOT_FOUND, AcpError, ProtocolParamsError
from acp_sidecar.protocol.initialize import ClientCapabilities
from acp_sidecar.protocol.methods import INITIALIZE, METHOD_TO_TYPES, SESSION_UPDATE
from acp_sidecar.protocol.updates import SessionUpdate
from acp_sidecar.server.client import ClientProxy
from acp_sidecar.server.files import ClientFiles
from acp_sidecar.server.handlers import HANDLERS
from acp_sidecar.server.held import HeldLogs
from acp_sidecar.server.messages import shown_id, throttled
from acp_sidecar.server.session import DEFAULT_CANCEL_GRACE, SHUTDOWN, Session
from acp_sidecar.server.transport import AcpJsonRpcProtocol
from acp_sidecar.text import shorten
from acp_sidecar.tools.cancel import CancelSignal

logger = logging.getLogger(__name__)

DEFAULT_MCP_START_TIMEOUT = 10.0
"""Seconds each MCP server of a session gets to start, by default."""
MCP_KILL_MARGIN_S = 0.3
"""At shutdown an MCP server's stop gets the shutdown grace less this: the SIGKILL, the group
vanishing and the last stderr lines fit in it."""

if TYPE_CHECKING:
    # The tool pipeline is imported when the first turn runs, not at start-up.
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.bridge.policy import CallScope
    from acp_sidecar.server.mcp_session import SessionServers
    from acp_sidecar.server.recording import SessionRecorder
    from acp_sidecar.server.settings import ServeSettings
    from acp_sidecar.store import SessionStore


def notification_params(session_id: str, update: SessionUpdate) -> dict[str, Any]:
    """The wire params of a ``session/update`` (a ``SessionNotification`` without ``_meta``).

    Built directly: it is sent once per streamed chunk, and making a ``SessionNotification``
    only to unstructure it again at once cost 2.1 us where this costs 0.7 us.
    """
    return {"sessionId": session_id, "update": to_wire(update)}


class AcpServer(JsonRPCServer):
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
    ) -> None:
        super().__init__(AcpJsonRpcProtocol, lambda: converter)
        if tools is None:
            from acp_sidecar.agent.toolset import ToolsProvider

            tools = ToolsProvider()
        self.tools = tools
        self._store_factory = store
        self._store: SessionStore | None = None
        self.driver_factory: DriverFactory = (
            driver_factory if driver_factory is not None else self._console_driver
        )
        self.allow_outside_workspace = allow_outside_workspace
        self.cancel_grace = cancel_grace
        self.mcp_start_timeout = mcp_start_timeout
        """Seconds each MCP server of a session gets to start (connect and list its tools)."""
        self.default_mode: ModeId = default_mode
        """The mode new sessions start in."""
        self.settings = settings
        """The settings re-read from the config file (``None``: fixed at start)."""
        self._settings_warned: set[str] = set()
        """The settings' warnings shown already (each is shown once per connection)."""
        self.initialized = False
        self.client_capabilities = ClientCapabilities()
        self.sessions: dict[str, Session] = {}
        self.starting_mcp: set[SessionServers] = set()
        """Sessions' MCP servers still starting (a session may not be in ``sessions`` yet):
        :meth:`close` stops them too."""
        self.held_logs = HeldLogs()
        """The session logs held open (a bounded number; see :mod:`acp_sidecar.server.held`)."""
        self.client = ClientProxy(self.protocol, lambda: self.client_capabilities)
        self._driver: Driver | None = None
        self._retired: dict[int, Driver] = {}
        """Replaced drivers not closed yet, by ``id``."""
        self._background: set[asyncio.Task[None]] = set()
        self._tool_problems_told = 0
        """How many of the tools' problems were told (:meth:`tell_tool_problems`)."""
        for method, handler in HANDLERS.items():
            self._register(method, handler)

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

    def _console_driver(self) -> Driver:
        from acp_sidecar.agent.direct import ConsoleDriver

        return ConsoleDriver(lambda: self.tools.registry)

    def card_context(self, cwd: str) -> CardContext:
        """The card context of a session working in ``cwd`` for this client."""
        meta = self.client_capabilities.meta or {}
        return CardContext(cwd=cwd, terminal_output=meta.get("terminal_output") is True)

    def call_scope(
        self,
        session: Session,
        signal: CancelSignal,
        send: Callable[[SessionUpdate], Awaitable[None]],
    ) -> CallScope:
        """What the tool calls of one turn in ``session`` carry."""
        from acp_sidecar.bridge.policy import CallScope

        return CallScope(
            session_id=session.session_id,
            cards=self.card_context(session.cwd),
            policy=session.policy,
            send=send,
            asker=self.client,
            signal=signal,
            allow_outside_workspace=self.allow_outside_workspace,
            roots=session.roots,
            files=ClientFiles(self.client, session.session_id, signal),
            decisions=session.recorder,
        )

    def announce_commands(self, session_id: str) -> None:
        """Send the driver's commands for a session (its own tools when it has them): after
        its ``session/new`` or ``session/load`` answer, and again when its tools change.

        The answer goes out when the handler's task completes; scheduling the update with
        ``call_soon`` from inside the handler puts it behind that answer on the wire. The
        commands are read when the update is sent, so they are the session's latest.
        """
        commands = getattr(self.driver, "commands_update", None)
        if not callable(commands):
            return

        async def send() -> None:
            session = self.sessions.get(session_id)
            if session is None:
                return  # gone meanwhile (a failed load)
            try:
                update = commands() if session.tools is None else commands(session.tools)
                await self.send_update(session_id, update)
                self.tell_tool_problems(session_id)  # the tools were built for the commands
            except Exception:
                logger.exception("sending the available commands failed")

        asyncio.get_running_loop().call_soon(self.spawn, send())

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in the background, keeping a reference until it ends."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @property
    def driver(self) -> Driver:
        """The driver, made on first use."""
        if self._driver is None:
            self._driver = self.driver_factory()
        return self._driver

    def refresh_settings(self) -> None:
        """Read the config file again if it changed, and apply what a running server can
        (:mod:`acp_sidecar.server.settings`): called on ``authenticate`` and before each
        ``session/new`` (``session/load``, ``session/resume``) makes its session. Never fails
        the request that calls it."""
        if self.settings is None:
            return
        try:
            changed = self.settings.refresh()
        except Exception:  # a bug here must not cost the user the session
            logger.exception("re-reading the config file failed")
            return
        if changed is None:
            return
        live = changed.after
        self.default_mode = live.default_mode
        self.allow_outside_workspace = live.allow_outside_workspace
        self.mcp_start_timeout = live.mcp_start_timeout
        if changed.before.secret_variable != live.secret_variable:
            from acp_sidecar.tools.environment import configure_child_environment

            configure_child_environment(self.settings.child_environment())
        if changed.model and not self.settings.driver_pinned:
            self.replace_driver(self.settings.driver_factory(self.tools))

    def replace_driver(self, factory: DriverFactory | None) -> None:
        """Serve later turns and new sessions with ``factory``'s driver (``None``: the
        console); the open sessions whose config options change (the model picker) are sent
        them, and the old driver is closed once the turns running on it have ended."""
        from acp_sidecar.server.config_options import announce_changed_options, config_options

        old = self._driver
        sessions = self.sessions.items() if old is not None else ()
        before = {session_id: config_options(self, s) for session_id, s in sessions}
        self._driver = None
        self.driver_factory = factory if factory is not None else self._console_driver
        if old is not None:
            self._retire(old)
        announce_changed_options(self, before)

    def _retire(self, driver: Driver) -> None:
        running = [s.idle for s in self.sessions.values() if s.running is not None]
        self._retired[id(driver)] = driver

        async def close_when_idle() -> None:
            for idle in running:
                await idle.wait()
            catalog = getattr(driver, "catalog", None)
            if getattr(catalog, "listing_started", False):
                # A request may be waiting on its listing (a model being chosen); it is
                # bounded by its own timeout, and closing would cancel it under them.
                with contextlib.suppress(Exception):
                    await catalog.list_models()  # type: ignore[union-attr]
            if self._retired.pop(id(driver), None) is not None:
                await _close_driver(driver)

        self.spawn(close_when_idle())

    def tell_settings(self, session_id: str) -> None:
        """After the answer being written, show the user of ``session_id`` what is wrong with
        the settings (every time) and the warnings not shown yet on this connection."""
        if self.settings is None:
            return
        problems = self.settings.problems()
        warnings = [
            m for m in self.settings.warning_messages() if m.text not in self._settings_warned
        ]
        if not problems and not warnings:
            return
        self._settings_warned.update(m.text for m in warnings)
        told = (*problems, *warnings)
        asyncio.get_running_loop().call_soon(self.inform, session_id, *told)

    def feature(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: handlers are registered from :data:`~acp_sidecar.server.handlers.HANDLERS`
        only, where each gets its params decoded and the ``initialize`` gate; pygls's own
        decorator would register one without either."""
        raise TypeError("register a handler in acp_sidecar.server.handlers.HANDLERS")

    def _register(self, method: str, handler: Callable[..., Any]) -> None:
        """Register ``handler(server, params)`` for ``method`` with pygls.

        The params type comes from :data:`METHOD_TO_TYPES`. A coroutine handler answers a
        request; a plain function handles a notification.
        """
        params_type = METHOD_TO_TYPES[method].params
        gated = method != INITIALIZE

        if inspect.iscoroutinefunction(handler):

            async def run_request(server: AcpServer, raw: Any) -> Any:
                if gated and not server.initialized:
                    raise AcpError.invalid_request(f"Invalid request: {method} before initialize")
                result = await handler(server, decode_params(raw, params_type))
                return None if result is None else to_wire(result)

            self.protocol.fm.feature(method)(run_request)
        else:

            def run_notification(server: AcpServer, raw: Any) -> None:
                if gated and not server.initialized:
                    throttled(
                        logging.WARNING,
                        "a notification before initialize",
                        "ignored %s before initialize",
                        method,
                    )
                    return
                try:
                    params = decode_params(raw, params_type)
                except AcpError as exc:  # a notification has no answer: log it
                    throttled(
                        logging.WARNING,
                        "a notification with wrong params",
                        "ignored %s: %s",
                        method,
                        shorten(exc.message, 300),
                    )
                    return
                handler(server, params)

            self.protocol.fm.feature(method)(run_notification)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls reports every refused request here too; the answer already went out.
        logger.debug("%s: %s", getattr(source, "__name__", source), error)

    def cancel_turn(self, session_id: str) -> None:
        """Cancel the running turn of ``session_id``, if there is one."""
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

    def session(self, session_id: str) -> Session:
        """The session ``session_id``, or ``-32002`` naming it."""
        session = self.sessions.get(session_id)
        if session is None:
            raise AcpError(
                RESOURCE_NOT_FOUND, f"Session not found: {session_id}", {"sessionId": session_id}
            )
        return session

    async def send_update(self, session_id: str, update: SessionUpdate) -> None:
        """Emit one ``session/update``; waits while the client reads behind."""
        self.protocol.notify(SESSION_UPDATE, notification_params(session_id, update))
        wire = self.protocol.wire
        if wire is not None:
            await wire.drain()

    def inform(self, session_id: str, *messages: UserMessage, keep: bool = False) -> None:
        """Tell the user of ``session_id`` something that is not for the model, now: as
        ``notice`` updates where the client shows them, else as one agent message
        (:func:`~acp_sidecar.bridge.notices.user_updates`). ``keep`` also records each in the
        session's log with its severity, whatever this client showed, so a load replays it
        in the form the loading client takes."""
        session = self.sessions.get(session_id)
        shown = None if session is None else session.paragraphs
        updates = user_updates(self.client_capabilities, messages, shown)
        if keep and session is not None and session.recorder is not None:
            for message in messages:
                session.recorder.notice(message.text, message.severity)
        for update in updates:
            self.protocol.notify(SESSION_UPDATE, notification_params(session_id, update))

    def tell_tool_problems(self, session_id: str) -> None:
        """Tell the user (once per connection, in the first session that builds the tools)
        about tool plugins that failed to load and tools that could not be registered: an
        editor shows nothing of the sidecar's stderr."""
        problems = self.tools.problems[self._tool_problems_told :]
        self._tool_problems_told += len(problems)
        self.inform(session_id, *(UserMessage("warning", f"Warning: {p}.") for p in problems))

    async def close(self, grace: float) -> None:
        """Cancel every running turn and every request in flight, and stop every session's
        MCP servers, within ``grace`` seconds; then close the session logs."""
        for session in self.sessions.values():
            session.cancel(SHUTDOWN)
        pending = self.protocol.handler_tasks()
        # The servers stop alongside the turns: a call still running on one fails at once.
        # Each is SIGKILLed early enough to be gone within ``grace`` even if it ignores the
        # end of its stdin and SIGTERM.
        mcp_grace = max(grace - MCP_KILL_MARGIN_S, 0.1)
        owners = {id(mcp): mcp for mcp in self.starting_mcp}
        owners.update(
            (id(session.mcp), session.mcp)
            for session in self.sessions.values()
            if session.mcp is not None
        )
        stopping = {
            asyncio.get_running_loop().create_task(mcp.aclose(mcp_grace)) for mcp in owners.values()
        }
        if pending or stopping:
            await asyncio.wait([*pending, *stopping], timeout=grace)
        for task in stopping:
            if not task.done():
                logger.warning("an MCP server did not stop in time")
            elif not task.cancelled() and task.exception() is not None:
                logger.error("stopping MCP servers failed", exc_info=task.exception())
        self.protocol.cancel_all_requests()
        leftover = [task for task in pending if not task.done()]
        if leftover:
            await asyncio.wait(leftover, timeout=0.2)
        for session in self.sessions.values():
            if session.recorder is not None:
                session.recorder.close()
        retired, self._retired = list(self._retired.values()), {}
        await asyncio.gather(*(_close_driver(d) for d in (self._driver, *retired)))

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
            tell=lambda text: self.inform(session_id, UserMessage("warning", text)),
            additional_directories=additional_directories,
        )

    def require_store(self) -> SessionStore:
        """The store, when sessions are kept (callers check :attr:`stores_sessions`)."""
        store = self.store
        if store is None:
            raise RuntimeError("sessions are not stored by this server")
        return store


async def _close_driver(driver: Driver | None) -> None:
    """Close ``driver``'s connections, if it has any (bounded; a failure is logged)."""
    close_driver = getattr(driver, "aclose", None)
    if close_driver is not None:
        try:
            await asyncio.wait_for(close_driver(), 0.5)
        except Exception:
            logger.exception("closing the driver failed")


def decode_params(raw: Any, params_type: type[Any]) -> Any:
    """The ACP params value of a request, or ``-32602`` naming the offending field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise AcpError.invalid_params("Invalid params: params must be an object")
    try:
        return from_wire(raw, params_type)
    except ProtocolParamsError as exc:
        raise AcpError.invalid_params(f"Invalid params: {exc}") from None
