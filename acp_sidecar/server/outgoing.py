"""Agent→client requests waiting for the client's answer.

Invariants: a request is in the table from just before it is written until its answer
arrives, it is abandoned, or everything is cancelled at shutdown; its future is settled at
most once (an answer to an abandoned request is dropped). The table is the client's answers'
alone: the client's own requests never reach it, so neither a stray response nor a client
request reusing one of our ids can reach another request's future.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from typing import Any

from pygls.exceptions import JsonRpcException

from acp_sidecar.server.messages import MalformedAnswerError, read_answer, shown_id, throttled


class OutgoingRequests:
    """The agent's requests in flight: id → (method, future)."""

    def __init__(self) -> None:
        self._waiting: dict[object, tuple[str, Future[Any]]] = {}

    def __contains__(self, msg_id: object) -> bool:
        return msg_id in self._waiting

    def __len__(self) -> int:
        return len(self._waiting)

    def open(self, msg_id: object, method: str) -> Future[Any]:
        """Wait for the answer to ``msg_id`` (a ``method`` request about to be written)."""
        future: Future[Any] = Future()
        self._waiting[msg_id] = (method, future)
        return future

    def settle(self, msg_id: object, message: dict[str, Any]) -> None:
        """The client's answer to ``msg_id`` (in the table): resolve, fail or reject it."""
        method, future = self._waiting.pop(msg_id)
        if future.done():  # abandoned meanwhile
            return
        try:
            future.set_result(read_answer(message))
        except JsonRpcException as exc:
            future.set_exception(exc)
        except MalformedAnswerError as exc:
            throttled(
                logging.WARNING,
                "a malformed answer",
                "the client's answer to %s %s is malformed: %s",
                method,
                shown_id(msg_id),
                exc,
            )
            future.set_exception(exc)

    def abandon(self, msg_id: object) -> bool:
        """Stop waiting for ``msg_id`` (its future is cancelled); whether it was waiting."""
        entry = self._waiting.pop(msg_id, None)
        if entry is None:
            return False
        entry[1].cancel()
        return True

    def cancel_all(self) -> None:
        """Cancel every request still waiting (at shutdown)."""
        for _method, future in self._waiting.values():
            future.cancel()
        self._waiting.clear()


__all__ = ["OutgoingRequests"]
