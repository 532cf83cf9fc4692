"""Each attempt of a model request: the deadline for its answer to begin, and its retries told.

An attempt whose answer has not begun within the first-byte timeout fails as a read timeout
(the ``openai`` client retries it). The one module that names ``openai``'s HTTP library.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

import httpx2
import openai

from acp_sidecar.text import shorten

logger = logging.getLogger(__name__)

REASON_CHARS: Final = 120
"""How much of a status line's reason, or of a connection error, a retry notice quotes."""
RETRY_COUNT_HEADER: Final = "x-stainless-retry-count"
"""The header the ``openai`` client numbers each attempt of a request with (0: the first)."""

OnRetry = Callable[[int, str], None]
"""Hears ``(n, what)``: the client makes its ``n``-th retry, after an attempt that ``what``
says happened to ("answered HTTP 503 Service Unavailable")."""


class FirstByteTimeout(httpx2.ReadTimeout):
    """An attempt's answer did not begin within the first-byte timeout."""

    def __init__(self, seconds: float, request: httpx2.Request) -> None:
        super().__init__(f"no answer began within {seconds:g} seconds", request=request)
        self.seconds = seconds


class _Attempts:
    """The attempts of one streamed request: what the last one ran into."""

    def __init__(self, on_retry: OnRetry | None) -> None:
        self.on_retry = on_retry
        self.last = "failed"

    def starting(self, request: httpx2.Request) -> None:
        try:
            attempt = int(request.headers.get(RETRY_COUNT_HEADER, "0"))
        except ValueError:
            return
        if self.on_retry is None or attempt < 1:
            return
        try:
            self.on_retry(attempt, self.last)
        except Exception:
            logger.exception("reporting a retried model request failed")


_attempts: ContextVar[_Attempts | None] = ContextVar("model_request_attempts", default=None)


@contextmanager
def observed(on_retry: OnRetry | None) -> Iterator[None]:
    """Requests made inside (in this task) report their retries to ``on_retry``."""
    token = _attempts.set(_Attempts(on_retry))
    try:
        yield
    finally:
        _attempts.reset(token)


def what_happened(error: BaseException) -> str:
    """What a failed attempt ran into, as the rest of "the model endpoint …" says it."""
    if isinstance(error, FirstByteTimeout):
        return f"did not start answering within {error.seconds:g} seconds"
    if isinstance(error, httpx2.ConnectTimeout):
        return "could not be connected to in time"
    if isinstance(error, httpx2.TimeoutException):
        return "did not answer in time"
    reason = shorten(str(error), REASON_CHARS) or type(error).__name__
    return f"could not be reached ({reason})"


class AttemptClient(openai.DefaultAsyncHttpxClient):
    """The ``openai`` client's HTTP client, with the first-byte deadline on each streamed
    attempt (see the module invariants)."""

    def __init__(
        self, *, first_byte_timeout: float, auth: tuple[str, str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(auth=auth, **kwargs)
        self.first_byte_timeout = first_byte_timeout

    async def send(
        self, request: httpx2.Request, *, stream: bool = False, **kwargs: Any
    ) -> httpx2.Response:
        attempts = _attempts.get()
        if attempts is not None:
            attempts.starting(request)
        if not stream:  # a listing is bounded as a whole by its caller
            return await super().send(request, stream=stream, **kwargs)
        deadline = asyncio.timeout(self.first_byte_timeout)
        try:
            async with deadline:
                response = await super().send(request, stream=True, **kwargs)
        except TimeoutError:
            if not deadline.expired():
                raise
            error = FirstByteTimeout(self.first_byte_timeout, request)
            if attempts is not None:
                attempts.last = what_happened(error)
            raise error from None
        except httpx2.RequestError as error:
            if attempts is not None:
                attempts.last = what_happened(error)
            raise
        if attempts is not None and response.status_code >= 400:
            phrase = shorten(response.reason_phrase, REASON_CHARS)
            reason = f" {phrase}" if phrase else ""
            attempts.last = f"answered HTTP {response.status_code}{reason}"
        return response
