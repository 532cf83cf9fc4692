"""The ACP agent server: a :class:`~acp_sidecar.server.connection.Connection` with the
handler table (:data:`acp_sidecar.server.handlers.HANDLERS`) registered.

Invariants: each request runs the handler of the connection's wire mapping (v1's until
``initialize`` negotiated another, :mod:`acp_sidecar.server.negotiation`; a method the mapping
lacks is ``-32601``); its params are decoded into the mapping's type for the method
(``-32602`` naming the field) and its result encoded; every request but ``initialize`` is
refused (``-32600``) until ``initialize`` succeeded, and notifications before it, or whose
params do not decode, are ignored (logged).
"""

from __future__ import annotations

import inspect
import logging
from collections import ChainMap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_sidecar.agent.model.budget import NO_LIMITS, Limits
from acp_sidecar.bridge.modes import DEFAULT_MODE, ModeId
from acp_sidecar.protocol.converter import from_wire, to_wire
from acp_sidecar.protocol.decoding import text_prompt_request
from acp_sidecar.protocol.errors import AcpError, ProtocolParamsError
from acp_sidecar.protocol.methods import EXTENSION_TYPES, INITIALIZE, METHOD_TO_TYPES
from acp_sidecar.protocol.session import PromptRequest
from acp_sidecar.server.children import refuse_child
from acp_sidecar.server.connection import DEFAULT_MCP_START_TIMEOUT, Connection
from acp_sidecar.server.handlers import EXTENSION_HANDLERS, HANDLERS
from acp_sidecar.server.messages import throttled
from acp_sidecar.server.negotiation import mapping_for, negotiate
from acp_sidecar.server.pygls_adapter import method_not_found
from acp_sidecar.server.session import DEFAULT_CANCEL_GRACE
from acp_sidecar.server.wire import WireMapping
from acp_sidecar.text import shorten

if TYPE_CHECKING:
    from pathlib import Path

    from acp_sidecar.agent.driver import DriverFactory
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.server.settings import ServeSettings
    from acp_sidecar.store import SessionStore

logger = logging.getLogger(__name__)

V1 = WireMapping(
    version=1,
    handlers=ChainMap(HANDLERS, EXTENSION_HANDLERS),
    method_types=ChainMap(dict(METHOD_TO_TYPES), dict(EXTENSION_TYPES)),
    encode_update=to_wire,
)
"""The v1 mapping: the handler table, the schema's types and the extensions' (views of the
tables, not copies: what the tables say when a server is built is what it serves)."""


class AcpServer(Connection):
    """One ACP connection serving :data:`~acp_sidecar.server.handlers.HANDLERS`."""

    def __init__(
        self,
        driver_factory: DriverFactory | None = None,
        *,
        tools: ToolsProvider | None = None,
        store: Callable[[], SessionStore] | None = None,
        allow_outside_workspace: bool = False,
        cancel_grace: float = DEFAULT_CANCEL_GRACE,
        mcp_start_timeout: float = DEFAULT_MCP_START_TIMEOUT,
        default_mode: ModeId = DEFAULT_MODE,
        settings: ServeSettings | None = None,
        job_records: Callable[[], Path] | None = None,
        budget: Limits = NO_LIMITS,
        acp_v2: bool = False,
    ) -> None:
        super().__init__(
            driver_factory,
            tools=tools,
            store=store,
            allow_outside_workspace=allow_outside_workspace,
            cancel_grace=cancel_grace,
            mcp_start_timeout=mcp_start_timeout,
            default_mode=default_mode,
            settings=settings,
            job_records=job_records,
            budget=budget,
        )
        self.acp_v2 = acp_v2
        """Whether ``initialize`` may negotiate v2 (read there only: a refresh does not switch)."""
        self.wire_mapping = V1
        """The connection's wire mapping, chosen once by the first ``initialize``."""
        self._registered: set[str] = set()
        self._register_all(V1)

    def feature(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: handlers are registered from :data:`~acp_sidecar.server.handlers.HANDLERS`
        only, where each gets its params decoded and the ``initialize`` gate; pygls's own
        decorator would register one without either."""
        raise TypeError("register a handler in acp_sidecar.server.handlers.HANDLERS")

    def _register_all(self, mapping: WireMapping) -> None:
        """Register with pygls each method of ``mapping`` not registered yet (a name unknown
        to every mapping negotiated stays unregistered: pygls's own ``-32601``)."""
        for method, handler in mapping.handlers.items():
            if method not in self._registered:
                self._registered.add(method)
                self._register(method, inspect.iscoroutinefunction(handler))

    def _negotiate(self, raw: Any) -> None:
        """Choose the wire mapping for the version the first ``initialize`` asks."""
        if self.initialized:
            return  # refused by the handler; the first one's mapping stays
        asked = raw.get("protocolVersion") if isinstance(raw, dict) else None
        self.wire_mapping = mapping_for(negotiate(asked, self.acp_v2), V1)
        self.encode_update = self.wire_mapping.encode_update
        self._register_all(self.wire_mapping)

    def _register(self, method: str, request: bool) -> None:
        """Register ``method`` with pygls: a request's handler (a coroutine) is answered, a
        notification's (a plain function) is not; each runs the connection's mapping's."""
        gated = method != INITIALIZE

        if request:

            async def run_request(server: AcpServer, raw: Any) -> Any:
                if not gated:
                    server._negotiate(raw)
                mapping = server.wire_mapping
                handler = mapping.handlers.get(method)
                if handler is None:
                    raise method_not_found(method)
                if gated and not server.initialized:
                    raise AcpError.invalid_request(f"Invalid request: {method} before initialize")
                params = decode_params(raw, mapping.method_types[method].params)
                refuse_child(server.children, method, getattr(params, "session_id", None))
                result = await handler(server, params)
                return None if result is None else to_wire(result)

            self.protocol.fm.feature(method)(run_request)
        else:

            def run_notification(server: AcpServer, raw: Any) -> None:
                handler = server.wire_mapping.handlers.get(method)
                if handler is None:
                    logger.warning(
                        "ignored the notification %s: not served over ACP v%d",
                        method,
                        server.wire_mapping.version,
                    )
                    return
                if gated and not server.initialized:
                    throttled(
                        logging.WARNING,
                        "a notification before initialize",
                        "ignored %s before initialize",
                        method,
                    )
                    return
                try:
                    params = decode_params(raw, server.wire_mapping.method_types[method].params)
                except AcpError as exc:  # a notification has no answer: log it
                    throttled(
                        logging.WARNING,
                        "a notification with wrong params",
                        "ignored %s: %s",
                        method,
                        shorten(exc.message, 300),
                    )
                    return
                handler(server, params)

            self.protocol.fm.feature(method)(run_notification)


def decode_params(raw: Any, params_type: type[Any]) -> Any:
    """The ACP params value of a request, or ``-32602`` naming the offending field."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise AcpError.invalid_params("Invalid params: params must be an object")
    if params_type is PromptRequest and (prompt := text_prompt_request(raw)) is not None:
        return prompt
    try:
        return from_wire(raw, params_type)
    except ProtocolParamsError as exc:
        raise AcpError.invalid_params(f"Invalid params: {exc}") from None
