"""The ACP handlers and :data:`HANDLERS`, the table naming each method's handler (load and list:
:mod:`.loading`; resume, close and delete: :mod:`.lifecycle`; fork: :mod:`.forking`; logout:
:mod:`.logout`);
:mod:`.app` registers it.

:data:`HANDLERS` has exactly the client → agent methods of ``METHOD_TO_TYPES``, each annotated
with its params and result types; only what is implemented is advertised. ``session/new`` is
never gated on ``authenticate`` and never fails for an MCP server.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_sidecar import __version__
from acp_sidecar.bridge.modes import MODE_IDS, SessionPolicy
from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.protocol.initialize import (
    PROTOCOL_VERSION,
    AgentAuthCapabilities,
    AgentCapabilities,
    AuthenticateRequest,
    AuthenticateResponse,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    LogoutCapabilities,
    McpCapabilities,
    SessionAdditionalDirectoriesCapabilities,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionForkCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
)
from acp_sidecar.protocol.methods import (
    AUTHENTICATE,
    INITIALIZE,
    LOGOUT,
    SESSION_CANCEL,
    SESSION_CLOSE,
    SESSION_DELETE,
    SESSION_FORK,
    SESSION_LIST,
    SESSION_LOAD,
    SESSION_NEW,
    SESSION_PROMPT,
    SESSION_RESUME,
    SESSION_SET_CONFIG_OPTION,
    SESSION_SET_MODE,
)
from acp_sidecar.protocol.session import (
    CancelNotification,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
)
from acp_sidecar.protocol.steering import (
    SESSION_STEERING,
    STEERING_ADVERTISED,
    SessionSteeringRequest,
    SessionSteeringResponse,
)
from acp_sidecar.server import auth
from acp_sidecar.server import config_options as options
from acp_sidecar.server.budget_options import record_start, start_budget
from acp_sidecar.server.cwd import check_additional_directories, check_cwd
from acp_sidecar.server.forking import session_fork
from acp_sidecar.server.lifecycle import session_close, session_delete, session_resume
from acp_sidecar.server.loading import session_list, session_load
from acp_sidecar.server.logout import logout
from acp_sidecar.server.refresh import refresh_settings, tell_settings
from acp_sidecar.server.session import Session
from acp_sidecar.server.state import announce_commands, session_state
from acp_sidecar.server.steering import steer
from acp_sidecar.server.transport import cancelled_by_client
from acp_sidecar.server.turns import check_prompt_content, run_prompt_turn
from acp_sidecar.text import shorten

if TYPE_CHECKING:
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.recording import SessionRecorder

logger = logging.getLogger(__name__)

MCP_SSE = True
"""Whether SSE MCP servers are supported: :data:`acp_sidecar.mcp.config.SSE_SUPPORTED`, kept
here so that ``initialize`` does not import the MCP package (a test keeps the two equal)."""

AGENT_INFO = Implementation(name="acp-sidecar", title="ACP Sidecar", version=__version__)


async def initialize(server: Connection, params: InitializeRequest) -> InitializeResponse:
    """Negotiate the version (we speak 1 whatever is asked; the client decides) and capabilities.

    Once per connection: a second ``initialize`` is refused and the first capabilities stay
    (sessions and turns in flight were set up under them).
    """
    if server.initialized:
        raise AcpError.invalid_request(
            "Invalid request: initialize was already called on this connection; "
            "the capabilities it gave stay in force"
        )
    server.client_capabilities = params.client_capabilities
    server.initialized = True
    server.after_answer(server.recover_jobs())
    stored = server.stores_sessions
    return InitializeResponse(
        protocol_version=PROTOCOL_VERSION,
        agent_capabilities=AgentCapabilities(
            load_session=server.stores_sessions,
            mcp_capabilities=McpCapabilities(http=True, sse=MCP_SSE),
            prompt_capabilities=server.driver.prompt_capabilities,
            session_capabilities=SessionCapabilities(
                list=SessionListCapabilities() if stored else None,
                resume=SessionResumeCapabilities() if stored else None,
                close=SessionCloseCapabilities(),
                delete=SessionDeleteCapabilities() if stored else None,
                additional_directories=SessionAdditionalDirectoriesCapabilities(),
                fork=SessionForkCapabilities() if stored else None,
            ),
            # A stored key to forget lives in the config file: only with settings.
            auth=AgentAuthCapabilities(
                logout=LogoutCapabilities() if server.settings is not None else None
            ),
        ),
        auth_methods=auth.auth_methods(
            params.client_capabilities, auth.this_program(), auth.named_config(server.settings)
        ),
        agent_info=AGENT_INFO,
        meta=dict(STEERING_ADVERTISED),  # the de-facto extension (acp_sidecar.server.steering)
    )


async def authenticate(server: Connection, params: AuthenticateRequest) -> AuthenticateResponse:
    """Always succeed: there is nothing to log in to, but ``configure`` may just have
    written the config file, so the server re-reads it. An id that is none of ours succeeds
    too (a client that sends one before every ``session/new`` must not be locked out of a
    console that needs no login); it is logged."""
    if not auth.is_our_method(params.method_id):
        logger.warning(
            "authenticate with unknown method %r (ours: %s); succeeding anyway",
            shorten(params.method_id, 80),
            ", ".join(auth.METHOD_IDS),
        )
    refresh_settings(server)
    return AuthenticateResponse()


async def session_new(server: Connection, params: NewSessionRequest) -> NewSessionResponse:
    """Create a session working in the absolute directory ``cwd`` (and its extra roots),
    in the default mode of the settings re-read just before; what is wrong with the settings
    is shown after the answer."""
    refresh_settings(server)
    check_cwd(params.cwd, must_exist=True)
    directories = check_additional_directories(params.additional_directories)
    session_id = uuid.uuid4().hex
    session = Session(
        session_id=session_id,
        cwd=params.cwd,
        additional_directories=directories,
        policy=SessionPolicy(mode=server.default_mode),
    )
    start_budget(server, session, {})
    session.recorder = server.recorder_for(
        session_id, params.cwd, session.policy.mode, additional_directories=directories
    )
    if params.mcp_servers:
        from acp_sidecar.server.mcp_session import start_session_servers

        session.mcp = await start_session_servers(server, session, params.mcp_servers)
    server.sessions[session_id] = session
    if session.recorder is not None:
        # Stored now, so a session that is never prompted can be loaded by id; after the
        # answer is written and off the loop, so the cold start does not pay for it.
        server.after_answer(created(session, session.recorder))
    tell_settings(server, session_id)
    announce_commands(server, session_id)
    if session.mcp is not None:
        session.mcp.release()  # problems starting them, told after the answer and commands
    state = session_state(server, session)
    return NewSessionResponse(
        session_id=session_id, modes=state.modes, config_options=state.config_options
    )


async def created(session: Session, recorder: SessionRecorder) -> None:
    """Create the session's log, then record the budget it starts with."""
    await recorder.create_soon()
    record_start(session)


async def session_set_mode(
    server: Connection, params: SetSessionModeRequest
) -> SetSessionModeResponse:
    """Switch the session's mode (``ask``, ``auto`` or ``read-only``); clients that follow
    the ``mode`` config option are sent the options (``config_option_update``)."""
    session = server.session(params.session_id)
    mode = next((m for m in MODE_IDS if m == params.mode_id), None)
    if mode is None:
        known = ", ".join(MODE_IDS)
        raise AcpError.invalid_params(
            f"Invalid params: modeId: unknown mode {params.mode_id!r} (modes: {known})"
        )
    if options.change_mode(session, mode):
        options.announce_options(server, session.session_id)
    return SetSessionModeResponse()


async def session_set_config_option(
    server: Connection, params: SetSessionConfigOptionRequest
) -> SetSessionConfigOptionResponse:
    """Set one config option (mode, model, reasoning effort, working outside the workspace);
    answers with all of them (see
    :mod:`acp_sidecar.server.config_options` for who else is told)."""
    session = server.session(params.session_id)
    await options.set_config_option(server, session, params.config_id, params.value, params.type)
    return SetSessionConfigOptionResponse(config_options=options.config_options(server, session))


async def session_prompt(server: Connection, params: PromptRequest) -> PromptResponse:
    """Run one turn through the driver; answers with its stop reason.

    ``$/cancel_request`` naming the prompt ends it as ``session/cancel`` does: the turn is
    signalled and given the same grace (its running tools end, their cards complete), the log
    records it cancelled, and the prompt answers ``cancelled`` -- the cancellation marker ACP's
    cancellation rules allow in place of ``-32800``, and the answer clients already handle
    for a cancelled turn. At shutdown the prompt answers ``-32800``.
    """
    session = server.session(params.session_id)
    check_prompt_content(params.prompt, server.driver.prompt_capabilities)
    try:
        stop_reason = await run_prompt_turn(server, session, params.prompt)
    except asyncio.CancelledError as exc:
        if not cancelled_by_client(exc):
            raise
        task = asyncio.current_task()
        if task is not None:
            task.uncancel()  # answered here: the cancellation is spent
        return PromptResponse(stop_reason="cancelled")
    return PromptResponse(stop_reason=stop_reason)


def session_cancel(server: Connection, params: CancelNotification) -> None:
    """Cancel the session's running turn; its prompt then answers ``cancelled``."""
    # A prompt read just before this notification (same read) has a task that has not run
    # yet, so its turn has not started: act one loop iteration later, after that task's first
    # step has started the turn.
    asyncio.get_running_loop().call_soon(server.cancel_turn, params.session_id)


async def session_steering(
    server: Connection, params: SessionSteeringRequest
) -> SessionSteeringResponse:
    """``_session/steering``: the prompt joins the running turn at its next step boundary, or
    starts a turn of its own (see :mod:`acp_sidecar.server.steering`); an unknown session is
    ``-32602``, as the extension's agents answer."""
    session = server.sessions.get(params.session_id)
    if session is None:
        raise AcpError.invalid_params(
            f"Invalid params: sessionId: no session {shorten(params.session_id, 80)!r}"
        )
    check_prompt_content(params.prompt, server.driver.prompt_capabilities)
    return await steer(server, session, params)


HANDLERS: dict[str, Callable[..., Any]] = {
    INITIALIZE: initialize,
    AUTHENTICATE: authenticate,
    LOGOUT: logout,
    SESSION_NEW: session_new,
    SESSION_LOAD: session_load,
    SESSION_LIST: session_list,
    SESSION_RESUME: session_resume,
    SESSION_CLOSE: session_close,
    SESSION_DELETE: session_delete,
    SESSION_FORK: session_fork,
    SESSION_PROMPT: session_prompt,
    SESSION_SET_MODE: session_set_mode,
    SESSION_SET_CONFIG_OPTION: session_set_config_option,
    SESSION_CANCEL: session_cancel,
}
"""Each client → agent method's handler: the one place a handler is registered."""

EXTENSION_HANDLERS: dict[str, Callable[..., Any]] = {SESSION_STEERING: session_steering}
"""The handlers of the extension methods (``_``-prefixed, outside the schema) we serve."""
