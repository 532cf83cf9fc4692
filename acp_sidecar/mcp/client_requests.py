"""The SDK's callbacks for a server's requests to its client, answered from a session's
:class:`~acp_sidecar.mcp.client_side.ClientSideHooks`.

Invariants:
- ``roots/list`` is answered from ``hooks.roots()`` at the time of the request, each absolute
  directory as a ``file://`` URI; a relative one is left out (it means nothing to a server).
- An elicitation reaches the hook as our own value (:data:`ElicitationRequest`), and its
  answer goes back as the SDK's result. Without ``hooks.elicit`` every elicitation is
  declined (``action: "decline"``); so is one the server's :class:`ElicitationGate` or
  :func:`url_refusal` refuses (:mod:`acp_sidecar.mcp.elicitation`: outside its calls, more
  than one open a call, a URL that is not a plain ``http(s)`` page), logged at a bounded
  rate; a hook that raises, or answers content the SDK cannot send, also declines, so an
  editor's failure never fails the server's tool call with an internal error of ours.
- Sampling is neither advertised nor offered: no sampling callback is given to the SDK, whose
  default answers a ``sampling/createMessage`` with the JSON-RPC error ``-32600 "Sampling not
  supported"``. (Giving it one would advertise the capability only to refuse every use.)
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Final, assert_never

import mcp_types as types
from mcp.client.session import ClientRequestContext

from acp_sidecar.mcp.client_side import (
    ClientSideHooks,
    ElicitationAnswer,
    ElicitationRequest,
    FormElicitation,
    UrlElicitation,
)
from acp_sidecar.mcp.elicitation import ElicitationGate, current_form, url_refusal
from acp_sidecar.throttle import Throttle

logger = logging.getLogger(__name__)
_DECLINED: Final = Throttle()


def roots_result(hooks: ClientSideHooks) -> types.ListRootsResult:
    """The ``roots/list`` answer for the session's directories now."""
    roots: list[types.Root] = []
    for directory in hooks.roots():
        path = Path(directory)
        if path.is_absolute():
            roots.append(types.Root(uri=path.as_uri(), name=path.name or str(path)))  # type: ignore[arg-type]
    return types.ListRootsResult(roots=roots)


def elicitation_request(
    params: types.ElicitRequestParams, tool_call_id: str | None = None
) -> ElicitationRequest:
    """The SDK's elicitation params as our value (a form in the current schema)."""
    match params:
        case types.ElicitRequestFormParams():
            return FormElicitation(
                message=params.message,
                requested_schema=current_form(params.requested_schema),
                tool_call_id=tool_call_id,
            )
        case types.ElicitRequestURLParams():
            return UrlElicitation(
                message=params.message,
                elicitation_id=params.elicitation_id,
                url=params.url,
                tool_call_id=tool_call_id,
            )
        case _:
            assert_never(params)


def elicit_result(answer: ElicitationAnswer) -> types.ElicitResult:
    """Our answer as the SDK's result (raises ValidationError for content it cannot send)."""
    if answer.action == "accept":
        content = None if answer.content is None else dict(answer.content)
        return types.ElicitResult(action="accept", content=content)
    return types.ElicitResult(action=answer.action)


class ClientCallbacks:
    """The SDK callbacks for one server, answering from one session's hooks."""

    def __init__(self, server: str, hooks: ClientSideHooks) -> None:
        self._server = server
        self._hooks = hooks
        self.gate: Final = ElicitationGate()
        """The server's running calls (its connection keeps it) and open questions."""

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
        request = elicitation_request(params, self.gate.call_id)
        refusal = self.gate.refusal()
        if refusal is None and isinstance(request, UrlElicitation):
            refusal = url_refusal(request.url)
        if refusal is not None:
            _DECLINED.log(
                logger,
                logging.WARNING,
                f"elicitations declined for MCP server {self._server!r}",
                "MCP server %r asked the user for input, declined: %s",
                self._server,
                refusal,
            )
            return types.ElicitResult(action="decline")
        try:
            with self.gate.question():
                answer = await self._hooks.elicit(request)
            return elicit_result(answer)
        except Exception:  # the hook's failure, or content the SDK refuses
            logger.exception(
                "MCP server %r: forwarding an elicitation failed; declined", self._server
            )
            return types.ElicitResult(action="decline")


__all__ = ["ClientCallbacks", "elicit_result", "elicitation_request", "roots_result"]
