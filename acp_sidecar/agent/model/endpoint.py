"""The one module that talks to ``openai``: the client, the streaming request, what a failure means.

Invariants:
- Imported only when a turn first runs or an endpoint is checked (``openai`` takes ~1 s).
- Retries are the ``openai`` client's own; a stream that broke after it began is not retried.
- No secret reaches the user or the log: every endpoint text goes through ``redacted``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Final, Literal, cast
from urllib.parse import urlsplit

import attrs
import openai
from openai.types.chat import ChatCompletionChunk

from acp_sidecar.agent.model.attempts import AttemptClient, FirstByteTimeout, OnRetry, observed
from acp_sidecar.agent.model.catalog import ListedModel, ListingUnavailable, listed_model
from acp_sidecar.agent.model.config import (
    BASE_URL_ENV,
    FIRST_BYTE_TIMEOUT_ENV,
    MAX_TOKENS_ENV,
    MODEL_ENV,
    ModelConfig,
)
from acp_sidecar.agent.model.shown import credentials, key_fix, redacted
from acp_sidecar.text import first_line as text_first_line

logger = logging.getLogger(__name__)

NO_KEY: Final = "no-key"
"""Sent as the bearer key when none is configured: local servers ignore it, and a server
that needs a key answers 401, which :func:`explain` turns into "set" the key's variable."""


OPENAI_HOSTS: Final = ("api.openai.com", ".openai.azure.com")
"""Hosts (or, with a leading dot, host suffixes) that take ``max_completion_tokens``."""


def token_limit_field(url: str) -> str:
    """The request field that caps a response's tokens at the endpoint ``url``."""
    host = (urlsplit(url).hostname or "").lower()
    if any(host == name or (name.startswith(".") and host.endswith(name)) for name in OPENAI_HOSTS):
        return "max_completion_tokens"
    return "max_tokens"


class EndpointConfigError(ValueError):
    """The configuration cannot name a usable endpoint (the message says why)."""


FailureKind = Literal[
    "config",
    "unreachable",
    "timeout",
    "key",
    "forbidden",
    "not found",
    "rate limited",
    "refused",
    "server",
    "other",
]
"""What a failed request ran into (:func:`failure_kind`): a base URL that is not http(s),
no connection, no answer in time, a refused key (401), a refused model (403), a 404, a 429,
another 4xx, a 5xx, anything else."""


class ListingFailed(RuntimeError):
    """``GET /models`` failed (not with a 404): the message is :func:`explain`'s sentence."""

    def __init__(self, message: str, kind: FailureKind) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        """What it ran into."""


class Endpoint:
    """An ``AsyncOpenAI`` client for one configuration."""

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self.client = openai.AsyncOpenAI(
            api_key=config.api_key or NO_KEY,
            base_url=config.shown_url,  # its credentials go as auth: the URL is logged
            timeout=openai.Timeout(
                config.request_timeout,
                connect=min(config.connect_timeout, config.first_byte_timeout),
            ),
            max_retries=config.max_retries,
            http_client=AttemptClient(
                first_byte_timeout=config.first_byte_timeout,
                auth=credentials(config.endpoint_url),
            ),
        )
        self.usage = True
        """Whether requests ask for usage (until the server refuses ``stream_options``)."""

    @asynccontextmanager
    async def stream(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]],
        *,
        model: str | None = None,
        reasoning_effort: str | None = None,
        on_retry: OnRetry | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> AsyncIterator[AsyncIterator[ChatCompletionChunk]]:
        """Open a streamed chat completion with ``model`` (``None``: the configured one);
        the response is closed on leaving, however. ``max_tokens`` lowers the configured cap
        for this request; ``temperature`` is sent when given (the driver sends none: the
        model's own default stands).

        ``on_retry(n, what)`` is called when the client makes its ``n``-th retry of the
        request, after an attempt that ``what`` happened to (:data:`.attempts.OnRetry`).

        Raises:
            EndpointConfigError: the base URL is not http(s).
            openai.OpenAIError: the request failed (after the client's retries).
        """
        url = self.config.endpoint_url
        if urlsplit(url).scheme not in ("http", "https"):
            raise EndpointConfigError(
                f"The model base URL {self.config.shown_url!r} is not an http:// or https:// URL. "
                f"Set --base-url or {BASE_URL_ENV} to the API root, e.g. "
                "http://localhost:11434/v1."
            )
        extra: dict[str, Any] = {"tools": tools} if tools else {}
        caps = [cap for cap in (self.config.max_tokens, max_tokens) if cap is not None]
        if caps:
            extra[token_limit_field(url)] = min(caps)
        if reasoning_effort is not None:
            extra["reasoning_effort"] = reasoning_effort
        if temperature is not None:
            extra["temperature"] = temperature
        with observed(on_retry):
            response = await self._create(messages, extra, model or self.config.model)
        try:
            yield response
        finally:
            await response.close()

    async def list_models(self, timeout: float) -> list[ListedModel]:
        """The endpoint's ``GET /models``, within ``timeout`` seconds, not retried.

        Raises:
            ListingUnavailable: the endpoint answered 404 (it has no listing).
            TimeoutError: it took longer than ``timeout``.
            ListingFailed: any other failure, with :func:`explain`'s sentence.
        """
        client = self.client.with_options(timeout=timeout, max_retries=0)
        try:
            async with asyncio.timeout(timeout):
                page = await client.models.list()
        except openai.NotFoundError:
            raise ListingUnavailable from None
        except openai.APITimeoutError:
            raise TimeoutError from None
        except openai.OpenAIError as error:
            raise ListingFailed(explain(error, self.config), failure_kind(error)) from None
        listed = (listed_model(entry.to_dict()) for entry in page.data)
        return [model for model in listed if model is not None]

    def explain(self, error: BaseException, model: str | None = None) -> str:
        """What a request for ``model`` (``None``: the configured one) that failed with
        ``error`` means for the user (see :func:`explain`)."""
        config = self.config if model is None else attrs.evolve(self.config, model=model)
        return explain(error, config)

    async def _create(
        self, messages: Sequence[Mapping[str, Any]], extra: dict[str, Any], model: str
    ) -> openai.AsyncStream[ChatCompletionChunk]:
        response: openai.AsyncStream[ChatCompletionChunk]
        if self.usage:
            try:
                response = await self.client.chat.completions.create(
                    model=model,
                    messages=cast(Any, messages),
                    stream=True,
                    stream_options={"include_usage": True},
                    **extra,
                )
                return response
            except (openai.BadRequestError, openai.UnprocessableEntityError) as error:
                if not refuses_field(error, "stream_options"):
                    raise
                logger.info("the endpoint refused stream_options; usage is not asked for")
                self.usage = False
        response = await self.client.chat.completions.create(
            model=model, messages=cast(Any, messages), stream=True, **extra
        )
        return response

    def context_exceeded(self, error: BaseException) -> bool:
        """Whether ``error`` refused the request for being longer than the context window."""
        return context_exceeded(error)

    def refuses_cap(self, error: BaseException) -> bool:
        """Whether ``error`` refused the request's cap on the response's tokens."""
        return refuses_field(error, token_limit_field(self.config.endpoint_url))

    def failure_kind(self, error: BaseException) -> FailureKind:
        """What the request that failed with ``error`` ran into (:func:`failure_kind`)."""
        return failure_kind(error)

    async def aclose(self) -> None:
        """Close the client's connections."""
        await self.client.close()


DETAIL_CHARS: Final = 300
"""How much of a server's explanation of a failed request the user is shown."""
LOGGED_DETAIL_CHARS: Final = 16 * 1024
"""How much of a server's explanation of a failed request the log keeps."""


def _body_text(error: openai.APIStatusError) -> str:
    """The failed request's response body as text (``""`` if it was not read)."""
    response = error.response
    return response.text if response.is_closed else ""


def _detail(error: openai.APIStatusError) -> str:
    """The server's own explanation of a failed request, if it gave one (whole)."""
    body: object = error.body
    if isinstance(body, Mapping):
        message = body.get("message") or body.get("error") or body.get("detail")
        if isinstance(message, str) and message:
            return message
    return _body_text(error)


CUT: Final = " … (more in the log)"
"""Ends a server's explanation that was cut short for the user."""


def first_line(text: str, limit: int = DETAIL_CHARS) -> str:
    """The first non-blank line of ``text``, at most ``limit`` characters and :data:`CUT`,
    which marks what was left out (the rest of the line, or further lines)."""
    return text_first_line(text, limit + len(CUT), mark=CUT)


CONTEXT_PHRASES: Final = (
    "context_length_exceeded",
    "maximum context length",
    "context length",
    "context window",
    "too many tokens",
    "prompt is too long",
    "exceeds the context",
    "context size",
)
"""What servers say when a request is longer than the model's context window (OpenAI's code
``context_length_exceeded`` and message "maximum context length", vLLM's "maximum context
length", llama.cpp's "exceeds the available context size", Anthropic-style "prompt is too
long"…); matched case-insensitively in a 400/413/422 answer's code or message."""


def context_exceeded(error: BaseException) -> bool:
    """Whether ``error`` is a refusal of the request's length (see :data:`CONTEXT_PHRASES`)."""
    if not isinstance(error, openai.APIStatusError) or error.status_code not in (400, 413, 422):
        return False
    code = getattr(error, "code", None)
    text = f"{code or ''} {_detail(error)}".lower()
    return any(phrase in text for phrase in CONTEXT_PHRASES)


def refuses_field(error: BaseException, field: str) -> bool:
    """Whether ``error`` is a 400/422 whose explanation names ``field`` (a server that does
    not take ``stream_options``, ``temperature``, ``tools``…)."""
    if not isinstance(error, openai.BadRequestError | openai.UnprocessableEntityError):
        return False
    return field in _detail(error)


def failure_kind(error: BaseException) -> FailureKind:
    """What the request that failed with ``error`` ran into (see :data:`FailureKind`)."""
    if isinstance(error, EndpointConfigError):
        return "config"
    if isinstance(error, openai.APITimeoutError | TimeoutError):
        return "timeout"  # before APIConnectionError: a timeout is one
    if isinstance(error, openai.APIConnectionError):
        return "unreachable"
    if isinstance(error, openai.AuthenticationError):
        return "key"
    if isinstance(error, openai.PermissionDeniedError):
        return "forbidden"
    if isinstance(error, openai.NotFoundError):
        return "not found"
    if isinstance(error, openai.RateLimitError):
        return "rate limited"
    if isinstance(error, openai.APIStatusError):
        return "server" if error.status_code >= 500 else "refused"
    return "other"


def _with(detail: str) -> str:
    # Every message goes on with its own full stop (or sentence) after the server's words.
    detail = detail.rstrip().rstrip(".")
    return f": {detail}" if detail else ""


def explain(error: BaseException, config: ModelConfig) -> str:
    """One clear message for the user about a request that failed with ``error``, with no
    secret in it (:func:`~.shown.redacted`)."""
    return redacted(_explain(error, config), config)


def _explain(error: BaseException, config: ModelConfig) -> str:
    url = config.shown_url
    model = config.model
    if isinstance(error, EndpointConfigError):
        return str(error)
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        whole = redacted(_detail(error), config)
        logger.warning(
            "the model endpoint %s answered HTTP %d: %s", url, status, whole[:LOGGED_DETAIL_CHARS]
        )
        detail = _with(first_line(whole))
        if isinstance(error, openai.AuthenticationError):
            if config.api_key is None:
                return (
                    f"The model endpoint {url} needs an API key (it answered 401 Unauthorized)"
                    f"{detail}. {key_fix(config)}"
                )
            return (
                f"The model endpoint {url} rejected the API key (401 Unauthorized){detail}. "
                f"{key_fix(config)}"
            )
        if isinstance(error, openai.PermissionDeniedError):
            return f"The model endpoint {url} refused access to {model!r} (403 Forbidden){detail}."
        if isinstance(error, openai.NotFoundError):
            return (
                f"The model endpoint {url} answered 404 Not Found for model {model!r}{detail}. "
                f"Check the model name (--model or {MODEL_ENV}) and the base URL (--base-url or "
                f"{BASE_URL_ENV}; OpenAI-compatible servers usually end in /v1)."
            )
        retries = config.max_retries
        if error.response.headers.get("x-should-retry") == "false":
            retries = 0  # the server said not to, and the client obeyed
        retried = f" after {retries} {'retry' if retries == 1 else 'retries'}" if retries else ""
        if isinstance(error, openai.RateLimitError):
            return (
                f"The model endpoint {url} is rate limiting requests (429 Too Many Requests)"
                f"{retried}{detail}. Try again later."
            )
        if status >= 500:
            return f"The model endpoint {url} failed with HTTP {status}{retried}{detail}."
        hint = ""
        if "max_tokens" in detail or "max_completion_tokens" in detail:
            hint = (
                f" Lower the cap on a response's tokens (--max-tokens or {MAX_TOKENS_ENV}; "
                "0 sends none)."
            )
        return f"The model endpoint {url} rejected the request (HTTP {status}){detail}.{hint}"
    if isinstance(error, openai.APITimeoutError):
        cause = error.__cause__
        if isinstance(cause, FirstByteTimeout):
            tries = config.max_retries + 1
            tried = f" (tried {tries} times)" if tries > 1 else ""
            return (
                f"The model endpoint {url} did not start answering within {cause.seconds:g} "
                f"seconds{tried}. A local server that loads the model on first use may need "
                f"longer: --first-byte-timeout, ${FIRST_BYTE_TIMEOUT_ENV} or first_byte_timeout "
                "in the config file."
            )
        return f"The model endpoint {url} did not answer within {config.request_timeout:g} seconds."
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__
        reason = str(cause) if cause is not None and str(cause) else str(error)
        return (
            f"Could not reach the model endpoint {url} ({reason}). "
            "Check that the server is running and that the base URL is right."
        )
    if isinstance(error, openai.APIError):  # an error inside a streamed 200 answer
        whole = redacted(error.message, config)
        logger.warning("the model endpoint %s failed while answering: %s", url, whole)
        return f"The model endpoint {url} reported an error while answering: {first_line(whole)}"
    if isinstance(error, openai.OpenAIError):
        return f"The model client failed: {error}"
    logger.error("the model request failed", exc_info=error)
    name = type(error).__name__
    return f"The model request failed unexpectedly ({name}: {error}). The log has the details."
