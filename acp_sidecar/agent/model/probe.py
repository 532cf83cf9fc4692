"""Checking an OpenAI-compatible endpoint for what the model driver needs of it: that it
answers, takes the key, lists its models, and that the model streams, calls a tool and
(perhaps) reasons. Used by ``acp-sidecar configure`` before it writes the file, and by
``acp-sidecar doctor``.

Invariants:
- At most two requests reach the endpoint: ``GET /models`` and one small streamed chat
  request offering one tool (asked once more without ``temperature`` only when the server
  refuses that field). Neither is retried; each is bounded as a whole by ``timeout``.
- The chat request is the driver's own (:meth:`Endpoint.stream`: the same token-cap field,
  the same usage request, ``tools`` without ``tool_choice``, its chunks read by
  :class:`StreamAssembly`, its arguments parsed by :func:`parse_arguments`), so a check
  passes only when the driver's requests would work.
- Every report holds every check of :data:`CHECK_NAMES`, in that order; one that could not
  run is ``skipped`` and says why. ``skipped`` is also what ``reasoning`` says of a model
  that streamed none: not a failure, and not a reason to offer a reasoning effort.
- Nothing raises: each failure is a check with a fix.
- No secret (the API key, the base URL's credentials) appears in a report: failures are
  worded by :func:`explain` (which redacts what a server echoes), and every detail and fix
  is redacted once more on the way out.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final, assert_never
from urllib.parse import urlsplit

import attrs

from acp_sidecar.agent.model.calls import parse_arguments
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
from acp_sidecar.tools.errors import ToolArgsError

__all__ = [
    "CHECK_NAMES",
    "KEY",
    "MODELS_LISTED",
    "MODEL_ANSWERS",
    "REACHABLE",
    "REASONING",
    "STREAMING",
    "TOOL_CALLS",
    "Check",
    "EndpointReport",
    "Status",
    "probe_endpoint",
]

logger = logging.getLogger(__name__)

PROBE_MAX_TOKENS: Final = 512
"""The probe's cap on the answer: a call to ``get_time`` takes some 20 tokens, and a
reasoning model thinks a few hundred before it (its reasoning counts against the cap)."""
CONNECT_TIMEOUT: Final = 10.0
"""Seconds to open the connection (at most the whole ``timeout``)."""
LISTED_SHOWN: Final = 8
"""How many listed model names a detail names."""
QUOTED_CHARS: Final = 120
"""How much of the model's text or arguments a detail quotes."""

TOOL_NAME: Final = "get_time"
TOOL: Final[Mapping[str, Any]] = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Get the current time in a time zone.",
        "parameters": {
            "type": "object",
            "properties": {
                "timezone": {"type": "string", "description": "An IANA time zone, e.g. UTC."}
            },
            "required": ["timezone"],
        },
    },
}
"""The one trivial tool the chat request offers (with one required argument, so that the
arguments' streaming is checked too)."""
MESSAGES: Final[Sequence[Mapping[str, str]]] = (
    {
        "role": "system",
        "content": "You check that tool calls work. Answer by calling the get_time tool.",
    },
    {"role": "user", "content": "What time is it in UTC? Call get_time."},
)

NO_MODEL: Final = "(no model)"
"""The configuration's model when none is named: no chat request is made then, so it is
never sent."""

TOOL_FIX: Final = (
    "acp-sidecar offers tools without tool_choice, as agents do. Some servers ignore tools "
    "unless tool_choice is set: such an endpoint cannot drive the tools. llama.cpp's server "
    "needs --jinja; Ollama needs a model with tool support (ollama.com/search?c=tools); vLLM "
    "needs --enable-auto-tool-choice and the --tool-call-parser of the model's family. "
    "Else choose another model."
)
URL_FIX: Final = (
    f"Start the server, or correct the base URL (--base-url, ${BASE_URL_ENV} or base_url in "
    "the config file; OpenAI-compatible servers usually end in /v1)."
)


@attrs.define
class _Answer:
    """The chat request's stream, read to its end."""

    assembly: StreamAssembly
    chunks: int
    """Chunks that carried a choice."""
    first_chunk_s: float | None
    done_s: float
    began_s: float


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
        assembly = answer.assembly
        if answer.chunks == 0:
            self.set(
                MODEL_ANSWERS,
                "failed",
                f"{model!r} answered, but not as a stream: no chunk came.",
                "The endpoint must stream chat completions (stream: true, server-sent events).",
            )
            self.set(STREAMING, "failed", "No chunk came.")
            self.skip_rest("Nothing was streamed.")
            return
        first = answer.first_chunk_s or 0.0
        timing = f"first chunk after {first:.1f} s, done after {answer.done_s:.1f} s"
        if assembly.finish_reason is None:
            self.set(
                MODEL_ANSWERS,
                "warning",
                f"{model!r} answered ({timing}), but the stream ended without a finish reason: "
                "it may have been cut off.",
            )
        else:
            self.set(MODEL_ANSWERS, "ok", f"{model!r} answered ({timing}).")
        if answer.chunks == 1:
            self.set(
                STREAMING,
                "warning",
                "The whole answer came in one chunk: answers will show only when complete.",
            )
        else:
            self.set(STREAMING, "ok", f"The answer came in {answer.chunks} chunks.")
        self.judge_tool_call(assembly)
        self.judge_reasoning(assembly)

    async def stream(self, endpoint: Endpoint, *, temperature: float | None) -> _Answer:
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
        return _Answer(assembly, chunks, first, time.perf_counter() - started, began)

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

    def judge_tool_call(self, assembly: StreamAssembly) -> None:
        calls = assembly.calls()
        if calls:
            call = calls[0]
            quoted = shorten(call.arguments, QUOTED_CHARS)
            try:
                arguments = parse_arguments(call.arguments)
            except ToolArgsError:
                self.set(
                    TOOL_CALLS,
                    "failed",
                    f"The model called {call.name}, but its arguments are not JSON: {quoted}",
                    TOOL_FIX,
                )
                return
            if not isinstance(arguments, dict):
                self.set(
                    TOOL_CALLS,
                    "failed",
                    f"The model called {call.name} with arguments that are not an object: {quoted}",
                    TOOL_FIX,
                )
            elif call.name != TOOL_NAME:
                self.set(
                    TOOL_CALLS,
                    "warning",
                    f"The model called {call.name!r}, a tool it was not offered (it was offered "
                    f"{TOOL_NAME}).",
                    "The model may not follow tool definitions well: consider another model.",
                )
            else:
                self.set(TOOL_CALLS, "ok", f"The model called {call.name} with {quoted}.")
            return
        text = assembly.text
        if assembly.finish_reason == "length":
            self.set(
                TOOL_CALLS,
                "warning",
                f"The answer reached the probe's cap of {PROBE_MAX_TOKENS} tokens before any "
                "tool call (a reasoning model may think that long).",
                "Run the check again; if it stays so, the model thinks long before it acts.",
            )
        elif TOOL_NAME in text or "<tool_call>" in text:
            self.set(
                TOOL_CALLS,
                "failed",
                "The model wrote the call as text, and the server did not parse it into a "
                f"tool call: {shorten(text, QUOTED_CHARS)}",
                TOOL_FIX,
            )
        else:
            said = f": {shorten(text, QUOTED_CHARS)}" if text.strip() else " (an empty answer)."
            self.set(
                TOOL_CALLS,
                "failed",
                f"The model answered in text instead of calling the tool{said}",
                TOOL_FIX,
            )

    def judge_reasoning(self, assembly: StreamAssembly) -> None:
        if assembly.thoughts:
            self.set(
                REASONING,
                "ok",
                f"{len(assembly.thoughts)} characters of reasoning streamed in "
                f"{assembly.reasoning_field}.",
            )
        elif "<think>" in assembly.text:
            self.set(
                REASONING,
                "warning",
                "The reasoning came inside the answer's text (<think> tags): the editor shows "
                "it as the answer.",
                "Have the server split it out: llama.cpp --reasoning-format deepseek, vLLM "
                "--reasoning-parser.",
            )
        else:
            self.set(
                REASONING,
                "skipped",
                "No reasoning was streamed (the model does not reason aloud, or the server "
                "does not send it).",
            )
