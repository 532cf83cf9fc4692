"""The ACP request and notification handlers, and :data:`HANDLERS`, the table that names each
method's handler.

A handler is ``handler(server, params) -> result``, in the manner of jedi-language-server: it
gets the connection (:class:`~acp_sidecar.server.app.AcpServer`) and the decoded params, calls
into the session and the driver, and returns the result value. A coroutine answers a request;
a plain function handles a notification. The params and result types are the method's entry
in :data:`acp_sidecar.protocol.methods.METHOD_TO_TYPES`; the server registers every entry of
:data:`HANDLERS` when it is made, wrapping it in the decoding, the ``initialize`` gate and
the encoding (see :mod:`acp_sidecar.server.app`). ``session/load`` and ``session/list`` live
in :mod:`acp_sidecar.server.loading`.

Invariants:
- :data:`HANDLERS` has exactly the client → agent methods of ``METHOD_TO_TYPES``, and each
  handler's annotations are that method's params and result type (checked by the tests).
- Only what is implemented is advertised: ``loadSession`` and ``sessionCapabilities.list``
  only when sessions are stored (otherwise ``session/load`` and ``session/list`` answer
  ``-32601``), MCP over stdio and HTTP (SSE as the MCP package supports it), no auth
  methods, prompt content as the driver accepts it.
- ``initialize`` succeeds once per connection; a second one is refused (``-32600``) and the
  first capabilities stay.
- A session's MCP servers never fail ``session/new``: the answer waits for them to start (each
  bounded), problems are told after it (:mod:`acp_sidecar.server.mcp_session`), and
  ``acp_sidecar.mcp`` (the MCP package) is imported only for a session that names servers.
- A new session's ``cwd`` is an existing absolute directory of bounded length
  (:mod:`acp_sidecar.server.cwd`), else ``-32602``.
- A prompt carrying content the driver did not advertise is refused (``-32602`` naming the
  block).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_sidecar import __version__
from acp_sidecar.bridge.modes import MODE_IDS, mode_state
from acp_sidecar.protocol.content import (
    AudioContentBlock,
    ContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
)
from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.protocol.initialize import (
    PROTOCOL_VERSION,
    AgentCapabilities,
    AuthenticateRequest,
    AuthenticateResponse,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    McpCapabilities,
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
)
from acp_sidecar.protocol.session import (
    CancelNotification,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
)
from acp_sidecar.server.cwd import check_cwd
from acp_sidecar.server.loading import session_list, session_load
from acp_sidecar.server.notices import UserMessage
from acp_sidecar.server.session import Session

if TYPE_CHECKING:
    from acp_sidecar.server.app import AcpServer

logger = logging.getLogger(__name__)

MCP_SSE = True
"""Whether SSE MCP servers are supported: :data:`acp_sidecar.mcp.config.SSE_SUPPORTED`, kept
here so that ``initialize`` does not import the MCP package (a test keeps the two equal)."""

AGENT_INFO = Implementation(name="acp-sidecar", title="ACP Sidecar", version=__version__)


async def initialize(server: AcpServer, params: InitializeRequest) -> InitializeResponse:
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
    return InitializeResponse(
        protocol_version=PROTOCOL_VERSION,
        agent_capabilities=AgentCapabilities(
            load_session=server.stores_sessions,
            mcp_capabilities=McpCapabilities(http=True, sse=MCP_SSE),
            prompt_capabilities=server.driver.prompt_capabilities,
            session_capabilities=SessionCapabilities(
                list=SessionListCapabilities() if server.stores_sessions else None
            ),
        ),
        auth_methods=[],
        agent_info=AGENT_INFO,
    )


async def authenticate(server: AcpServer, params: AuthenticateRequest) -> AuthenticateResponse:
    """No authentication is required: any method succeeds."""
    return AuthenticateResponse()


async def session_new(server: AcpServer, params: NewSessionRequest) -> NewSessionResponse:
    """Create a session working in the absolute directory ``cwd``."""
    check_cwd(params.cwd, must_exist=True)
    session_id = uuid.uuid4().hex
    session = Session(session_id=session_id, cwd=params.cwd)
    session.recorder = server.recorder_for(session_id, params.cwd, session.policy.mode)
    if params.mcp_servers:
        from acp_sidecar.server.mcp_session import start_session_servers

        session.mcp = await start_session_servers(server, session, params.mcp_servers)
    server.sessions[session_id] = session
    if session.recorder is not None:
        # Stored now, so a session that is never prompted can be loaded by id; after the
        # answer is written and off the loop, so the cold start does not pay for it.
        asyncio.get_running_loop().call_soon(server.spawn, session.recorder.create_soon())
    server.announce_commands(session_id)
    if session.mcp is not None:
        session.mcp.release()  # problems starting them, told after the answer and commands
    return NewSessionResponse(session_id=session_id, modes=mode_state(session.policy.mode))


async def session_set_mode(
    server: AcpServer, params: SetSessionModeRequest
) -> SetSessionModeResponse:
    """Switch the session's mode (``ask``, ``auto`` or ``read-only``)."""
    session = server.session(params.session_id)
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


async def session_prompt(server: AcpServer, params: PromptRequest) -> PromptResponse:
    """Run one turn through the driver; answers with its stop reason."""
    session = server.session(params.session_id)
    check_prompt_content(params.prompt, server.driver.prompt_capabilities)
    stop_reason = await session.run_turn(
        server.driver,
        params.prompt,
        server.send_update,
        server.client,
        server.call_scope,
        grace=server.cancel_grace,
        inform=lambda text: server.inform(params.session_id, UserMessage("info", text)),
    )
    return PromptResponse(stop_reason=stop_reason)


def session_cancel(server: AcpServer, params: CancelNotification) -> None:
    """Cancel the session's running turn; its prompt then answers ``cancelled``."""
    # A prompt read just before this notification (same read) has a task that has not run
    # yet, so its turn has not started: act one loop iteration later, after that task's first
    # step has started the turn.
    asyncio.get_running_loop().call_soon(server.cancel_turn, params.session_id)


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
"""Each client → agent method's handler: the one place a handler is registered."""
