"""The typed proxy for agent→client requests: permission, the client's file system, elicitation.

A method is sent only when the client advertised it (else :class:`ClientCapabilityError`;
``session/request_permission`` is always allowed). An abandoned wait sends ``$/cancel_request``
and drops the late answer; an answer that does not decode fails the call at once (``-32603``);
a client's error is raised as :class:`AcpError` with its own message, on one bounded line.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pygls.exceptions import JsonRpcException

from acp_sidecar.agent.driver import ClientCapabilityError
from acp_sidecar.protocol.client import (
    CreateElicitationRequest,
    CreateElicitationResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)
from acp_sidecar.protocol.converter import from_wire, to_wire
from acp_sidecar.protocol.errors import AcpError, ProtocolParamsError
from acp_sidecar.protocol.initialize import ClientCapabilities
from acp_sidecar.protocol.methods import (
    ELICITATION_CREATE,
    FS_READ_TEXT_FILE,
    FS_WRITE_TEXT_FILE,
    SESSION_REQUEST_PERMISSION,
)
from acp_sidecar.server.messages import MalformedAnswerError
from acp_sidecar.text import first_line, shorten
from acp_sidecar.tools.errors import ToolCancelledError

if TYPE_CHECKING:
    from acp_sidecar.server.transport import AcpJsonRpcProtocol
    from acp_sidecar.tools.cancel import CancelSignal

R = TypeVar("R")

logger = logging.getLogger(__name__)

CLIENT_ERROR_SHOWN = 300
"""The most characters of a client's error message a card shows (the rest is logged)."""


class Elicitor(Protocol):
    """Sends an MCP server's ``elicitation/create`` to the editor (the client proxy, or the
    v2 mapping's asker, which reports the session's state around it)."""

    async def create_elicitation(
        self, request: CreateElicitationRequest, *, signal: CancelSignal | None = None
    ) -> CreateElicitationResponse: ...


class ClientProxy:
    """Agent → client requests over one connection (implements ``ClientRequests``)."""

    def __init__(
        self, protocol: AcpJsonRpcProtocol, capabilities: Callable[[], ClientCapabilities]
    ) -> None:
        self._protocol = protocol
        self._capabilities = capabilities

    @property
    def capabilities(self) -> ClientCapabilities:
        """What the client advertised in ``initialize``."""
        return self._capabilities()

    async def request_permission(
        self, request: RequestPermissionRequest, *, signal: CancelSignal | None = None
    ) -> RequestPermissionResponse:
        """``session/request_permission``: ask the user about a tool call."""
        return await self._call(
            SESSION_REQUEST_PERMISSION, request, RequestPermissionResponse, signal
        )

    async def read_text_file(
        self, request: ReadTextFileRequest, *, signal: CancelSignal | None = None
    ) -> ReadTextFileResponse:
        """``fs/read_text_file`` (needs ``fs.readTextFile``)."""
        if not self.capabilities.fs.read_text_file:
            raise ClientCapabilityError(
                "the client did not advertise fs.readTextFile; fs/read_text_file is unavailable"
            )
        return await self._call(FS_READ_TEXT_FILE, request, ReadTextFileResponse, signal)

    async def write_text_file(
        self, request: WriteTextFileRequest, *, signal: CancelSignal | None = None
    ) -> WriteTextFileResponse:
        """``fs/write_text_file`` (needs ``fs.writeTextFile``)."""
        if not self.capabilities.fs.write_text_file:
            raise ClientCapabilityError(
                "the client did not advertise fs.writeTextFile; fs/write_text_file is unavailable"
            )
        return await self._call(FS_WRITE_TEXT_FILE, request, WriteTextFileResponse, signal)

    def elicits(self, mode: str) -> bool:
        """Whether the client advertised ``elicitation/create`` in ``mode``."""
        elicitation = self.capabilities.elicitation
        if elicitation is None:
            return False
        if mode == "form":
            return elicitation.form is not None
        if mode == "url":
            return elicitation.url is not None
        return False

    async def create_elicitation(
        self, request: CreateElicitationRequest, *, signal: CancelSignal | None = None
    ) -> CreateElicitationResponse:
        """``elicitation/create`` (needs ``elicitation`` with the request's mode)."""
        if not self.elicits(request.mode):
            raise ClientCapabilityError(
                f"the client did not advertise elicitation.{request.mode}; "
                "elicitation/create is unavailable"
            )
        return await self._call(ELICITATION_CREATE, request, CreateElicitationResponse, signal)

    async def call(
        self, method: str, request: object, response_type: type[R], signal: CancelSignal | None
    ) -> R:
        """Any client method by name, ``request`` its params' value (a v2 connection's own
        requests go through here); abandoned as the named methods are."""
        return await self._call(method, request, response_type, signal)

    async def _call(
        self, method: str, request: object, response_type: type[R], signal: CancelSignal | None
    ) -> R:
        if signal is not None:
            signal.raise_if_cancelled()
        protocol = self._protocol
        msg_id = protocol.next_request_id()
        answer = asyncio.wrap_future(protocol.send_request(method, to_wire(request), msg_id=msg_id))
        loop = asyncio.get_running_loop()

        def abandon(_reason: str) -> None:
            loop.call_soon_threadsafe(protocol.abandon_request, msg_id)

        remove = signal.add_callback(abandon) if signal is not None else None
        try:
            result: Any = await answer
        except asyncio.CancelledError:
            protocol.abandon_request(msg_id)
            task = asyncio.current_task()
            if signal is not None and signal.cancelled and (task is None or not task.cancelling()):
                raise ToolCancelledError(f"{method} abandoned: {signal.reason}") from None
            raise
        except JsonRpcException as exc:
            raise client_error(method, exc.code, exc.message, exc.data) from None
        except MalformedAnswerError as exc:
            raise AcpError.internal_error(
                f"the client's answer to {method} is malformed: {exc}"
            ) from None
        finally:
            if remove is not None:
                remove()
        try:
            # ``null`` is a valid answer where the response has no required field
            # (``fs/write_text_file``): clients send it, the SDKs for a handler returning nothing.
            return from_wire({} if result is None else result, response_type)
        except ProtocolParamsError as exc:
            raise AcpError.internal_error(
                f"the client's answer to {method} is invalid: {exc}"
            ) from None


def _detail(data: Any) -> str | None:
    """The human-readable detail a client put in an error's ``data``, if any."""
    if isinstance(data, str):
        return data
    if isinstance(data, dict):
        for key in ("details", "detail", "message", "error", "reason"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value
    return None


def client_error(method: str, code: int, message: object, data: Any) -> AcpError:
    """The client's error answer to ``method``, its message made fit for a card."""
    text = message if isinstance(message, str) and message.strip() else f"error {code}"
    detail = _detail(data)
    if detail is not None and detail not in text:
        text = f"{text}: {detail}"
    shown = first_line(text, CLIENT_ERROR_SHOWN)
    if shown != text:
        logger.info("the client answered %s with error %s: %s", method, code, shorten(text, 2000))
    return AcpError(code, shown, data)
