"""The client side of MCP: what the sidecar answers when a server asks it something.

A server may ask its client for the roots it may work in (``roots/list``), for input from the
user (``elicitation/create``) and for a model completion (``sampling/createMessage``). The
session decides the answers through :class:`ClientSideHooks`; this module turns them into the
SDK's callbacks.

Invariants:
- ``roots/list`` is answered from ``hooks.roots()`` at the time of the request, each absolute
  directory as a ``file://`` URI; a relative one is left out (it means nothing to a server).
- Without ``hooks.elicit`` every elicitation is declined (``action: "decline"``); a hook that
  raises also declines, so an editor's failure never fails the server's tool call with an
  internal error of ours.
- Sampling is neither advertised nor offered: no sampling callback is given to the SDK, whose
  default answers a ``sampling/createMessage`` with the JSON-RPC error ``-32600 "Sampling not
  supported"``. (Giving it one would advertise the capability only to refuse every use.)
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import attrs
import mcp_types as types
from mcp.client.session import ClientRequestContext

logger = logging.getLogger(__name__)


@attrs.frozen
class ClientSideHooks:
    """How a session answers its MCP servers' requests to the client."""

    roots: Callable[[], Sequence[str]]
    """The session's directories (absolute), answered as ``file://`` roots."""
    elicit: Callable[[types.ElicitRequestParams], Awaitable[types.ElicitResult]] | None = None
    """Asks the user (ACP ``elicitation/create``); None -> every elicitation is declined."""


def roots_result(hooks: ClientSideHooks) -> types.ListRootsResult:
    """The ``roots/list`` answer for the session's directories now."""
    roots: list[types.Root] = []
    for directory in hooks.roots():
        path = Path(directory)
        if path.is_absolute():
            roots.append(types.Root(uri=path.as_uri(), name=path.name or str(path)))  # type: ignore[arg-type]
    return types.ListRootsResult(roots=roots)


class ClientCallbacks:
    """The SDK callbacks for one server, answering from one session's hooks."""

    def __init__(self, server: str, hooks: ClientSideHooks) -> None:
        self._server = server
        self._hooks = hooks

    async def list_roots(
        self, context: ClientRequestContext
    ) -> types.ListRootsResult | types.ErrorData:
        """``roots/list``: the session's directories as ``file://`` URIs."""
        try:
            return roots_result(self._hooks)
        except Exception:
            logger.exception("MCP server %r: listing the roots failed", self._server)
            return types.ErrorData(
                code=types.INTERNAL_ERROR, message="the client could not list its roots"
            )

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """``elicitation/create``: the session's hook, or a decline."""
        if self._hooks.elicit is None:
            return types.ElicitResult(action="decline")
        try:
            return await self._hooks.elicit(params)
        except Exception:
            logger.exception(
                "MCP server %r: forwarding an elicitation failed; declined", self._server
            )
            return types.ElicitResult(action="decline")
