"""Checking an OpenAI-compatible endpoint for what the model driver needs (configure, doctor).

Invariants:
- At most two requests: ``GET /models`` and one streamed chat request made by the driver's own
  :meth:`Endpoint.stream` (once more without ``temperature`` only if refused); no retries.
- Every report holds every check of :data:`CHECK_NAMES`, in order; nothing raises.
- No secret appears in a report: every detail and fix is redacted on the way out.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Final, assert_never
from urllib.parse import urlsplit

import attrs

from acp_sidecar.agent.model.answer_checks import (
    MESSAGES,
    PROBE_MAX_TOKENS,
    QUOTED_CHARS,
    TOOL,
    TOOL_FIX,
    TOOL_NAME,
    Answer,
    answer_checks,
    reasoning_check,
    tool_call_check,
)
from acp_sidecar.agent.model.catalog import ListingUnavailable
from acp_sidecar.agent.model.config import API_KEY_ENV, BASE_URL_ENV, ModelConfig
from acp_sidecar.agent.model.endpoint import (
    Endpoint,
    ListingFailed,
    explain,
    failure_kind,
    refuses_field,
)
from acp_sidecar.agent.model.report import (
    CHECK_NAMES,
    KEY,
    MODEL_ANSWERS,
    MODELS_LISTED,
    REACHABLE,
    REASONING,
    STREAMING,
    TOOL_CALLS,
    EndpointReport,
)
from acp_sidecar.agent.model.shown import key_check_fix, redacted
from acp_sidecar.agent.model.stream import StreamAssembly
from acp_sidecar.checks import Check, Status
from acp_sidecar.text import shorten

__all__ = [
    "CHECK_NAMES",
    "KEY",
    "MODELS_LISTED",
    "MODEL_ANSWERS",
    "PROBE_MAX_TOKENS",
    "REACHABLE",
    "REASONING",
    "STREAMING",
    "TOOL_CALLS",
    "TOOL_FIX",
    "TOOL_NAME",
    "Check",
    "EndpointReport",
    "Status",
    "probe_endpoint",
]

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT: Final = 10.0
"""Seconds to open the connection (at most the whole ``timeout``)."""
LISTED_SHOWN: Final = 8
"""How many listed model names a detail names."""
NO_MODEL: Final = "(no model)"
"""The configuration's model when none is named: no chat request is made then, so it is
never sent."""

URL_FIX: Final = (
    f"Start the server, or correct the base URL (--base-url, ${BASE_URL_ENV} or base_url in "
    "the config file; OpenAI-compatible servers usually end in /v1)."
)


async def probe_endpoint(
    base_url: str | None,
    api_key: str | None,
    model: str | None,
    *,
    timeout: float = 20.0,
    key_variable: str | None = API_KEY_ENV,
) -> EndpointReport:
    """Check the endpoint at ``base_url`` (``None``: OpenAI's) with ``api_key`` (``None``:
    none), read from ``key_variable`` (``None``: stored, or none named), and ``model``
    (``None``: list the models only), each request within ``timeout`` seconds. See the module
    invariants."""
    config = ModelConfig(
        model=(model or "").strip() or NO_MODEL,
        base_url=(base_url or "").strip() or None,
        api_key=api_key or None,
        key_variable=key_variable,
        request_timeout=timeout,
        connect_timeout=min(timeout, CONNECT_TIMEOUT),
        first_byte_timeout=timeout,  # the whole wait: doctor judges the time it took
        max_retries=0,
        max_tokens=PROBE_MAX_TOKENS,
    )
    probe = _Probe(config, timeout, listing_only=config.model == NO_MODEL)
    try:
        await probe.run()
    except Exception as exc:  # the probe reports, it never raises (a key that is not ASCII…)
        if REACHABLE not in probe.checks:
            probe.set(
                REACHABLE,
                "failed",
                f"The check could not be made: {type(exc).__name__}.",
                "Check the base URL and the key (a key is printable ASCII without spaces).",
            )
        probe.skip_rest("the check could not go on")
    return probe.report()


class _Probe:
    """The checks of one probe, filled in as its requests answer."""

    def __init__(self, config: ModelConfig, timeout: float, *, listing_only: bool) -> None:
        self.config = config
        self.timeout = timeout
        self.listing_only = listing_only
        self.checks: dict[str, Check] = {}
        self.models: tuple[str, ...] = ()
        self.began_s: float | None = None

    def set(self, name: str, status: Status, detail: str, fix: str | None = None) -> None:
        self.checks[name] = Check(name, status, detail, fix)

    def skip_rest(self, why: str) -> None:
        """Every check not decided yet is skipped, for ``why``."""
        for name in CHECK_NAMES:
            if name not in self.checks:
                self.set(name, "skipped", why)

    def report(self) -> EndpointReport:
        config = self.config
        checks = []
        for name in CHECK_NAMES:
            check = self.checks[name]
            fix = None if check.fix is None else redacted(check.fix, config)
            checks.append(attrs.evolve(check, detail=redacted(check.detail, config), fix=fix))
        return EndpointReport(config.shown_url, self.models, tuple(checks), self.began_s)

    async def run(self) -> None:
        url = self.config.shown_url
        if urlsplit(url).scheme not in ("http", "https"):
            self.set(REACHABLE, "failed", f"{url!r} is not an http:// or https:// URL.", URL_FIX)
            self.skip_rest("The base URL is not usable.")
            return
        endpoint = Endpoint(self.config)
        try:
            if await self.list_models(endpoint) and not self.listing_only:
                await self.chat(endpoint)
        finally:
            await endpoint.aclose()
        if self.listing_only:
            names = "" if not self.models else f" (listed: {self.listed()})"
            self.skip_rest(f"No model was named, so none was asked{names}.")
        elif KEY not in self.checks:
            self.set(KEY, "skipped", "No answer showed whether the endpoint takes the key.")
        self.skip_rest("An earlier check failed.")

    def listed(self) -> str:
        shown = ", ".join(self.models[:LISTED_SHOWN])
        more = len(self.models) - LISTED_SHOWN
        return shown + (f" and {more} more" if more > 0 else "")

    def key_accepted(self) -> None:
        if self.config.api_key is None:
            self.set(KEY, "ok", "None was sent, and the endpoint needs none.")
        else:
            self.set(KEY, "ok", "The endpoint accepted the key.")

    async def list_models(self, endpoint: Endpoint) -> bool:
        """``GET /models``; whether to go on to the chat request."""
        url = self.config.shown_url
        try:
            listed = await endpoint.list_models(self.timeout)
        except ListingUnavailable:
            self.set(REACHABLE, "ok", f"{url} answered.")
            self.set(
                MODELS_LISTED,
                "warning",
                "The endpoint has no GET /models (404): the editor's picker offers only the "
                "models configured.",
                "Name the models to offer: --models, or models in the config file.",
            )
            return True
        except TimeoutError:
            self.set(
                REACHABLE,
                "failed",
                f"{url} did not answer GET /models within {self.timeout:g} seconds.",
                URL_FIX,
            )
            return False
        except ListingFailed as error:
            return self.listing_failed(error)
        self.set(REACHABLE, "ok", f"{url} answered.")
        self.key_accepted()
        self.models = tuple(entry.name for entry in listed)
        model = self.config.model
        if not self.models:
            self.set(MODELS_LISTED, "warning", "GET /models listed no models.")
        elif not self.listing_only and model not in self.models:
            self.set(
                MODELS_LISTED,
                "warning",
                f"{model!r} is not among the {len(self.models)} listed: {self.listed()}.",
                "Check the model name (--model, $ACP_SIDECAR_MODEL or model in the config "
                "file), unless the endpoint serves models it does not list.",
            )
        else:
            self.set(MODELS_LISTED, "ok", f"{len(self.models)} listed: {self.listed()}.")
        return True

    def listing_failed(self, error: ListingFailed) -> bool:
        """A failed listing; whether to go on to the chat request."""
        sentence = str(error)
        url = self.config.shown_url
        match error.kind:
            case "unreachable" | "config":
                self.set(REACHABLE, "failed", sentence, URL_FIX)
                self.skip_rest("The endpoint is not reachable.")
                return False
            case "timeout":
                self.set(REACHABLE, "failed", sentence, URL_FIX)
                return False
            case "key":
                self.set(REACHABLE, "ok", f"{url} answered.")
                self.set(KEY, "failed", sentence, key_check_fix(self.config))
                self.skip_rest("The key was refused.")
                return False
            case "forbidden" | "not found" | "rate limited" | "refused" | "server" | "other":
                # 403: some keys may chat but not list (OpenAI's restricted keys); the chat
                # request decides about the key.
                self.set(REACHABLE, "ok", f"{url} answered.")
                self.set(MODELS_LISTED, "warning", sentence)
                return True
            case _:
                assert_never(error.kind)

    async def chat(self, endpoint: Endpoint) -> None:
        """The one small chat request, and what its stream showed."""
        model = self.config.model
        try:
            async with asyncio.timeout(self.timeout):
                try:
                    answer = await self.stream(endpoint, temperature=0.0)
                except Exception as error:
                    if not refuses_field(error, "temperature"):
                        raise
                    answer = await self.stream(endpoint, temperature=None)
        except Exception as error:
            self.chat_failed(error)
            return
        self.key_accepted()
        for check in answer_checks(answer, model):
            self.checks[check.name] = check
        if answer.chunks == 0:
            self.skip_rest("Nothing was streamed.")
            return
        for check in (tool_call_check(answer.assembly), reasoning_check(answer.assembly)):
            self.checks[check.name] = check

    async def stream(self, endpoint: Endpoint, *, temperature: float | None) -> Answer:
        assembly = StreamAssembly()
        chunks = 0
        first: float | None = None
        started = time.perf_counter()
        async with endpoint.stream(MESSAGES, [TOOL], temperature=temperature) as response:
            began = self.began_s = time.perf_counter() - started
            async for chunk in response:
                if chunk.choices:
                    chunks += 1
                    if first is None:
                        first = time.perf_counter() - started
                assembly.feed(chunk)
        assembly.close_calls()
        return Answer(assembly, chunks, first, time.perf_counter() - started, began)

    def chat_failed(self, error: BaseException) -> None:
        """The chat request failed with ``error``."""
        model = self.config.model
        kind = failure_kind(error)
        if kind == "other":
            # Not an endpoint error (a stream that does not parse, say): say what it was.
            logger.debug("the probe's chat request failed", exc_info=error)
            sentence = (
                f"The answer of {self.config.shown_url} could not be read "
                f"({type(error).__name__}: {shorten(str(error), QUOTED_CHARS)})."
            )
        else:
            sentence = explain(error, self.config)
        match kind:
            case "unreachable" | "config":
                self.set(REACHABLE, "failed", sentence, URL_FIX)
                self.skip_rest("The endpoint is not reachable.")
            case "timeout":
                self.set(
                    MODEL_ANSWERS,
                    "failed",
                    f"{model!r} did not answer within {self.timeout:g} seconds.",
                    "A local server may still be loading the model: try again. If it loads the "
                    "model on first use, give it longer to begin: first_byte_timeout in the "
                    "config file (or --first-byte-timeout).",
                )
            case "key":
                self.set(KEY, "failed", sentence, key_check_fix(self.config))
                self.skip_rest("The key was refused.")
            case "not found":
                names = f" The endpoint lists: {self.listed()}." if self.models else ""
                self.set(
                    MODEL_ANSWERS,
                    "failed",
                    sentence,
                    f"Check the model name (--model, $ACP_SIDECAR_MODEL or model in the config "
                    f"file).{names}",
                )
            case "forbidden":
                self.set(MODEL_ANSWERS, "failed", sentence, f"Use a key with access to {model!r}.")
            case "rate limited":
                self.set(MODEL_ANSWERS, "failed", sentence, "Try again later.")
            case "refused" if refuses_field(error, "tool"):
                self.set(MODEL_ANSWERS, "failed", sentence, TOOL_FIX)
                refused = "The endpoint refused a request that offers tools."
                self.set(TOOL_CALLS, "failed", refused, TOOL_FIX)
            case "refused" | "server":
                self.set(
                    MODEL_ANSWERS,
                    "failed",
                    sentence,
                    "The endpoint refused the kind of request acp-sidecar sends; its "
                    "message above says why.",
                )
            case "other":
                self.set(
                    MODEL_ANSWERS,
                    "failed",
                    sentence,
                    "Check that the base URL is an OpenAI-compatible API's root (it usually "
                    "ends in /v1).",
                )
            case _:
                assert_never(kind)
        if KEY not in self.checks and kind not in ("unreachable", "config", "timeout"):
            self.key_accepted()  # it answered the request with something other than a 401
