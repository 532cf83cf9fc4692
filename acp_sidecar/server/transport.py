"""ACP's JSON-RPC over NDJSON, on pygls's ``JsonRPCProtocol`` machinery.

pygls keeps what it is good at: the handler table (``fm``), running the client's requests as
tasks, and ``$/cancel_request`` bookkeeping for them (``_request_futures``). This subclass
replaces what is LSP-specific: Content-Length framing becomes one JSON object per line,
incoming messages are checked against JSON-RPC 2.0 before dispatch, and outgoing messages are
encoded compactly, once, without per-message logging. A request's task answers it from its
own last step (:meth:`AcpJsonRpcProtocol._answer`), not from a done callback a trip round the
event loop later; the done callback answers only what that step could not: a request
cancelled (before its handler started, too).

Invariants:
- Every line that is not empty gets exactly one outcome: dispatched, dropped with a log line
  (a notification the agent does not take, anything with an ``id`` and no ``method`` that
  is not a well-formed answer to one of our requests), or answered with
  ``-32700`` (what :func:`~acp_sidecar.server.messages.decode_line` refuses) or ``-32600``
  (not a JSON-RPC message, an ``id`` that is not a string, a 64-bit integer or null, a line
  over the limit) with the request's id when it could be read, else ``id: null``. A message
  with an ``id`` and no ``method`` is never answered, however malformed: its id may be one
  of the client's own requests in flight, which must get one response only. No exception
  escapes to the line reader. Log lines it causes are bounded (:mod:`.messages`).
- Every request gets exactly one response; a handler that raises answers ``-32603`` and a
  request cancelled by ``$/cancel_request`` answers ``-32800`` (its task is cancelled once,
  however many cancels name it, and stays among the requests in flight until it ends),
  unless its handler answers the cancellation itself (:func:`cancelled_by_client` tells it
  the client asked: ``session/prompt`` answers ``cancelled``). A
  notification is never answered, and only the methods ACP defines as notifications
  (:data:`CLIENT_NOTIFICATIONS`) are acted on: a request method sent without an ``id`` is
  logged and not run, one with ``id: null`` is answered ``-32600`` unrun (:data:`NULL_ID`). A
  notification method sent with an ``id`` (``session/cancel``) is acted on, then answered
  ``-32600`` saying it is a notification.
- Agent→client requests live in their own table (:attr:`AcpJsonRpcProtocol.outgoing`), apart
  from the client's requests: a response is matched against it alone, so neither a stray
  response nor a client request reusing one of our ids can reach another request's future.
  An answer that carries both ``result`` and ``error``, neither, or a malformed ``error``
  fails the waiting request at once (:class:`MalformedAnswerError`); a member that is
  ``null`` beside the other (``"error": null`` beside a result, ``"result": null`` beside an
  error object) counts as absent.
- Input is paced by output (:attr:`AcpJsonRpcProtocol.held`, :mod:`.pacing`): while the
  client is behind on our output, an answer to one of our requests and a ``session/cancel``
  or ``$/cancel_request`` notification are acted on at once (a turn may be waiting for the
  answer; the client may be finishing that write before it reads on); every other line is
  held (a cancel is also held, to act again after the lines before it).
- Messages are encoded by :func:`~acp_sidecar.server.messages.encode_message`, errors
  bounded by :func:`~acp_sidecar.server.messages.bounded_error`; a response over
  :data:`MAX_RESPONSE_BYTES` is answered ``-32603`` instead.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, cast

from pygls.exceptions import JsonRpcException
from pygls.protocol.json_rpc import JsonRPCProtocol, MsgId

from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.protocol.methods import CANCEL_REQUEST, CLIENT_NOTIFICATIONS, SESSION_CANCEL
from acp_sidecar.server.messages import (
    JSONRPC,
    NULL_ID,
    MalformedAnswerError,
    decode_line,
    encode_message,
    error_object,
    is_request_id,
    response_line,
    short_error,
    shown_id,
    shown_method,
    throttled,
)
from acp_sidecar.server.outgoing import OutgoingRequests
from acp_sidecar.server.pacing import HeldInput

if TYPE_CHECKING:
    from acp_sidecar.server.framing import WireWriter

logger = logging.getLogger(__name__)

URGENT_NOTIFICATIONS = frozenset({SESSION_CANCEL, CANCEL_REQUEST})
"""Notifications acted on at once even while the client is behind on our output."""


def cancelled_by_client(exc: asyncio.CancelledError) -> bool:
    """Whether a request's task was cancelled by the client's ``$/cancel_request`` alone (not
    also by shutdown, nor by anything else): then its handler may answer it itself."""
    task = asyncio.current_task()
    return exc.args[:1] == (CANCEL_REQUEST,) and task is not None and task.cancelling() == 1


class AcpJsonRpcProtocol(JsonRPCProtocol):
    """pygls's JSON-RPC protocol speaking NDJSON with ACP's error rules."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.wire: WireWriter | None = None
        self.outgoing = OutgoingRequests()
        """Agent→client requests waiting for an answer."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = threading.get_ident()
        self._oversized_limit = 0
        self._notification_tasks: set[asyncio.Future[Any]] = set()
        """Coroutine notification handlers running now (held so they are not collected)."""
        self.held = HeldInput(self._receive_line_now, self._refuse_oversized)
        """The lines held while the client is behind on our output: the wire's writer
        reports its backlog to it, and it pauses and resumes the wire's reader."""

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
        catches up (:attr:`held`).
        """
        if not line or line.isspace():
            return
        if self.held.holding:
            try:
                message = decode_line(line)
            except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
                message = None
            if not self._is_urgent(message):
                self.held.hold(bytes(line))
                return
            if "method" in message and self.held.has_held:
                # A cancel acts now, and again after the held lines before it: a prompt it
                # was sent to stop may be among them (cancelling twice changes nothing).
                self.held.hold(bytes(line))
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
            self.send_error(None, AcpError.parse_error(f"Parse error: {short_error(exc)}"))
            return
        try:
            self.receive_message(message)
        except Exception:
            # A bug must cost one message, not the reader: the next line is read as usual.
            logger.exception("handling a message failed")

    def receive_oversized_line(self, limit: int) -> None:
        """A line longer than the reader's limit was skipped unread."""
        self._oversized_limit = limit
        if self.held.holding:
            self.held.hold(None)
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
            self.outgoing.settle(msg_id, message)
            return
        if message.get("jsonrpc") != JSONRPC and "method" in message:
            self._invalid(reply_id, '"jsonrpc" must be "2.0"')
            return
        if has_id and not valid_id and "method" in message:
            self._invalid(None, '"id" must be a string or a 64-bit integer')
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
            elif msg_id is None:  # allowed but discouraged: refused, not run (see NULL_ID)
                self._invalid(None, NULL_ID)
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

    # ---- handler outcomes ---------------------------------------------------------------

    def _execute_handler(
        self,
        msg_id: MsgId,
        handler: Any,
        callback: Callable[[Any], None],
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        """Run a request's coroutine handler as a task that answers it itself (see the
        module docstring), a notification's as a task that answers nothing; anything else
        pygls's way. pygls runs notifications through here too, under an id it makes up and
        with :meth:`_check_handler_result` as the callback: that is how they are told apart."""
        if not asyncio.iscoroutinefunction(handler):
            super()._execute_handler(msg_id, handler, callback, args, kwargs)
            return
        if callback == self._check_handler_result:
            notified = asyncio.ensure_future(handler(*(args or ()), **(kwargs or {})))
            self._notification_tasks.add(notified)
            notified.add_done_callback(self._notification_tasks.discard)
            notified.add_done_callback(callback)
            return
        task = asyncio.ensure_future(self._answer(msg_id, handler, args or (), kwargs or {}))
        self._request_futures[msg_id] = cast(Any, task)  # pygls's table holds asyncio tasks too
        task.add_done_callback(functools.partial(self._answer_unanswered, msg_id=msg_id))

    async def _answer(
        self, msg_id: MsgId, handler: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        """Await the handler, then answer from this same step: its result or its error. A
        cancellation goes on to the task (:meth:`_answer_unanswered` answers it)."""
        try:
            result = await handler(*args, **kwargs)
        except Exception as exc:
            self._send_failure(msg_id, exc)
            return
        self._send_response(msg_id, result=result)

    def _handle_cancel_notification(self, msg_id: MsgId) -> None:
        """Cancel the client's request ``msg_id`` if it is in flight, once. Unlike pygls, its
        task stays in the table until it ends (its done callback takes it out): shutdown waits
        for it to answer, and cancels it again if it is still winding down then."""
        future: object = self._request_futures.get(msg_id)
        if future is None:
            logger.debug("$/cancel_request for %s, which is not in flight", shown_id(msg_id))
        elif isinstance(future, asyncio.Task):
            if not future.cancelling():  # a held cancel is acted on a second time
                future.cancel(msg=CANCEL_REQUEST)  # told apart from shutdown's cancel
        elif isinstance(future, (asyncio.Future, Future)):
            future.cancel()

    def _answer_unanswered(self, future: asyncio.Future[None], *, msg_id: MsgId) -> None:
        """A request's task ended: :meth:`_answer` answered it unless it was cancelled (or
        ended with what is not an ``Exception``). The task stays among :meth:`handler_tasks`
        until now, as with pygls's own callback (a task that is done cannot be cancelled)."""
        if future.cancelled() or future.exception() is not None:
            self._send_handler_result(future, msg_id=msg_id)
        else:
            self._request_futures.pop(msg_id, None)

    def _send_handler_result(
        self, future: Future[Any] | asyncio.Future[Any], *, msg_id: MsgId
    ) -> None:
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
        self._send_failure(msg_id, exc)

    def _send_failure(self, msg_id: MsgId, exc: BaseException) -> None:
        if not isinstance(exc, (AcpError, JsonRpcException)):
            logger.error("request %s failed", shown_id(msg_id), exc_info=exc)
        self._send_response(msg_id, error=error_object(exc))

    # ---- outgoing -----------------------------------------------------------------------

    def send_error(self, msg_id: MsgId | None, error: AcpError) -> None:
        """Answer ``msg_id`` (``None`` when it could not be read) with ``error``."""
        self._send_response(msg_id, error=error.to_json())

    def _send_response(self, msg_id: MsgId | None, result: Any = None, error: Any = None) -> None:
        if error is not None and not isinstance(error, dict):
            # pygls's own ResponseError (method not found)
            error = error_object(JsonRpcException(error.message, error.code, error.data))
        self.write_answer(response_line(msg_id, result=result, error=error))

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
        future = self.outgoing.open(msg_id, method)
        try:
            self.write_message(message)
        except BaseException:
            self.outgoing.abandon(msg_id)
            raise
        return future

    def _send_data(self, data: Any) -> None:
        # Everything is sent by the methods above; pygls's own paths must not write.
        raise TypeError(f"cannot send {type(data).__name__} on the wire")

    def write_message(self, message: dict[str, Any]) -> None:
        """Encode and write one message (raises if it cannot be encoded)."""
        self.write_line(encode_message(message))

    def write_line(self, line: bytes) -> None:
        """Write one encoded message (it leaves at the end of the loop's turn, with the others
        written in it); from another thread it is handed to the loop."""
        self._write(line, now=False)

    def write_answer(self, line: bytes) -> None:
        """Write one encoded answer: it leaves at once (:meth:`WireWriter.write_now`), after
        what was written before it. Kept apart from :meth:`write_line`, which every streamed
        update goes through."""
        self._write(line, now=True)

    def _write(self, line: bytes, *, now: bool) -> None:
        wire = self.wire
        if wire is None:
            logger.error("no wire to write to; dropped a message")
            return
        write = wire.write_now if now else wire.write
        if threading.get_ident() != self._loop_thread and self._loop is not None:
            self._loop.call_soon_threadsafe(write, line)
            return
        write(line)

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
        self.outgoing.cancel_all()

    def abandon_request(self, msg_id: MsgId) -> None:
        """Stop waiting for the answer to ``msg_id`` and tell the client to cancel it."""
        if self.outgoing.abandon(msg_id):
            self.notify(CANCEL_REQUEST, {"requestId": msg_id})


__all__ = ["AcpJsonRpcProtocol", "MalformedAnswerError"]
