"""``session/fork`` over v2 (unstable schema): the core's fork (:mod:`acp_sidecar.server.
forking`) with v2's params and answer. Advertised as ``session.fork`` where sessions are
stored, as over v1; v2 has no modes, so the fork's mode is its ``mode`` config option.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_sidecar.bridge.v2.updates import option_of
from acp_sidecar.protocol import session as v1
from acp_sidecar.protocol.methods import SESSION_FORK
from acp_sidecar.protocol.v2.unstable import ForkSessionRequest, ForkSessionResponse
from acp_sidecar.server.v2.mcp_servers import check_transports

if TYPE_CHECKING:
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.v2.handlers import Core


async def session_fork(
    core: Core, server: Connection, params: ForkSessionRequest
) -> ForkSessionResponse:
    """Fork ``params.session_id`` through the core's handler; the commands follow in
    ``available_commands_update``, as after ``session/new``."""
    check_transports(params.mcp_servers)  # before anything is forked
    request = v1.ForkSessionRequest(
        session_id=params.session_id,
        cwd=params.cwd,
        mcp_servers=params.mcp_servers,
        additional_directories=params.additional_directories,
        system_prompt=params.system_prompt,
        meta=params.meta,
    )
    answer: v1.ForkSessionResponse = await core[SESSION_FORK](server, request)
    listed = [option_of(option) for option in answer.config_options or ()]
    return ForkSessionResponse(session_id=answer.session_id, config_options=listed)
