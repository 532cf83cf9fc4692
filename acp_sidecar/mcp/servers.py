"""A session's MCP servers: started together, watched, stopped together.

:meth:`McpServers.start` never raises for a server's failure (one line to ``on_problem``);
callbacks run on the loop, never concurrently. :meth:`aclose` is idempotent and leaves no
process group behind.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

from acp_sidecar.mcp.client_side import ClientSideHooks
from acp_sidecar.mcp.config import McpServerConfig
from acp_sidecar.mcp.connection import McpConnection
from acp_sidecar.mcp.errors import McpError
from acp_sidecar.mcp.launch import Launches

if TYPE_CHECKING:
    from acp_sidecar.mcp.listing import ListedTool

logger = logging.getLogger(__name__)

__all__ = ["ClientSideHooks", "McpServers"]


class McpServers:
    """The MCP servers of one session (see the module invariants)."""

    def __init__(
        self,
        *,
        on_problem: Callable[[str], None],
        on_tools_changed: Callable[[str], None] | None,
    ) -> None:
        self._on_problem = on_problem
        self._on_tools_changed = on_tools_changed
        self._all: list[McpConnection] = []
        self._live: dict[str, McpConnection] = {}
        self._reported: dict[str, tuple[ListedTool, ...]] = {}
        """Each live server's tools as last reported (at start, then on_tools_changed)."""
        self._closed = False

    @classmethod
    async def start(
        cls,
        configs: Sequence[McpServerConfig],
        *,
        hooks: ClientSideHooks,
        start_timeout: float = 10.0,
        on_problem: Callable[[str], None],
        on_tools_changed: Callable[[str], None] | None = None,
        launched: Launches | None = None,
        created: Callable[[McpServers], None] | None = None,
    ) -> McpServers:
        """Starts every server concurrently, each bounded by start_timeout. Never raises for a
        server's failure: calls on_problem(one line naming the server and why) and leaves it
        out. Later: a server that dies -> on_problem(...) + removed + on_tools_changed(name);
        notifications/tools/list_changed -> re-list, then on_tools_changed(name).

        ``launched``: stdio servers already started (:func:`acp_sidecar.mcp.launch.launch_all`,
        before the SDK was imported); each connection takes its own, the others start theirs.
        ``created``: called with the servers before any is opened, so that their owner can
        :meth:`aclose` them while they are still starting (a shutdown); ``start`` then
        returns soon, the servers that had not started left out.
        """
        servers = cls(on_problem=on_problem, on_tools_changed=on_tools_changed)
        if created is not None:
            created(servers)
        names: set[str] = set()
        for config in configs:
            if config.name in names:
                servers._problem(f"MCP server {config.name!r} was not started: its name is taken")
                continue
            names.add(config.name)
            servers._all.append(
                McpConnection(
                    config,
                    hooks,
                    on_tools_changed=servers._tools_changed,
                    on_gone=servers._gone,
                    process=None if launched is None else launched.take(config.name),
                )
            )
        try:
            outcomes = await asyncio.gather(
                *(connection.open(start_timeout) for connection in servers._all),
                return_exceptions=True,
            )
        except BaseException:
            await servers.aclose()
            raise
        for connection, outcome in zip(servers._all, outcomes, strict=True):
            if outcome is None:
                servers._live[connection.name] = connection
                servers._reported[connection.name] = connection.tools
                continue
            if not isinstance(outcome, Exception):
                await servers.aclose()
                raise outcome
            reason = str(outcome) if isinstance(outcome, McpError) else repr(outcome)
            servers._problem(f"MCP server {connection.name!r} did not start: {reason}")
        return servers

    @property
    def connections(self) -> Mapping[str, McpConnection]:
        """The live servers, in config order."""
        return MappingProxyType({c.name: c for c in self._all if c.name in self._live})

    async def aclose(self, grace: float | None = None) -> None:
        """Stops all; a stdio server's whole process group is gone when this returns. Idempotent.

        ``grace`` bounds a hurried stop (process shutdown): each stdio server gets half of it
        after its stdin closes, the rest after SIGTERM, then SIGKILL; None -> the gentle
        default (about 2 s, then 1 s after SIGTERM)."""
        self._closed = True
        self._live.clear()
        await asyncio.gather(*(connection.aclose(grace) for connection in self._all))

    def _gone(self, connection: McpConnection, reason: str) -> None:
        if self._closed or self._live.get(connection.name) is not connection:
            return
        del self._live[connection.name]
        self._reported.pop(connection.name, None)
        self._problem(
            f"MCP server {connection.name!r} stopped ({reason}); its tools are no longer available"
        )
        self._changed(connection.name)

    def _tools_changed(self, connection: McpConnection) -> None:
        if self._closed or self._live.get(connection.name) is not connection:
            return
        tools = connection.tools
        if tools == self._reported.get(connection.name):
            return
        self._reported[connection.name] = tools
        self._changed(connection.name)

    def _problem(self, message: str) -> None:
        logger.warning("%s", message)
        try:
            self._on_problem(message)
        except Exception:
            logger.exception("on_problem raised")

    def _changed(self, name: str) -> None:
        if self._on_tools_changed is None:
            return
        try:
            self._on_tools_changed(name)
        except Exception:
            logger.exception("on_tools_changed raised")
