"""ACP's JSON-RPC over NDJSON, on pygls's ``JsonRPCProtocol`` machinery.

pygls keeps what it is good at: the handler table (``fm``), request ids and the futures of
agent→client requests (``send_request`` / ``_handle_response``), running handlers as tasks,
and ``$/cancel_request`` bookkeeping (``_request_futures``). This subclass replaces what is
LSP-specific: Content-Length framing becomes one JSON object per line, incoming messages are
checked against JSON-RPC 2.0 before dispatch, and outgoing messages are encoded compactly,
once, without per-message logging.

Invariants:
- Every line that is not empty gets exactly one outcome: dispatched, or answered with
  ``-32700`` (not JSON, not UTF-8) or ``-32600`` (not a JSON-RPC message; a line over the
  limit) with the request's id when it could be read, else ``id: null``.
- Every request gets exactly one response; a handler that raises answers ``-32603`` and a
  request cancelled by ``$/cancel_request`` answers ``-32800``.
- An encoded message is valid UTF-8 and contains no raw newline.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import threading
import uuid
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException
from pygls.protocol.json_rpc import JsonRPCProtocol, JsonRPCRequestMessage, MsgId

from acp_sidecar.protocol.errors import (
    INTERNAL_ERROR,
    AcpError,
)
from acp_sidecar.protocol.methods import CANCEL_REQUEST

if TYPE_CHECKING:
    from acp_sidecar.server.framing import WireWriter

logger = logging.getLogger(__name__)

JSONRPC = "2.0"

# Messages are trees built by ``to_wire`` and the handlers: no cycles to look for (a cycle
# would still fail, with RecursionError, which callers catch like ValueError).
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)
_ASCII_ENCODER = json.JSONEncoder(
    ensure_ascii=True, separators=(",", ":"), allow_nan=False, check_circular=False
)


def encode_message(message: dict[str, Any]) -> bytes:
    """One NDJSON line: compact JSON, UTF-8, newline-terminated.

    Raises ``ValueError``/``TypeError``/``RecursionError`` for what JSON cannot carry (NaN,
    objects, cycles).
    """
    text = _ENCODER.encode(message)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        # A lone surrogate (echoed from a ``\\ud800`` escape) is not UTF-8: escape it.
        return _ASCII_ENCODER.encode(message).encode("ascii") + b"\n"


def error_object(exc: BaseException) -> dict[str, Any]:
    """The wire ``error`` object a handler's exception answers with."""
    if isinstance(exc, AcpError):
        return exc.to_json()
    if isinstance(exc, JsonRpcException):
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.data is not None:
            error["data"] = exc.data
        return error
    return {"code": INTERNAL_ERROR, "message": f"Internal error: {type(exc).__name__}: {exc}"}


def _is_request_id(value: object) -> bool:
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    )


class AcpJsonRpcProtocol(JsonRPCProtocol):
    """pygls's JSON-RPC protocol speaking NDJSON with ACP's error rules."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.wire: WireWriter | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = threading.get_ident()

    # ---- incoming ---------------------------------------------------------------------

    def receive_line(self, line: bytes | bytearray) -> None:
        """Handle one NDJSON line (without its newline)."""
        if not line or line.isspace():
            return
        try:
            message = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError:
            self.send_error(None, AcpError.parse_error("Parse error: the line is not UTF-8"))
            return
        except (ValueError, RecursionError) as exc:
            self.send_error(None, AcpError.parse_error(f"Parse error: {_short(exc)}"))
            return
        self.receive_message(message)

    def receive_oversized_line(self, limit: int) -> None:
        """A line longer than the reader's limit was skipped unread."""
        logger.warning("refused a line longer than %d bytes", limit)
        self.send_error(
            None,
            AcpError.invalid_request(
                f"Invalid request: message longer than {limit} bytes; it was skipped"
            ),
        )

    def receive_message(self, message: Any) -> None:
        """Check a decoded message against JSON-RPC 2.0 and dispatch it."""
        if not isinstance(message, dict):
            kind = "a batch (array)" if isinstance(message, list) else type(message).__name__
            self._invalid(None, f"expected an object, got {kind}")
            return
        has_id = "id" in message
        msg_id: Any = message.get("id")  # str | int | None once checked (None: a null id)
        reply_id = msg_id if has_id and _is_request_id(msg_id) else None
        if message.get("jsonrpc") != JSONRPC:
            self._invalid(reply_id, '"jsonrpc" must be "2.0"')
            return
        if has_id and not _is_request_id(msg_id):
            self._invalid(None, '"id" must be a string, an integer or null')
            return
        if "method" in message:
            method = message["method"]
            params = message.get("params")
            if not isinstance(method, str):
                self._invalid(reply_id, '"method" must be a string')
            elif params is not None and not isinstance(params, (dict, list)):
                self._invalid(reply_id, '"params" must be an object')
            elif has_id:
                contextvars.copy_context().run(self._handle_request, msg_id, method, params)
            else:
                self._receive_notification(method, params)
            return
        if has_id and ("result" in message) != ("error" in message):
            self._receive_response(msg_id, message)
            return
        self._invalid(reply_id, "neither a request, a notification nor a response")

    def _invalid(self, reply_id: MsgId | None, reason: str) -> None:
        self.send_error(reply_id, AcpError.invalid_request(f"Invalid request: {reason}"))

    def _receive_notification(self, method: str, params: Any) -> None:
        if method == CANCEL_REQUEST:
            request_id: Any = params.get("requestId") if isinstance(params, dict) else None
            if isinstance(params, dict) and "requestId" in params and _is_request_id(request_id):
                self._handle_cancel_notification(request_id)
            else:
                logger.warning("ignored %s without a valid requestId", CANCEL_REQUEST)
            return
        contextvars.copy_context().run(self._handle_notification, method, params)

    def _receive_response(self, msg_id: MsgId, message: dict[str, Any]) -> None:
        if msg_id not in self._request_futures:
            logger.debug("dropped a response to unknown or abandoned request %r", msg_id)
            return
        error = message.get("error")
        if error is None and "error" not in message:
            self._handle_response(msg_id, message.get("result"))
            return
        if not (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and isinstance(error.get("message"), str)
        ):
            error = {"code": INTERNAL_ERROR, "message": f"malformed error response: {error!r}"}
        from lsprotocol.types import ResponseError  # already imported by pygls

        self._handle_response(
            msg_id, None, ResponseError(error["code"], error["message"], error.get("data"))
        )

    def _handle_response(self, msg_id: MsgId, result: Any = None, error: Any = None) -> None:
        self._result_types.pop(msg_id, None)
        super()._handle_response(msg_id, result, error)

    # ---- handler outcomes ---------------------------------------------------------------

    def _send_handler_result(self, future: Future[Any], *, msg_id: MsgId) -> None:
        self._request_futures.pop(msg_id, None)
        if future.cancelled():
            self.send_error(msg_id, AcpError.request_cancelled(f"Request {msg_id!r} was cancelled"))
            return
        exc = future.exception()
        if exc is None:
            self._send_response(msg_id, result=future.result())
            return
        if not isinstance(exc, (AcpError, JsonRpcException)):
            logger.error("request %r failed", msg_id, exc_info=exc)
        self._send_response(msg_id, error=error_object(exc))

    # ---- outgoing -----------------------------------------------------------------------

    def send_error(self, msg_id: MsgId | None, error: AcpError) -> None:
        """Answer ``msg_id`` (``None`` when it could not be read) with ``error``."""
        self.write_message({"jsonrpc": JSONRPC, "id": msg_id, "error": error.to_json()})

    def _send_response(self, msg_id: MsgId, result: Any = None, error: Any = None) -> None:
        if error is not None:
            if not isinstance(error, dict):  # pygls's own ResponseError (method not found)
                error = error_object(JsonRpcException(error.message, error.code, error.data))
            message: dict[str, Any] = {"jsonrpc": JSONRPC, "id": msg_id, "error": error}
        else:
            message = {"jsonrpc": JSONRPC, "id": msg_id, "result": result}
        try:
            line = encode_message(message)
        except (ValueError, TypeError, RecursionError) as exc:
            logger.error("the answer to request %r cannot be encoded: %s", msg_id, exc)
            line = encode_message(
                {
                    "jsonrpc": JSONRPC,
                    "id": msg_id,
                    "error": {
                        "code": INTERNAL_ERROR,
                        "message": f"Internal error: the result cannot be encoded: {_short(exc)}",
                    },
                }
            )
        self.write_line(line)

    def notify(self, method: str, params: Any | None = None) -> None:
        """Send a notification; ``params`` is a wire dict (or ``None``)."""
        message: dict[str, Any] = {"jsonrpc": JSONRPC, "method": method}
        if params is not None:
            message["params"] = params
        self.write_message(message)

    def _send_data(self, data: Any) -> None:
        # Only pygls's ``send_request`` still comes this way, with its request envelope.
        if not isinstance(data, JsonRPCRequestMessage):
            raise TypeError(f"cannot send {type(data).__name__} on the wire")
        message = {"jsonrpc": JSONRPC, "id": data.id, "method": data.method}
        if data.params is not None:
            message["params"] = data.params
        self.write_message(message)

    def write_message(self, message: dict[str, Any]) -> None:
        """Encode and write one message (raises if it cannot be encoded)."""
        self.write_line(encode_message(message))

    def write_line(self, line: bytes) -> None:
        """Write one encoded message; from another thread it is handed to the loop."""
        wire = self.wire
        if wire is None:
            logger.error("no wire to write to; dropped a message")
            return
        if threading.get_ident() != self._loop_thread and self._loop is not None:
            self._loop.call_soon_threadsafe(wire.write, line)
            return
        wire.write(line)

    def attach(self, wire: WireWriter) -> None:
        """Write to ``wire`` from now on; the calling thread is the loop thread."""
        self.wire = wire
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()

    # ---- agent → client requests ----------------------------------------------------------

    def next_request_id(self) -> str:
        """A fresh id for an agent→client request.

        pygls keeps the futures of both directions in one table, keyed by id; a random id
        cannot collide with the client's own (counters, as SDKs use, would).
        """
        return uuid.uuid4().hex

    def handler_tasks(self) -> list[asyncio.Future[Any]]:
        """The tasks of client requests being handled now."""
        futures: list[object] = list(self._request_futures.values())
        return [f for f in futures if isinstance(f, asyncio.Future)]

    def cancel_all_requests(self) -> None:
        """Cancel every request in flight, both directions (at shutdown)."""
        for msg_id, future in list(self._request_futures.items()):
            if not future.done():
                logger.debug("cancelling request %r", msg_id)
                future.cancel()

    def abandon_request(self, msg_id: MsgId) -> None:
        """Stop waiting for the answer to ``msg_id`` and tell the client to cancel it."""
        future = self._request_futures.pop(msg_id, None)
        self._result_types.pop(msg_id, None)
        if future is None:
            return
        future.cancel()
        self.notify(CANCEL_REQUEST, {"requestId": msg_id})


def _short(exc: BaseException, limit: int = 200) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "…"


__all__ = ["AcpJsonRpcProtocol", "encode_message", "error_object"]
