"""The SDK's callbacks for a server's requests to its client, answered from the session's hooks.

An elicitation is declined without a hook, outside the server's calls, or when the hook fails:
an editor's failure never fails a server's tool call. Sampling is not advertised.
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
