"""ACP's JSON-RPC over NDJSON, on pygls's ``JsonRPCProtocol`` machinery.

pygls keeps what it is good at: the handler table (``fm``), running the client's requests as
tasks, and ``$/cancel_request`` bookkeeping for them (``_request_futures``). This subclass
replaces what is LSP-specific: Content-Length framing becomes one JSON object per line,
incoming messages are checked against JSON-RPC 2.0 before dispatch, and outgoing messages are
encoded compactly, once, without per-message logging.

Invariants:
- Every line that is not empty gets exactly one outcome: dispatched, dropped with a log line
  (a notification the agent does not take, anything with an ``id`` and no ``method`` that
  is not a well-formed answer to one of our requests), or answered with
  ``-32700`` (not JSON, not UTF-8, ``NaN``/``Infinity``, an integer of more than
  :data:`MAX_INT_DIGITS` digits) or ``-32600`` (not a JSON-RPC message, an ``id`` that is not
  a string, a 64-bit integer or null, a line over the limit) with the request's id when it
  could be read, else ``id: null``. A message with an ``id`` and no ``method`` is never
  answered, however malformed: its id may be one of the client's own requests in flight,
  which must get one response only. No exception escapes to the line reader.
- Log lines caused by the client's input are bounded: ids and method names are cut short
  (:func:`shown_id`, :func:`shown_method`) and each kind of warning is rate-limited
  (:mod:`acp_sidecar.server.throttle`).
- Every request gets exactly one response; a handler that raises answers ``-32603`` and a
  request cancelled by ``$/cancel_request`` answers ``-32800``. A notification is never
  answered, and only the methods ACP defines as notifications (:data:`CLIENT_NOTIFICATIONS`)
  are acted on: a request method sent without an ``id`` is logged and not run. A
  notification method sent with an ``id`` (``session/cancel``) is acted on, then answered
  ``-32600`` saying it is a notification.
- Agent→client requests live in their own table (:attr:`AcpJsonRpcProtocol.outgoing`), apart
  from the client's requests: a response is matched against it alone, so neither a stray
  response nor a client request reusing one of our ids can reach another request's future.
  An answer that carries both ``result`` and ``error``, neither, or a malformed ``error``
  fails the waiting request at once (:class:`MalformedAnswerError`); a member that is
  ``null`` beside the other (``"error": null`` beside a result, ``"result": null`` beside an
  error object) counts as absent.
- Input is paced by output (:meth:`AcpJsonRpcProtocol.pace_input`): while the client is
  behind on our output, an answer to one of our requests and a ``session/cancel`` or
  ``$/cancel_request`` notification are acted on at once (a turn may be waiting for the
  answer; the client may be finishing that write before it reads on); every other line is
  held, in order, as bytes, and handled once the client catches up (a cancel is also held,
  to act again after the lines before it). Past :data:`HELD_INPUT_LIMIT` held, input is
  paused until the held lines are handled. End of input waits for them too.
- An encoded message is valid UTF-8 and contains no raw newline. An error's message is cut
  to :data:`MAX_ERROR_MESSAGE` characters and its ``data`` dropped past
  :data:`MAX_ERROR_DATA` bytes (errors echo what the client sent); a response over
  :data:`MAX_RESPONSE_BYTES` is answered ``-32603`` instead.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import json
import logging
import math
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException
from pygls.protocol.json_rpc import JsonRPCProtocol, MsgId

from acp_sidecar.protocol.errors import (
    INTERNAL_ERROR,
    AcpError,
)
from acp_sidecar.protocol.methods import CANCEL_REQUEST, CLIENT_NOTIFICATIONS, SESSION_CANCEL
from acp_sidecar.server.throttle import Throttle
from acp_sidecar.text import shorten

if TYPE_CHECKING:
    from acp_sidecar.server.framing import WireWriter

logger = logging.getLogger(__name__)

JSONRPC = "2.0"

MAX_INT_DIGITS = 4300
"""The longest integer read from the wire, in characters (Python's own conversion limit);
a longer one is a parse error rather than an error text about interpreter settings."""
MAX_ERROR_MESSAGE = 1000
"""The most characters of an error message sent (messages quote what the client sent)."""
MAX_ERROR_DATA = 8 * 1024
"""The most bytes of an error's encoded ``data``; larger ``data`` is left out."""
MAX_RESPONSE_BYTES = 16 * 1024 * 1024
"""The largest response sent (16 MiB); a larger answer becomes ``-32603``."""
HELD_INPUT_LIMIT = 4 * 1024 * 1024
"""Bytes of input held back while the client is behind on our output (4 MiB) above which
input is no longer read."""
HELD_LINE_COST = 1024
"""What holding one line costs on top of its bytes (its place in the queue, and the error
a malformed line will be answered with)."""
URGENT_NOTIFICATIONS = frozenset({SESSION_CANCEL, CANCEL_REQUEST})
"""Notifications acted on at once even while the client is behind on our output."""
INT64 = range(-(2**63), 2**63)
"""What an integer request id may be (the schema's ``RequestId`` is ``int64``)."""

# Messages are trees built by ``to_wire`` and the handlers: no cycles to look for (a cycle
# would still fail, with RecursionError, which callers catch like ValueError).
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
)
_ASCII_ENCODER = json.JSONEncoder(
    ensure_ascii=True, separators=(",", ":"), allow_nan=False, check_circular=False
)


class _NotJson(ValueError):
    """A number JSON does not have (``NaN``, ``Infinity``, an overflowing float) or one too
    long to read; ``str()`` is the parse error shown to the client."""


def _parse_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not a JSON value")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJson(f"the number {shorten(text, 40)} is out of range")
    return value


def _parse_int(text: str) -> int:
    too_long = _NotJson(
        f"an integer of {len(text)} characters is longer than the {MAX_INT_DIGITS} read"
    )
    if len(text) > MAX_INT_DIGITS:
        raise too_long
    try:
        return int(text)
    except ValueError:  # a lower limit set for this interpreter (PYTHONINTMAXSTRDIGITS)
        raise too_long from None


def decode_line(line: bytes | bytearray) -> Any:
    """The JSON value of one line; strict JSON (no ``NaN``/``Infinity``, bounded integers).

    Raises ``UnicodeDecodeError``, ``ValueError`` (``json.JSONDecodeError``, :class:`_NotJson`)
    or ``RecursionError``.
    """
    return json.loads(
        line.decode("utf-8"),
        parse_constant=_parse_constant,
        parse_float=_parse_float,
        parse_int=_parse_int,
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


def bounded_error(error: dict[str, Any]) -> dict[str, Any]:
    """``error`` with its message cut to :data:`MAX_ERROR_MESSAGE` characters and its
    ``data`` left out when it encodes to more than :data:`MAX_ERROR_DATA` bytes (or not at
    all)."""
    message = error.get("message")
    bounded = dict(error)
    if isinstance(message, str) and len(message) > MAX_ERROR_MESSAGE:
        bounded["message"] = shorten(message, MAX_ERROR_MESSAGE)
    if "data" in bounded:
        try:
            size = len(_ASCII_ENCODER.encode(bounded["data"]))
        except (ValueError, TypeError, RecursionError):
            size = MAX_ERROR_DATA + 1
        if size > MAX_ERROR_DATA:
            del bounded["data"]
    return bounded


def is_request_id(value: object) -> bool:
    """Whether ``value`` can be a JSON-RPC request id: a string, a 64-bit integer or null."""
    return (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool) and value in INT64)
    )


def shown_id(msg_id: object) -> str:
    """A request id as a log line shows it (ids can be long)."""
    return shorten(repr(msg_id), 80)


def shown_method(method: str) -> str:
    """A method name the client sent, as a log line shows it (it can be megabytes long)."""
    return shorten(repr(method), 80)


_THROTTLE = Throttle()


def throttled(level: int, kind: str, message: str, *args: object) -> None:
    """Log a line the client's input causes, at most at :mod:`~acp_sidecar.server.throttle`'s
    rate for its ``kind``."""
    _THROTTLE.log(logger, level, kind, message, *args)


class MalformedAnswerError(Exception):
    """The client answered one of our requests with something that is not a response (both
    ``result`` and ``error``, neither, or an ``error`` that is not an error object)."""


class AcpJsonRpcProtocol(JsonRPCProtocol):
    """pygls's JSON-RPC protocol speaking NDJSON with ACP's error rules."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.wire: WireWriter | None = None
        self.outgoing: dict[MsgId, tuple[str, Future[Any]]] = {}
        """Agent→client requests waiting for an answer: id → (method, future)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = threading.get_ident()
        self._backed_up = False
        self._held: collections.deque[bytes | bytearray | None] = collections.deque()
        """Lines held back while the client is behind on our output (``None``: an
        oversized line, skipped, whose error answer is still owed)."""
        self._held_bytes = 0
        self._input_paused = False
        self._pause_input: Callable[[], None] = _nothing
        self._resume_input: Callable[[], None] = _nothing
        self._drain_scheduled = False
        self._oversized_limit = 0
        self._after_held: Callable[[], None] | None = None

    # ---- pacing input by output -------------------------------------------------------

    def pace_input(self, pause: Callable[[], None], resume: Callable[[], None]) -> None:
        """How to stop and restart reading input once :data:`HELD_INPUT_LIMIT` is held."""
        self._pause_input = pause
        self._resume_input = resume

    def output_backed_up(self) -> None:
        """The client is behind on our output: hold what would answer it, read on."""
        self._backed_up = True

    def output_caught_up(self) -> None:
        """The client caught up: handle what was held (soon, not inside the writer)."""
        self._backed_up = False
        if self._held and not self._drain_scheduled and self._loop is not None:
            self._drain_scheduled = True
            self._loop.call_soon(self._drain_held)

    def after_held_input(self, then: Callable[[], None]) -> None:
        """Call ``then`` once every held line is handled (now, when none is): the end of
        input must not drop requests read before it."""
        if self._held:
            self._after_held = then
        else:
            then()

    @property
    def held_input_bytes(self) -> int:
        """What the held lines cost now (see :data:`HELD_LINE_COST`)."""
        return self._held_bytes

    def _drain_held(self) -> None:
        self._drain_scheduled = False
        while self._held and not self._backed_up:
            line = self._held.popleft()
            self._held_bytes -= HELD_LINE_COST + (0 if line is None else len(line))
            if line is None:
                self._refuse_oversized()
            else:
                self._receive_line_now(line)
        if self._held:
            return
        if self._input_paused:
            self._input_paused = False
            self._resume_input()
        then, self._after_held = self._after_held, None
        if then is not None:
            then()

    def _hold(self, line: bytes | bytearray | None) -> None:
        self._held.append(line)
        self._held_bytes += HELD_LINE_COST + (0 if line is None else len(line))
        if self._held_bytes >= HELD_INPUT_LIMIT and not self._input_paused:
            logger.debug("the client is not reading; input paused")
            self._input_paused = True
            self._pause_input()

    def _holding(self) -> bool:
        # Once anything is held, later lines queue behind it: requests keep their order.
        return self._backed_up or bool(self._held)

    def _is_urgent(self, message: Any) -> bool:
        """An answer to one of our requests, or a cancel notification: a turn may be
        waiting for it, and acting on it writes nothing (or one cancelled answer)."""
        if not isinstance(message, dict):
            return False
        if "method" not in message:
            msg_id = message.get("id")
            return is_request_id(msg_id) and msg_id in self.outgoing
        method = message["method"]
        return "id" not in message and isinstance(method, str) and method in URGENT_NOTIFICATIONS

    # ---- incoming ---------------------------------------------------------------------

    def receive_line(self, line: bytes | bytearray) -> None:
        """Handle one NDJSON line (without its newline); never raises.

        While the client is behind on our output, only an answer to one of our requests and
        a cancel notification are handled at once; the rest is held, in order, until it
        catches up, and input stops being read once :data:`HELD_INPUT_LIMIT` is held.
        """
        if not line or line.isspace():
            return
        if self._holding():
            try:
                message = decode_line(line)
            except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
                message = None
            if not self._is_urgent(message):
                self._hold(bytes(line))
                return
            if "method" in message and self._held:
                # A cancel acts now, and again after the held lines before it: a prompt it
                # was sent to stop may be among them (cancelling twice changes nothing).
                self._hold(bytes(line))
            self._receive_decoded(message)
            return
        self._receive_line_now(line)

    def _receive_decoded(self, message: Any) -> None:
        try:
            self.receive_message(message)
        except Exception:
            logger.exception("handling a message failed")

    def _receive_line_now(self, line: bytes | bytearray) -> None:
        try:
            message = decode_line(line)
        except UnicodeDecodeError:
            self.send_error(None, AcpError.parse_error("Parse error: the line is not UTF-8"))
            return
        except (ValueError, RecursionError) as exc:
            self.send_error(None, AcpError.parse_error(f"Parse error: {_short(exc)}"))
            return
        try:
            self.receive_message(message)
        except Exception:
            # A bug must cost one message, not the reader: the next line is read as usual.
            logger.exception("handling a message failed")

    def receive_oversized_line(self, limit: int) -> None:
        """A line longer than the reader's limit was skipped unread."""
        self._oversized_limit = limit
        if self._holding():
            self._hold(None)
            return
        self._refuse_oversized()

    def _refuse_oversized(self) -> None:
        limit = self._oversized_limit
        throttled(
            logging.WARNING, "an oversized line", "refused a line longer than %d bytes", limit
        )
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
        valid_id = has_id and is_request_id(msg_id)
        reply_id = msg_id if valid_id else None
        if valid_id and "method" not in message and msg_id in self.outgoing:
            self._receive_answer(msg_id, message)
            return
        if message.get("jsonrpc") != JSONRPC and "method" in message:
            self._invalid(reply_id, '"jsonrpc" must be "2.0"')
            return
        if has_id and not valid_id and "method" in message:
            self._invalid(None, '"id" must be a string, a 64-bit integer or null')
            return
        if "method" in message:
            method = message["method"]
            params = message.get("params")
            if not isinstance(method, str):
                self._invalid(reply_id, '"method" must be a string')
            elif params is not None and not isinstance(params, (dict, list)):
                self._invalid(reply_id, '"params" must be an object')
            elif not has_id:
                self._receive_notification(method, params)
            elif method in CLIENT_NOTIFICATIONS:
                # Acted on all the same (session/cancel is the user's stop button), but a
                # notification has no answer to give: say what was wrong.
                self._receive_notification(method, params)
                self._invalid(msg_id, f"{method} is a notification; send it without an id")
            else:
                contextvars.copy_context().run(self._handle_request, msg_id, method, params)
            return
        if has_id:
            # Shaped like a response: answering it would hand the client a second response
            # to its own request of that id (the first one settles an SDK client's call).
            throttled(
                logging.INFO,
                "a response nobody waits for",
                "dropped a response to %s: no request of ours is waiting",
                shown_id(msg_id),
            )
            return
        self._invalid(None, "neither a request, a notification nor a response")

    def _invalid(self, reply_id: MsgId | None, reason: str) -> None:
        self.send_error(reply_id, AcpError.invalid_request(f"Invalid request: {reason}"))

    def _receive_notification(self, method: str, params: Any) -> None:
        if method == CANCEL_REQUEST:
            request_id: Any = params.get("requestId") if isinstance(params, dict) else None
            if isinstance(params, dict) and "requestId" in params and is_request_id(request_id):
                self._handle_cancel_notification(request_id)
            else:
                throttled(
                    logging.WARNING,
                    "a cancel without a requestId",
                    "ignored %s without a valid requestId",
                    CANCEL_REQUEST,
                )
            return
        if method not in CLIENT_NOTIFICATIONS:
            # JSON-RPC: no id, no answer. A request method is not run without one (it would
            # act with nobody told the outcome).
            throttled(
                logging.WARNING,
                "a notification of a request method",
                "ignored a notification of %s: not a notification method",
                shown_method(method),
            )
            return
        contextvars.copy_context().run(self._handle_notification, method, params)

    def _receive_answer(self, msg_id: MsgId, message: dict[str, Any]) -> None:
        """The client's answer to our request ``msg_id``: resolve, fail or reject it."""
        method, future = self.outgoing.pop(msg_id)
        if future.done():  # abandoned meanwhile
            return
        error = message.get("error")
        # Some JSON-RPC libraries always send both members, the unused one null: a null
        # error beside a result, or a null result beside a proper error, counts as absent.
        has_error = error is not None
        if message.get("jsonrpc") != JSONRPC:
            reason = '"jsonrpc" is not "2.0"'
        elif "result" in message and has_error and message["result"] is not None:
            reason = "it carries both a result and an error"
        elif "result" in message and not has_error:
            future.set_result(message["result"])
            return
        elif "error" not in message:
            reason = "it carries neither a result nor an error"
        elif (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and isinstance(error.get("message"), str)
        ):
            future.set_exception(
                JsonRpcException(error["message"], error["code"], error.get("data"))
            )
            return
        else:
            reason = "its error is not an object with an integer code and a string message"
        throttled(
            logging.WARNING,
            "a malformed answer",
            "the client's answer to %s %s is malformed: %s",
            method,
            shown_id(msg_id),
            reason,
        )
        future.set_exception(MalformedAnswerError(reason))

    # ---- handler outcomes ---------------------------------------------------------------

    def _send_handler_result(self, future: Future[Any], *, msg_id: MsgId) -> None:
        self._request_futures.pop(msg_id, None)
        if future.cancelled():
            self.send_error(
                msg_id, AcpError.request_cancelled(f"Request {shown_id(msg_id)} was cancelled")
            )
            return
        exc = future.exception()
        if exc is None:
            self._send_response(msg_id, result=future.result())
            return
        if not isinstance(exc, (AcpError, JsonRpcException)):
            logger.error("request %s failed", shown_id(msg_id), exc_info=exc)
        self._send_response(msg_id, error=error_object(exc))

    # ---- outgoing -----------------------------------------------------------------------

    def send_error(self, msg_id: MsgId | None, error: AcpError) -> None:
        """Answer ``msg_id`` (``None`` when it could not be read) with ``error``."""
        self._send_response(msg_id, error=error.to_json())

    def _send_response(self, msg_id: MsgId | None, result: Any = None, error: Any = None) -> None:
        if error is not None:
            if not isinstance(error, dict):  # pygls's own ResponseError (method not found)
                error = error_object(JsonRpcException(error.message, error.code, error.data))
            message: dict[str, Any] = {
                "jsonrpc": JSONRPC,
                "id": msg_id,
                "error": bounded_error(error),
            }
        else:
            message = {"jsonrpc": JSONRPC, "id": msg_id, "result": result}
        try:
            line = encode_message(message)
        except (ValueError, TypeError, RecursionError) as exc:
            logger.error("the answer to request %s cannot be encoded: %s", shown_id(msg_id), exc)
            line = self._internal_error_line(
                msg_id, f"Internal error: the result cannot be encoded: {_short(exc)}"
            )
        if len(line) > MAX_RESPONSE_BYTES:
            logger.error(
                "the answer to request %s is %d bytes; refused", shown_id(msg_id), len(line)
            )
            line = self._internal_error_line(
                msg_id,
                f"Internal error: the answer is {len(line)} bytes, over the limit of "
                f"{MAX_RESPONSE_BYTES} bytes for one message",
            )
        self.write_line(line)

    def _internal_error_line(self, msg_id: MsgId | None, text: str) -> bytes:
        error = {"code": INTERNAL_ERROR, "message": text}
        return encode_message({"jsonrpc": JSONRPC, "id": msg_id, "error": error})

    def notify(self, method: str, params: Any | None = None) -> None:
        """Send a notification; ``params`` is a wire dict (or ``None``)."""
        message: dict[str, Any] = {"jsonrpc": JSONRPC, "method": method}
        if params is not None:
            message["params"] = params
        self.write_message(message)

    def send_request(
        self,
        method: str,
        params: Any | None = None,
        callback: Callable[[Any], None] | None = None,
        msg_id: MsgId | None = None,
    ) -> Future[Any]:
        """Send an agent→client request; the future resolves with the client's ``result``,
        or fails with :class:`JsonRpcException` (its error) or :class:`MalformedAnswerError`.
        """
        if callback is not None:
            raise TypeError("await the returned future instead of passing a callback")
        if msg_id is None:
            msg_id = self.next_request_id()
        message: dict[str, Any] = {"jsonrpc": JSONRPC, "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        future: Future[Any] = Future()
        self.outgoing[msg_id] = (method, future)
        try:
            self.write_message(message)
        except BaseException:
            del self.outgoing[msg_id]
            raise
        return future

    def _send_data(self, data: Any) -> None:
        # Everything is sent by the methods above; pygls's own paths must not write.
        raise TypeError(f"cannot send {type(data).__name__} on the wire")

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
        """A fresh id for an agent→client request (random: easy to tell from the client's
        own ids in a log, though the two never share a table)."""
        return uuid.uuid4().hex

    def handler_tasks(self) -> list[asyncio.Future[Any]]:
        """The tasks of client requests being handled now."""
        futures: list[object] = list(self._request_futures.values())
        return [f for f in futures if isinstance(f, asyncio.Future)]

    def cancel_all_requests(self) -> None:
        """Cancel every request in flight, both directions (at shutdown)."""
        for msg_id, future in list(self._request_futures.items()):
            if not future.done():
                logger.debug("cancelling request %s", shown_id(msg_id))
                future.cancel()
        for _method, answer in self.outgoing.values():
            answer.cancel()
        self.outgoing.clear()

    def abandon_request(self, msg_id: MsgId) -> None:
        """Stop waiting for the answer to ``msg_id`` and tell the client to cancel it."""
        entry = self.outgoing.pop(msg_id, None)
        if entry is None:
            return
        entry[1].cancel()
        self.notify(CANCEL_REQUEST, {"requestId": msg_id})


def _nothing() -> None:
    pass


def _short(exc: BaseException, limit: int = 200) -> str:
    text = str(exc)
    return text if len(text) <= limit else text[:limit] + "…"


__all__ = [
    "AcpJsonRpcProtocol",
    "MalformedAnswerError",
    "decode_line",
    "encode_message",
    "error_object",
    "is_request_id",
]
