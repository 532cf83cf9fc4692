"""The v2 handlers of session set-up. Each one is a v2 face on the core's handler for the same
work (``core``, the v1 table, handed in by :func:`~acp_sidecar.server.v2.mapping.v2_mapping`):
v2 params in, the core's value out in its v2 form, so both versions run one session core.

Invariant: a v2 connection's core sees a client without a file system or terminals that shows
notices, compaction and boolean options (:func:`core_capabilities`); nothing else here decides
what the core does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any, assert_never

from acp_sidecar import __version__
from acp_sidecar.bridge.v2.updates import option_of
from acp_sidecar.protocol import initialize as v1
from acp_sidecar.protocol import methods as m
from acp_sidecar.protocol import session as v1s
from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.protocol.v2 import PROTOCOL_VERSION
from acp_sidecar.protocol.v2 import initialize as v2
from acp_sidecar.protocol.v2 import session as v2s
from acp_sidecar.server import auth
from acp_sidecar.server.v2.mcp_servers import check_transports
from acp_sidecar.server.v2.permissions import V2PermissionAsker

if TYPE_CHECKING:
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.v2.background import SessionStates

Core = Mapping[str, Callable[..., Any]]
"""The core's handler of each v1 method, by v1 method name."""

AGENT_INFO = v2.Implementation(name="acp-sidecar", title="ACP Sidecar", version=__version__)


def core_capabilities(capabilities: v2.ClientCapabilities) -> v1.ClientCapabilities:
    """What the core should assume of a v2 client: no ``fs/*``, no ``terminal/*``, no modes
    (the mode is a config option); notices, compaction, plan operations, boolean options and
    terminal output are v2's baseline, child sessions its unstable surface; elicitation and
    terminal auth as the client said."""
    terminal_auth = capabilities.auth is not None and capabilities.auth.terminal is not None
    return v1.ClientCapabilities(
        elicitation=capabilities.elicitation,
        session=v1.ClientSessionCapabilities(
            compaction={}, config_options={"boolean": {}}, notices={}
        ),
        auth=v1.AuthCapabilities(terminal=terminal_auth),
        plan={},
        subagents={},  # unstable in v2, served to every v2 client (the same flag)
        # v2's terminals are baseline: the v1 cards carry one, and the v2 encoder draws it.
        meta={"terminal_output": True},
    )


def auth_method_of(method: v1.AuthMethod) -> v2.AuthMethod:
    """An auth method in its v2 form (``id`` → ``methodId``, ``env`` as a list, tagged)."""
    match method:
        case v1.AuthMethodAgent():
            return v2.AuthMethodAgent(
                method_id=method.id,
                name=method.name,
                description=method.description,
                meta=method.meta,
            )
        case v1.AuthMethodTerminal():
            env = [v2.EnvVariable(name=k, value=v) for k, v in (method.env or {}).items()]
            return v2.AuthMethodTerminal(
                method_id=method.id,
                name=method.name,
                description=method.description,
                args=list(method.args),
                env=env,
                meta=method.meta,
            )
        case _:
            assert_never(method)


async def initialize(
    states: SessionStates, server: Connection, params: v2.InitializeRequest
) -> v2.InitializeResponse:
    """Answer ``initialize`` in v2; once per connection, as over v1 (``states``: where the
    connection's ``state_update``s go out)."""
    if server.initialized:
        raise AcpError.invalid_request(
            "Invalid request: initialize was already called on this connection; "
            "the capabilities it gave stay in force"
        )
    server.client_capabilities = core_capabilities(params.capabilities)
    server.asker = server.elicitor = V2PermissionAsker(server, partial(states.send, server))
    server.initialized = True
    server.after_answer(server.recover_jobs())
    accepted = server.driver.prompt_capabilities
    methods = auth.auth_methods(
        server.client_capabilities, auth.this_program(), auth.named_config(server.settings)
    )
    return v2.InitializeResponse(
        protocol_version=PROTOCOL_VERSION,
        info=AGENT_INFO,
        capabilities=v2.AgentCapabilities(
            session=v2.SessionCapabilities(
                prompt=v2.PromptCapabilities(
                    image={} if accepted.image else None,
                    audio={} if accepted.audio else None,
                    embedded_context={} if accepted.embedded_context else None,
                ),
                mcp=v2.McpCapabilities(stdio={}, http={}),
                delete={} if server.stores_sessions else None,
                fork={} if server.stores_sessions else None,  # unstable
                additional_directories={},
            ),
            auth=v2.AgentAuthCapabilities(),
        ),
        auth_methods=[auth_method_of(method) for method in methods],
    )


async def login(core: Core, server: Connection, params: v2.LoginAuthRequest) -> Any:
    """``auth/login``: v1's ``authenticate`` (the settings re-read; every id succeeds)."""
    request = v1.AuthenticateRequest(method_id=params.method_id, meta=params.meta)
    answer: v1.AuthenticateResponse = await core[m.AUTHENTICATE](server, request)
    return v2.LoginAuthResponse(meta=answer.meta)


async def logout(core: Core, server: Connection, params: v2.LogoutAuthRequest) -> Any:
    """``auth/logout``: v1's ``logout``. v2 requires it wherever auth methods are offered
    (always here), so a server without settings, which has no key to forget, answers ``{}``."""
    if server.settings is None:
        return v2.LogoutAuthResponse()
    answer: v1.LogoutResponse = await core[m.LOGOUT](server, v1.LogoutRequest(meta=params.meta))
    return v2.LogoutAuthResponse(meta=answer.meta)


async def session_new(core: Core, server: Connection, params: v2s.NewSessionRequest) -> Any:
    """``session/new``: the core's, answered with the options in their v2 form. The commands
    follow in ``available_commands_update``, as over v1, so the answer does not wait for the
    session's tool set."""
    check_transports(params.mcp_servers)
    request = v1s.NewSessionRequest(
        cwd=params.cwd,
        mcp_servers=params.mcp_servers,
        additional_directories=params.additional_directories,
        meta=params.meta,
    )
    answer: v1s.NewSessionResponse = await core[m.SESSION_NEW](server, request)
    listed = [option_of(option) for option in answer.config_options or ()]
    return v2s.NewSessionResponse(session_id=answer.session_id, config_options=listed)


async def session_list(core: Core, server: Connection, params: v2s.ListSessionsRequest) -> Any:
    """``session/list``: the core's; v2 makes it baseline, so without a store no session is
    stored and the list is empty (v1 does not offer the method then)."""
    if not server.stores_sessions:
        return v2s.ListSessionsResponse(sessions=[])
    return await core[m.SESSION_LIST](server, params)


async def session_set_config_option(
    core: Core, server: Connection, params: v2s.SetSessionConfigOptionRequest
) -> Any:
    """``session/set_config_option``: ``type`` ``id`` with a value id, or ``boolean`` with a
    boolean (anything else is ``-32602``), then the core's; every option in its v2 form."""
    wanted = {"id": str, "boolean": bool}.get(params.type)
    if wanted is None:
        raise AcpError.invalid_params(
            f"Invalid params: type: {params.type!r} is not a value type (id, boolean)"
        )
    if not isinstance(params.value, wanted):
        takes = "a value id (a string)" if wanted is str else "true or false"
        raise AcpError.invalid_params(f"Invalid params: value: type {params.type!r} takes {takes}")
    request = v1s.SetSessionConfigOptionRequest(
        session_id=params.session_id,
        config_id=params.config_id,
        value=params.value,
        type=params.type,
        meta=params.meta,
    )
    answer: v1s.SetSessionConfigOptionResponse = await core[m.SESSION_SET_CONFIG_OPTION](
        server, request
    )
    listed = [option_of(option) for option in answer.config_options]
    return v2s.SetSessionConfigOptionResponse(config_options=listed)
