"""ACP's JSON-RPC over NDJSON, dispatching to pygls's handler table (:mod:`.pygls_adapter`).

Invariants:
- Every non-empty line gets one outcome: dispatched, dropped with a bounded log line, or
  ``-32700``/``-32600``; no exception escapes to the line reader. A message with an ``id`` and
  no ``method`` is never answered: its id may be one of our own requests in flight.
- Every request gets exactly one response, from its task's last step
  (:meth:`AcpJsonRpcProtocol._answer`): ``-32603`` when its handler raises, ``-32800`` once when
  cancelled. ``id: null`` is refused unrun.
- Agent→client requests have their own table (:attr:`AcpJsonRpcProtocol.outgoing`).
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
from typing import TYPE_CHECKING, Any

from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.protocol.methods import (
    CANCEL_REQUEST,
    CLIENT_NOTIFICATIONS,
    SESSION_CANCEL,
    SESSION_UPDATE,
)
from acp_sidecar.server.messages import (
    JSONRPC,
    NULL_ID,
    MalformedAnswerError,
    UpdateLines,
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
from acp_sidecar.server.pygls_adapter import (
    JsonRpcException,
    MsgId,
    PyglsProtocol,
    method_not_found,
)

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


class AcpJsonRpcProtocol(PyglsProtocol):
    """JSON-RPC over NDJSON with ACP's error rules, dispatching to pygls's handler table."""

    def __init__(self, server: Any, converter: Any) -> None:
        super().__init__(server, converter)
        self.wire: WireWriter | None = None
        self.outgoing = OutgoingRequests()
        """Agent→client requests waiting for an answer."""
        self._update_lines = UpdateLines()
        self._in_flight: dict[MsgId, asyncio.Task[None]] = {}
        """The client's requests whose handler runs now (they answer when they end)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = threading.get_ident()
        self._oversized_limit = 0
        self._notification_tasks: set[asyncio.Future[Any]] = set()
        """Coroutine notification handlers running now (held so they are not collected)."""
        self.held = HeldInput(self._receive_line_now, self._refuse_oversized)
        """The lines held while the client is behind on our output (:mod:`.pacing`)."""

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
        """Handle one NDJSON line (without its newline); never raises. While the client is
        behind on our output, only urgent lines are handled now, the rest held (:attr:`held`)."""
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
                contextvars.copy_context().run(self._run_request, msg_id, method, params)
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
                self._cancel_in_flight(request_id)
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
        contextvars.copy_context().run(self._run_notification, method, params)

    # ---- handler outcomes ---------------------------------------------------------------

    def _run_request(self, msg_id: MsgId, method: str, params: Any) -> None:
        """Run the handler of request ``msg_id``: a coroutine handler as a task that answers it
        itself (see the module docstring), a plain one at once."""
        handler = self.handler(method)
        if handler is None:
            error = method_not_found(method)
            self._respond(msg_id, error=error_object(error))
            self.report_request_error(error)
            return
        if not _is_coroutine_function(handler):
            try:
                result = handler(params)
            except Exception as exc:
                self._send_failure(msg_id, exc)
                return
            self._respond(msg_id, result=result)
            return
        task = asyncio.ensure_future(self._answer(msg_id, handler, params))
        self._in_flight[msg_id] = task
        task.add_done_callback(functools.partial(self._answer_unanswered, msg_id=msg_id))

    def _run_notification(self, method: str, params: Any) -> None:
        """Run a notification's handler (a coroutine one as a task held until it ends); what
        it raises is reported to the server, never answered."""
        handler = self.handler(method)
        if handler is None:
            logger.warning("ignored the notification %s: no handler", shown_method(method))
            return
        if _is_coroutine_function(handler):
            notified = asyncio.ensure_future(handler(params))
            self._notification_tasks.add(notified)
            notified.add_done_callback(self._notification_ended)
            return
        try:
            handler(params)
        except Exception as exc:
            self.report_notification_error(exc)

    def _notification_ended(self, task: asyncio.Future[Any]) -> None:
        self._notification_tasks.discard(task)
        exc = None if task.cancelled() else task.exception()
        if isinstance(exc, Exception):
            self.report_notification_error(exc)

    async def _answer(self, msg_id: MsgId, handler: Any, params: Any) -> None:
        """Await the handler, then answer from this same step: its result or its error. A
        cancellation goes on to the task (:meth:`_answer_unanswered` answers it)."""
        try:
            result = await handler(params)
        except Exception as exc:
            self._send_failure(msg_id, exc)
            return
        self._respond(msg_id, result=result)

    def _cancel_in_flight(self, msg_id: MsgId) -> None:
        """Cancel the client's request ``msg_id`` if it is in flight, once. Its task stays in
        the table until it ends (its done callback takes it out): shutdown waits for it to
        answer, and cancels it again if it is still winding down then."""
        task = self._in_flight.get(msg_id)
        if task is None:
            logger.debug("$/cancel_request for %s, which is not in flight", shown_id(msg_id))
        elif not task.cancelling():  # a held cancel is acted on a second time
            task.cancel(msg=CANCEL_REQUEST)  # told apart from shutdown's cancel

    def _answer_unanswered(self, task: asyncio.Future[None], *, msg_id: MsgId) -> None:
        """A request's task ended: :meth:`_answer` answered it unless it was cancelled (or
        ended with what is not an ``Exception``). The task stays among :meth:`handler_tasks`
        until now (a task that is done cannot be cancelled)."""
        if self._in_flight.get(msg_id) is task:
            del self._in_flight[msg_id]
        if task.cancelled():
            self.send_error(
                msg_id, AcpError.request_cancelled(f"Request {shown_id(msg_id)} was cancelled")
            )
            return
        exc = task.exception()
        if exc is not None:
            self._send_failure(msg_id, exc)

    def _send_failure(self, msg_id: MsgId, exc: BaseException) -> None:
        if not isinstance(exc, (AcpError, JsonRpcException)):
            logger.error("request %s failed", shown_id(msg_id), exc_info=exc)
        self._respond(msg_id, error=error_object(exc))

    # ---- outgoing -----------------------------------------------------------------------

    def send_error(self, msg_id: MsgId | None, error: AcpError) -> None:
        """Answer ``msg_id`` (``None`` when it could not be read) with ``error``."""
        self._respond(msg_id, error=error.to_json())

    def _respond(
        self, msg_id: MsgId | None, result: Any = None, error: dict[str, Any] | None = None
    ) -> None:
        self.write_answer(response_line(msg_id, result=result, error=error))

    def notify(self, method: str, params: Any | None = None) -> None:
        """Send a notification; ``params`` is a wire dict (or ``None``)."""
        if method == SESSION_UPDATE and type(params) is dict and len(params) == 2:
            session_id = params.get("sessionId")
            update = params.get("update")
            if type(session_id) is str and type(update) is dict:  # streamed: the hot path
                self.notify_update(session_id, update)
                return
        message: dict[str, Any] = {"jsonrpc": JSONRPC, "method": method}
        if params is not None:
            message["params"] = params
        self.write_message(message)

    def notify_update(self, session_id: str, update: dict[str, Any]) -> None:
        """Send the ``session/update`` of ``update`` (its wire dict) to ``session_id``."""
        line = self._update_lines.line(session_id, update)
        wire = self.wire
        if wire is not None and self._loop_thread == threading.get_ident():
            wire.write(line)
        else:
            self._write(line, now=False)

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

    def write_message(self, message: dict[str, Any]) -> None:
        """Encode and write one message (raises if it cannot be encoded)."""
        self.write_line(encode_message(message))

    def write_line(self, line: bytes) -> None:
        """Write one encoded message: it leaves at the end of the loop's turn (any thread)."""
        self._write(line, now=False)

    def write_answer(self, line: bytes) -> None:
        """Write one encoded answer: it leaves at once, after what was written before it."""
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
        return list(self._in_flight.values())

    def cancel_all_requests(self) -> None:
        """Cancel every request in flight, both directions (at shutdown)."""
        for msg_id, task in list(self._in_flight.items()):
            if not task.done():
                logger.debug("cancelling request %s", shown_id(msg_id))
                task.cancel()
        self.outgoing.cancel_all()

    def abandon_request(self, msg_id: MsgId) -> None:
        """Stop waiting for the answer to ``msg_id`` and tell the client to cancel it."""
        if self.outgoing.abandon(msg_id):
            self.notify(CANCEL_REQUEST, {"requestId": msg_id})


__all__ = ["AcpJsonRpcProtocol", "MalformedAnswerError"]


@functools.lru_cache(maxsize=128)
def _is_coroutine_function(handler: Callable[..., Any]) -> bool:
    """``asyncio.iscoroutinefunction``, asked once per handler rather than once per request
    (the handlers are the few registered; the bound keeps the cache small if they were not)."""
    return asyncio.iscoroutinefunction(handler)
