"""The ACP agent server: connection state, sessions, and thin pygls-style handlers.

A handler is ``async def handler(ls, params) -> result`` registered with
``@server.feature(METHOD)``: :meth:`AcpServer.feature` decodes the params into the method's
ACP type (``-32602`` naming the field), refuses requests before ``initialize``, and encodes
the result. The work of a turn lives in :mod:`acp_sidecar.server.session` and the driver.

Invariants:
- Only what is implemented is advertised: ``loadSession`` and ``sessionCapabilities.list``
  only when sessions are stored (otherwise ``session/load`` and ``session/list`` answer
  ``-32601``), no MCP transports (``mcpServers`` are accepted and ignored, with a log line),
  no auth methods, prompt content as the driver accepts it.
- Every request but ``initialize`` is refused (``-32600``) until ``initialize`` succeeded;
  notifications before it are ignored. ``initialize`` succeeds once per connection; a
  second one is refused (``-32600``) and the first capabilities stay.
- A new session's ``cwd`` is an existing absolute directory of bounded length
  (:mod:`acp_sidecar.server.cwd`), else ``-32602``.
- An unknown ``sessionId`` is answered ``-32002`` naming the session.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from pygls.server import JsonRPCServer

from acp_sidecar import __version__
from acp_sidecar.agent.driver import Driver, DriverFactory
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.modes import MODE_IDS, mode_state
from acp_sidecar.protocol.content import (
    AudioContentBlock,
    ContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    TextContentBlock,
)
from acp_sidecar.protocol.converter import converter, from_wire, to_wire
from acp_sidecar.protocol.errors import RESOURCE_NOT_FOUND, AcpError, ProtocolParamsError
from acp_sidecar.protocol.initialize import (
    PROTOCOL_VERSION,
    AgentCapabilities,
    AuthenticateRequest,
    AuthenticateResponse,
    ClientCapabilities,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    PromptCapabilities,
    SessionCapabilities,
    SessionListCapabilities,
)
from acp_sidecar.protocol.methods import (
    AUTHENTICATE,
    INITIALIZE,
    SESSION_CANCEL,
    SESSION_LIST,
    SESSION_LOAD,
    SESSION_NEW,
    SESSION_PROMPT,
    SESSION_SET_MODE,
    SESSION_UPDATE,
)
from acp_sidecar.protocol.session import (
    CancelNotification,
    ListSessionsRequest,
    LoadSessionRequest,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
)
from acp_sidecar.protocol.updates import AgentMessageChunk, SessionUpdate
from acp_sidecar.server.client import ClientProxy
from acp_sidecar.server.cwd import check_cwd
from acp_sidecar.server.files import ClientFiles
from acp_sidecar.server.held import HeldLogs
from acp_sidecar.server.loading import session_list, session_load
from acp_sidecar.server.messages import shown_id, throttled
from acp_sidecar.server.session import DEFAULT_CANCEL_GRACE, SHUTDOWN, Session
from acp_sidecar.server.transport import AcpJsonRpcProtocol
from acp_sidecar.text import shorten
from acp_sidecar.tools.cancel import CancelSignal

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    # The tool pipeline is imported when the first turn runs, not at start-up.
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.bridge.policy import CallScope
    from acp_sidecar.server.recording import SessionRecorder
    from acp_sidecar.store import SessionStore

F = TypeVar("F", bound=Callable[..., Any])

AGENT_INFO = Implementation(name="acp-sidecar", title="ACP Sidecar", version=__version__)

PARAMS_TYPES: dict[str, type] = {
    INITIALIZE: InitializeRequest,
    AUTHENTICATE: AuthenticateRequest,
    SESSION_NEW: NewSessionRequest,
    SESSION_LOAD: LoadSessionRequest,
    SESSION_LIST: ListSessionsRequest,
    SESSION_PROMPT: PromptRequest,
    SESSION_SET_MODE: SetSessionModeRequest,
    SESSION_CANCEL: CancelNotification,
}
"""The ACP params type of each method this server handles."""


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
        self.initialized = False
        self.client_capabilities = ClientCapabilities()
        self.sessions: dict[str, Session] = {}
        self.held_logs = HeldLogs()
        """The session logs held open (a bounded number; see :mod:`acp_sidecar.server.held`)."""
        self.client = ClientProxy(self.protocol, lambda: self.client_capabilities)
        self._driver: Driver | None = None
        self._background: set[asyncio.Task[None]] = set()
        for method, handler in HANDLERS.items():
            self.feature(method)(handler)

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
            files=ClientFiles(self.client, session.session_id, signal),
        )

    def announce_commands(self, session_id: str) -> None:
        """Send the driver's commands for a new session, after its ``session/new`` answer.

        The answer goes out when the handler's task completes; scheduling the update with
        ``call_soon`` from inside the handler puts it behind that answer on the wire.
        """
        commands = getattr(self.driver, "commands_update", None)
        if not callable(commands):
            return

        async def send() -> None:
            try:
                await self.send_update(session_id, commands())
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

    def feature(self, feature_name: str, options: Any | None = None) -> Callable[[F], F]:
        """Register an ACP handler ``handler(ls, params)`` for ``feature_name``.

        The params type comes from :data:`PARAMS_TYPES` (``options`` is pygls's LSP options
        slot and unused). A coroutine handler answers a request; a plain function handles a
        notification.
        """
        params_type = PARAMS_TYPES[feature_name]
        gated = feature_name != INITIALIZE

        def register(handler: F) -> F:
            if inspect.iscoroutinefunction(handler):

                async def run_request(ls: AcpServer, raw: Any) -> Any:
                    if gated and not ls.initialized:
                        raise AcpError.invalid_request(
                            f"Invalid request: {feature_name} before initialize"
                        )
                    result = await handler(ls, decode_params(raw, params_type))
                    return None if result is None else to_wire(result)

                self.protocol.fm.feature(feature_name)(run_request)
            else:

                def run_notification(ls: AcpServer, raw: Any) -> None:
                    if gated and not ls.initialized:
                        throttled(
                            logging.WARNING,
                            "a notification before initialize",
                            "ignored %s before initialize",
                            feature_name,
                        )
                        return
                    try:
                        params = decode_params(raw, params_type)
                    except AcpError as exc:  # a notification has no answer: log it
                        throttled(
                            logging.WARNING,
                            "a notification with wrong params",
                            "ignored %s: %s",
                            feature_name,
                            shorten(exc.message, 300),
                        )
                        return
                    handler(ls, params)

                self.protocol.fm.feature(feature_name)(run_notification)
            return handler

        return register

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

    def tell(self, session_id: str, text: str) -> None:
        """Show the user ``text`` in ``session_id`` as an agent message, now (not recorded)."""
        update = AgentMessageChunk(content=TextContentBlock(text=text))
        self.protocol.notify(SESSION_UPDATE, notification_params(session_id, update))

    async def close(self, grace: float) -> None:
        """Cancel every running turn and every request in flight, within ``grace`` seconds;
        then close the session logs."""
        for session in self.sessions.values():
            session.cancel(SHUTDOWN)
        pending = self.protocol.handler_tasks()
        if pending:
            await asyncio.wait(pending, timeout=grace)
        self.protocol.cancel_all_requests()
        leftover = [task for task in pending if not task.done()]
        if leftover:
            await asyncio.wait(leftover, timeout=0.2)
        for session in self.sessions.values():
            if session.recorder is not None:
                session.recorder.close()
        close_driver = getattr(self._driver, "aclose", None)
        if close_driver is not None:
            try:
                await asyncio.wait_for(close_driver(), 0.5)
            except Exception:
                logger.exception("closing the driver failed")

    def recorder_for(self, session_id: str, cwd: str, mode: str) -> SessionRecorder | None:
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
            tell=lambda text: self.tell(session_id, text),
        )

    def require_store(self) -> SessionStore:
        """The store, when sessions are kept (callers check :attr:`stores_sessions`)."""
        store = self.store
        if store is None:
            raise RuntimeError("sessions are not stored by this server")
        return store


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


# ---- handlers ------------------------------------------------------------------------------


async def initialize(ls: AcpServer, params: InitializeRequest) -> InitializeResponse:
    """Negotiate the version (we speak 1 whatever is asked; the client decides) and capabilities.

    Once per connection: a second ``initialize`` is refused and the first capabilities stay
    (sessions and turns in flight were set up under them).
    """
    if ls.initialized:
        raise AcpError.invalid_request(
            "Invalid request: initialize was already called on this connection; "
            "the capabilities it gave stay in force"
        )
    ls.client_capabilities = params.client_capabilities
    ls.initialized = True
    return InitializeResponse(
        protocol_version=PROTOCOL_VERSION,
        agent_capabilities=AgentCapabilities(
            load_session=ls.stores_sessions,
            prompt_capabilities=ls.driver.prompt_capabilities,
            session_capabilities=SessionCapabilities(
                list=SessionListCapabilities() if ls.stores_sessions else None
            ),
        ),
        auth_methods=[],
        agent_info=AGENT_INFO,
    )


async def authenticate(ls: AcpServer, params: AuthenticateRequest) -> AuthenticateResponse:
    """No authentication is required: any method succeeds."""
    return AuthenticateResponse()


async def session_new(ls: AcpServer, params: NewSessionRequest) -> NewSessionResponse:
    """Create a session working in the absolute directory ``cwd``."""
    check_cwd(params.cwd, must_exist=True)
    if params.mcp_servers:
        logger.info("ignoring %d MCP server(s): MCP is not supported", len(params.mcp_servers))
    session_id = uuid.uuid4().hex
    session = Session(session_id=session_id, cwd=params.cwd)
    session.recorder = ls.recorder_for(session_id, params.cwd, session.policy.mode)
    ls.sessions[session_id] = session
    if session.recorder is not None:
        # Stored now, so a session that is never prompted can be loaded by id; after the
        # answer is written and off the loop, so the cold start does not pay for it.
        asyncio.get_running_loop().call_soon(ls.spawn, session.recorder.create_soon())
    ls.announce_commands(session_id)
    return NewSessionResponse(session_id=session_id, modes=mode_state(session.policy.mode))


async def session_set_mode(ls: AcpServer, params: SetSessionModeRequest) -> SetSessionModeResponse:
    """Switch the session's mode (``ask``, ``auto`` or ``read-only``)."""
    session = ls.session(params.session_id)
    mode = next((m for m in MODE_IDS if m == params.mode_id), None)
    if mode is None:
        known = ", ".join(MODE_IDS)
        raise AcpError.invalid_params(
            f"Invalid params: modeId: unknown mode {params.mode_id!r} (modes: {known})"
        )
    if session.policy.mode != mode:
        session.policy.mode = mode
        if session.recorder is not None:
            session.recorder.mode_change(mode)
    return SetSessionModeResponse()


async def session_prompt(ls: AcpServer, params: PromptRequest) -> PromptResponse:
    """Run one turn through the driver; answers with its stop reason."""
    session = ls.session(params.session_id)
    check_prompt_content(params.prompt, ls.driver.prompt_capabilities)
    stop_reason = await session.run_turn(
        ls.driver,
        params.prompt,
        ls.send_update,
        ls.client,
        ls.call_scope,
        grace=ls.cancel_grace,
    )
    return PromptResponse(stop_reason=stop_reason)


def session_cancel(ls: AcpServer, params: CancelNotification) -> None:
    """Cancel the session's running turn; its prompt then answers ``cancelled``."""
    # A prompt read just before this notification (same read) has a task that has not run
    # yet, so its turn has not started: act one loop iteration later, after that task's first
    # step has started the turn.
    asyncio.get_running_loop().call_soon(ls.cancel_turn, params.session_id)


def check_prompt_content(prompt: list[ContentBlock], accepted: PromptCapabilities) -> None:
    """Refuse content the agent did not advertise (``-32602`` naming the block)."""
    for index, block in enumerate(prompt):
        match block:
            case ImageContentBlock() if not accepted.image:
                kind = "image"
            case AudioContentBlock() if not accepted.audio:
                kind = "audio"
            case EmbeddedResourceContentBlock() if not accepted.embedded_context:
                kind = "resource"
            case _:
                continue
        raise AcpError.invalid_params(
            f"Invalid params: prompt/{index}: {kind} content is not supported by this agent"
        )


HANDLERS: dict[str, Callable[..., Any]] = {
    INITIALIZE: initialize,
    AUTHENTICATE: authenticate,
    SESSION_NEW: session_new,
    SESSION_LOAD: session_load,
    SESSION_LIST: session_list,
    SESSION_PROMPT: session_prompt,
    SESSION_SET_MODE: session_set_mode,
    SESSION_CANCEL: session_cancel,
}
