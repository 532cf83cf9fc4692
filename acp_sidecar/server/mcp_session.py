"""A session's MCP servers: started from its ``mcpServers``, their tools in its own registry.

Imported only for a session that names servers (it is what imports :mod:`acp_sidecar.mcp`).
Starting never fails the session: a server refused, late or dead is told and left out. A turn
keeps the registry it started with; :meth:`SessionServers.aclose` stops every server, those
still starting included.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, assert_never

import attrs

from acp_sidecar.agent.driver import ClientCapabilityError
from acp_sidecar.bridge.notices import UserMessage
from acp_sidecar.protocol.client import CreateElicitationRequest
from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.server.state import announce_commands
from acp_sidecar.throttle import Throttle

if TYPE_CHECKING:
    from acp_sidecar.mcp.client_side import ElicitationAnswer, ElicitationRequest
    from acp_sidecar.mcp.config import McpServerConfig
    from acp_sidecar.mcp.launch import Launches
    from acp_sidecar.mcp.servers import McpServers
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.session import Session
    from acp_sidecar.tools.definition import ToolDefinition

logger = logging.getLogger(__name__)
_UNTOLD: Final = Throttle()
TOLD_PER_SERVER: Final = 10
"""Warnings about one server's tools told one by one; the rest are counted."""


@attrs.define
class _Warned:
    """What the user was told about one server's tools."""

    told: set[str] = attrs.field(factory=set)
    more_told: bool = False
    """Whether the line saying there are more was told."""


class SessionServers:
    """One session's MCP servers and the registry made from their tools."""

    def __init__(self, server: Connection, session: Session) -> None:
        self._server = server
        self._session = session
        self._servers: McpServers | None = None
        self._launched: Launches | None = None
        """Processes started ahead of their connections, while the start runs."""
        self._starting: McpServers | None = None
        """The servers being started (their handshakes running), while the start runs."""
        self._held: list[str] | None = []
        """Problems waiting for the session's answer to go out; ``None`` once it has."""
        self._told: set[str] = set()
        """Registry problems already told (a rebuild finds them again)."""
        self._warned: dict[str, _Warned] = {}
        """Per server: its tools' warnings told (a rebuild finds them again)."""
        self._closed = False

    async def start(self, raw: Sequence[Mapping[str, Any]]) -> None:
        """Start the servers ``raw`` (the request's ``mcpServers``) names and make the
        session's registry; never raises for a server's sake."""
        # Neither parsing nor starting a stdio server's process needs the MCP SDK, whose
        # first import takes 0.5-0.9 s: the servers boot while it loads, off the loop (so
        # other sessions' turns keep streaming meanwhile).
        from acp_sidecar.mcp.config import parse_mcp_servers

        configs, refused = parse_mcp_servers(raw)
        for message in refused:
            logger.warning("session %s: %s", self._session.session_id, message)
            self._tell(message)
        if configs:
            # Known to the server before anything starts: its shutdown stops them too.
            self._server.starting_mcp.add(self)
            try:
                await self._start(configs)
            finally:
                self._server.starting_mcp.discard(self)
        if self._closed:  # the session was replaced or the server stopped meanwhile
            await self.aclose()
            return
        self._rebuild()

    async def _start(self, configs: Sequence[McpServerConfig]) -> None:
        from acp_sidecar.mcp.launch import launch_all

        if self._closed:
            return
        launched = self._launched = await launch_all(configs)
        base: asyncio.Future[object] | None = None
        try:
            await asyncio.to_thread(_import_servers)
            from acp_sidecar.mcp.servers import ClientSideHooks, McpServers

            # What the handshakes do not need (the tools' module, ~50 ms, and the
            # server's own registry, ~50-100 ms) is made while they run.
            base = asyncio.ensure_future(asyncio.to_thread(self._prepare_registry))

            hooks = ClientSideHooks(
                roots=self._roots,
                elicit=self._elicit if self._server.client.capabilities.elicitation else None,
            )
            if not self._closed:
                self._servers = await McpServers.start(
                    configs,
                    hooks=hooks,
                    start_timeout=self._server.mcp_start_timeout,
                    on_problem=self._tell,  # they log it themselves
                    on_tools_changed=self._tools_changed,
                    launched=launched,
                    created=self._created,
                )
        except Exception as exc:  # a failure of ours must not fail the session either
            logger.exception("starting the MCP servers failed")
            self._tell(f"The MCP servers could not be started: {exc}")
        finally:
            self._starting = self._launched = None
            await launched.aclose()  # those no connection took
            if base is not None:
                await asyncio.shield(base)

    def _created(self, servers: McpServers) -> None:
        self._starting = servers

    def _prepare_registry(self) -> object:
        """In a worker thread: import the tools' module, build the server's own registry."""
        import acp_sidecar.mcp.tools  # noqa: F401

        return self._server.tools.registry

    def release(self) -> None:
        """Tell the held problems, after the request's answer (call from its handler: the
        message is scheduled behind the answer and the commands update)."""
        held, self._held = self._held, None
        if held:
            session_id = self._session.session_id
            messages = [UserMessage("warning", message) for message in held]

            async def tell() -> None:
                self._server.tell(session_id, *messages, keep=True)

            self._server.after_answer(tell())

    async def aclose(self, grace: float | None = None) -> None:
        """Stop every server, those still starting included; idempotent. ``grace``: see
        :meth:`acp_sidecar.mcp.servers.McpServers.aclose` (a hurried stop at exit)."""
        self._closed = True
        servers, self._servers = self._servers, None
        starting, launched = self._starting, self._launched
        await asyncio.gather(
            *(s.aclose(grace) for s in (servers, starting) if s is not None),
            *([] if launched is None else [launched.aclose(grace)]),
        )

    def _roots(self) -> Sequence[str]:
        return (self._session.cwd,)

    def _tell(self, message: str) -> None:
        """Tell the user ``message`` (each one names its server; where it arose logs it)."""
        if self._held is not None:
            self._held.append(message)
        elif not self._closed:
            self._server.tell(self._session.session_id, UserMessage("warning", message), keep=True)

    def _tools_changed(self, name: str) -> None:
        if self._closed:
            return
        logger.info(
            "session %s: the tools of MCP server %s changed", self._session.session_id, name
        )
        self._rebuild()
        if self._held is None:  # before the answer, the first announcement carries them
            announce_commands(self._server, self._session.session_id)

    def _rebuild(self) -> None:
        from acp_sidecar.mcp.tools import mcp_tool_definitions

        base = self._server.tools.registry
        taken = {definition.name for definition in base.visible()}
        extra: list[ToolDefinition] = []
        connections = {} if self._servers is None else self._servers.connections
        for connection in connections.values():
            definitions, warnings = mcp_tool_definitions(connection, taken=taken)
            self._warn(connection.name, warnings)
            extra.extend(definitions)
            taken.update(definition.name for definition in definitions)
        if not extra:
            self._session.tools = None
            return
        registry, problems = self._server.tools.session_registry(extra)
        for problem in problems:
            self._tell_once(problem)
        self._session.tools = registry

    def _tell_once(self, message: str) -> None:
        if message not in self._told:
            self._told.add(message)
            self._tell(message)

    def _warn(self, server: str, warnings: Sequence[str]) -> None:
        """Tell and log ``server``'s tool warnings (each once, up to the bound), count the rest."""
        warned = self._warned.setdefault(server, _Warned())
        untold = 0
        for warning in warnings:
            if warning in warned.told:
                continue
            if len(warned.told) < TOLD_PER_SERVER:
                warned.told.add(warning)
                logger.warning("session %s: %s", self._session.session_id, warning)
                self._tell(warning)
            else:
                untold += 1
        if not untold:
            return
        if not warned.more_told:
            warned.more_told = True
            self._tell(
                f"The MCP server {server!r} has more tools that cannot be used ({untold:,} "
                "now); they are not told one by one."
            )
        _UNTOLD.log(
            logger,
            logging.WARNING,
            f"untold warnings about MCP server {server!r}",
            "session %s: %d more warnings about the tools of MCP server %r, not told",
            self._session.session_id,
            untold,
            server,
        )

    async def _elicit(self, asked: ElicitationRequest) -> ElicitationAnswer:
        from acp_sidecar.mcp.client_side import ElicitationAnswer, FormElicitation, UrlElicitation

        client = self._server.client
        session_id = self._session.session_id
        match asked:
            case FormElicitation():
                request = CreateElicitationRequest(
                    session_id=session_id,
                    message=asked.message,
                    mode="form",
                    requested_schema=dict(asked.requested_schema),
                    tool_call_id=asked.tool_call_id,
                )
            case UrlElicitation():
                request = CreateElicitationRequest(
                    session_id=session_id,
                    message=asked.message,
                    mode="url",
                    elicitation_id=asked.elicitation_id,
                    url=asked.url,
                    tool_call_id=asked.tool_call_id,
                )
            case _:
                assert_never(asked)
        if not client.elicits(request.mode):
            return ElicitationAnswer(action="decline")
        try:
            response = await self._server.elicitor.create_elicitation(request)
        except (AcpError, ClientCapabilityError) as exc:
            logger.info("the editor did not answer an MCP server's elicitation: %s", exc)
            return ElicitationAnswer(action="cancel")
        match response.action:  # an editor's extension action is passed on as cancel
            case "accept":
                return ElicitationAnswer(action="accept", content=response.content)
            case "decline":
                return ElicitationAnswer(action="decline")
            case _:
                return ElicitationAnswer(action="cancel")


def _import_servers() -> None:
    import acp_sidecar.mcp.servers  # noqa: F401


async def start_session_servers(
    server: Connection, session: Session, raw: Sequence[Mapping[str, Any]]
) -> SessionServers:
    """Start the servers ``raw`` names for ``session`` and make it their registry; the
    caller sets ``session.mcp`` and, once its answer is scheduled, calls ``release``."""
    servers = SessionServers(server, session)
    await servers.start(raw)
    return servers
