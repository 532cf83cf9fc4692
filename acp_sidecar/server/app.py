"""The ACP agent server: a :class:`~acp_sidecar.server.connection.Connection` with the
handler table (:data:`acp_sidecar.server.handlers.HANDLERS`) registered.

Invariants: each handler's params are decoded into its method's type from
:data:`~acp_sidecar.protocol.methods.METHOD_TO_TYPES` (``-32602`` naming the field) and its
result encoded; every request but ``initialize`` is refused (``-32600``) until ``initialize``
succeeded, and notifications before it, or whose params do not decode, are ignored (logged).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_sidecar.agent.model.budget import NO_LIMITS, Limits
from acp_sidecar.bridge.modes import DEFAULT_MODE, ModeId
from acp_sidecar.protocol.converter import from_wire, to_wire
from acp_sidecar.protocol.errors import AcpError, ProtocolParamsError
from acp_sidecar.protocol.methods import EXTENSION_TYPES, INITIALIZE, METHOD_TO_TYPES
from acp_sidecar.server.children import refuse_child
from acp_sidecar.server.connection import DEFAULT_MCP_START_TIMEOUT, Connection
from acp_sidecar.server.handlers import EXTENSION_HANDLERS, HANDLERS
from acp_sidecar.server.messages import throttled
from acp_sidecar.server.session import DEFAULT_CANCEL_GRACE
from acp_sidecar.text import shorten

if TYPE_CHECKING:
    from pathlib import Path

    from acp_sidecar.agent.driver import DriverFactory
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.server.settings import ServeSettings
    from acp_sidecar.store import SessionStore


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
        for method, handler in HANDLERS.items():
            self._register(method, handler, METHOD_TO_TYPES[method].params)
        for method, handler in EXTENSION_HANDLERS.items():
            self._register(method, handler, EXTENSION_TYPES[method].params)

    def feature(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: handlers are registered from :data:`~acp_sidecar.server.handlers.HANDLERS`
        only, where each gets its params decoded and the ``initialize`` gate; pygls's own
        decorator would register one without either."""
        raise TypeError("register a handler in acp_sidecar.server.handlers.HANDLERS")

    def _register(self, method: str, handler: Callable[..., Any], params_type: type[Any]) -> None:
        """Register ``handler(connection, params)`` for ``method`` with pygls: a coroutine
        answers a request, a plain function handles a notification."""
        gated = method != INITIALIZE

        if inspect.iscoroutinefunction(handler):

            async def run_request(server: AcpServer, raw: Any) -> Any:
                if gated and not server.initialized:
                    raise AcpError.invalid_request(f"Invalid request: {method} before initialize")
                params = decode_params(raw, params_type)
                refuse_child(server.children, method, getattr(params, "session_id", None))
                result = await handler(server, params)
                return None if result is None else to_wire(result)

            self.protocol.fm.feature(method)(run_request)
        else:

            def run_notification(server: AcpServer, raw: Any) -> None:
                if gated and not server.initialized:
                    throttled(
                        logging.WARNING,
                        "a notification before initialize",
                        "ignored %s before initialize",
                        method,
                    )
                    return
                try:
                    params = decode_params(raw, params_type)
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
    try:
        return from_wire(raw, params_type)
    except ProtocolParamsError as exc:
        raise AcpError.invalid_params(f"Invalid params: {exc}") from None
