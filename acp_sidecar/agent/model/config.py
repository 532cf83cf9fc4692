"""How the model driver reaches its model: endpoint, credentials and the loop's limits.

Invariants:
- A :class:`ModelConfig` is a frozen, validated value; nothing here does I/O or imports
  ``openai``, so the CLI can build one on the start-up path.
- The API key never appears in ``repr`` (configs end up in logs).
- A bad endpoint (a URL that is not http(s), an unreachable host, a missing key) is *not*
  refused here: it surfaces in the editor as an agent message when a turn runs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Final

import attrs

MODEL_ENV: Final = "ACP_SIDECAR_MODEL"
BASE_URL_ENV: Final = "OPENAI_BASE_URL"
API_KEY_ENV: Final = "OPENAI_API_KEY"
MAX_TURN_REQUESTS_ENV: Final = "ACP_SIDECAR_MAX_TURN_REQUESTS"
MAX_PARALLEL_TOOLS_ENV: Final = "ACP_SIDECAR_MAX_PARALLEL_TOOLS"
MAX_TOKENS_ENV: Final = "ACP_SIDECAR_MAX_TOKENS"
DEFAULT_MAX_TOKENS: Final = 8192
"""The default cap on one response's tokens. It stops a model that loops; it is as high as
it can be without a request being refused by a common endpoint whose own per-response
maximum is 8192 (DeepSeek's chat model; OpenAI's older models allow less, gpt-4o 16384).
Reasoning models may need more: ``--max-tokens``, or ``0`` to send no cap."""
DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
"""Where requests go when no base URL is configured (the ``openai`` client's default)."""


def _non_empty(_instance: object, attribute: attrs.Attribute[str], value: str) -> None:
    if not value.strip():
        raise ValueError(f"{attribute.name} must not be empty")


def _positive_or_none(
    _instance: object, attribute: attrs.Attribute[Any], value: int | None
) -> None:
    if value is not None and value < 1:
        raise ValueError(f"{attribute.name} must be at least 1 (or None), not {value!r}")


@attrs.frozen
class Prices:
    """What a model's tokens cost, per million, in one currency (never guessed: configured)."""

    input_per_mtok: float = attrs.field(validator=attrs.validators.ge(0))
    """The price of a million prompt tokens."""
    output_per_mtok: float = attrs.field(validator=attrs.validators.ge(0))
    """The price of a million completion tokens."""
    currency: str = attrs.field(validator=_non_empty)
    """The unit of both: an ISO 4217 code (``USD``, ``EUR``) or another (``credits``)."""


@attrs.frozen
class ModelProfile:
    """What the sidecar knows of one model it offers: the user's configuration, completed
    by the endpoint's ``GET /models`` where that lists it."""

    name: str = attrs.field(validator=_non_empty)
    """The model's id, as sent in requests."""
    context_window: int | None = attrs.field(default=None, validator=_positive_or_none)
    """The context window in tokens; ``None``: unknown (no ``usage_update``, no compaction)."""
    images: bool = False
    """The model accepts image input."""
    reasoning_effort: bool = False
    """The endpoint accepts ``reasoning_effort`` for this model."""
    prices: Prices | None = None
    """Its prices; ``None``: unknown (no cost is reported)."""


@attrs.frozen
class ModelConfig:
    """An OpenAI-compatible chat-completions endpoint and how the turn loop uses it."""

    model: str = attrs.field(validator=_non_empty)
    """The model name sent with every request (``deepseek-chat``, ``gpt-4.1``, ``qwen3``…)."""
    base_url: str | None = None
    """The API root, e.g. ``http://localhost:11434/v1``; ``None`` is OpenAI's own."""
    api_key: str | None = attrs.field(default=None, repr=False)
    """The bearer key; ``None`` sends a placeholder (local servers need none)."""
    max_turn_requests: int = attrs.field(default=25, validator=attrs.validators.gt(0))
    """Model requests one prompt turn may make before it stops with ``max_turn_requests``."""
    max_parallel_tools: int = attrs.field(default=4, validator=attrs.validators.gt(0))
    """Tool calls of one model response that run at the same time."""
    request_timeout: float = attrs.field(default=600.0, validator=attrs.validators.gt(0))
    """Seconds the endpoint may stay silent (before its first byte, or between two chunks)."""
    connect_timeout: float = attrs.field(default=10.0, validator=attrs.validators.gt(0))
    """Seconds to open a connection to the endpoint."""
    max_retries: int = attrs.field(default=2, validator=attrs.validators.ge(0))
    """Retries (with backoff) of a request answered 408/409/429/5xx or not connected."""
    max_tokens: int | None = attrs.field(default=DEFAULT_MAX_TOKENS, validator=_positive_or_none)
    """The most tokens one response may have (sent with every request; reaching it ends the
    turn with ``max_tokens``); ``None`` sends no cap (the server's own applies)."""
    models: tuple[ModelProfile, ...] = ()
    """The models offered in the picker, with what is known of each; :attr:`model` (the
    default) is among them when it is configured there, and may be absent otherwise."""

    def profile(self, name: str | None = None) -> ModelProfile:
        """What is configured for the model ``name`` (``None``: the default :attr:`model`);
        a model not in :attr:`models` gets a profile that knows only its name."""
        wanted = name or self.model
        for profile in self.models:
            if profile.name == wanted:
                return profile
        return ModelProfile(name=wanted)

    @property
    def endpoint_url(self) -> str:
        """The API root requests go to (``base_url`` or OpenAI's)."""
        return self.base_url or DEFAULT_BASE_URL

    @classmethod
    def from_env(
        cls,
        model: str | None = None,
        base_url: str | None = None,
        env: Mapping[str, str] = os.environ,
        *,
        max_turn_requests: int | None = None,
        max_parallel_tools: int | None = None,
        max_tokens: int | None = None,
    ) -> ModelConfig | None:
        """The configuration from the arguments, falling back to the environment.

        ``model`` falls back to ``ACP_SIDECAR_MODEL``, ``base_url`` to ``OPENAI_BASE_URL``;
        the key is ``OPENAI_API_KEY``; ``max_turn_requests`` to
        ``ACP_SIDECAR_MAX_TURN_REQUESTS``, ``max_parallel_tools`` to
        ``ACP_SIDECAR_MAX_PARALLEL_TOOLS`` and ``max_tokens`` to ``ACP_SIDECAR_MAX_TOKENS``
        (where ``0`` means no cap), then to the defaults. Blank values count as unset.
        Returns ``None`` when no model is named anywhere: then the console stays the driver.

        Raises:
            ValueError: a limit (given or from the environment) is not a whole number of at
                least 1 (of at least 0 for ``max_tokens``); the message names the setting and
                the value. Limits are checked even without a model, so a typo never goes
                unnoticed.
        """
        limits = {
            "max_turn_requests": _limit(
                "max_turn_requests", max_turn_requests, MAX_TURN_REQUESTS_ENV, env
            ),
            "max_parallel_tools": _limit(
                "max_parallel_tools", max_parallel_tools, MAX_PARALLEL_TOOLS_ENV, env
            ),
        }
        settings: dict[str, Any] = {
            name: value for name, value in limits.items() if value is not None
        }
        tokens = _limit("max_tokens", max_tokens, MAX_TOKENS_ENV, env, least=0)
        if tokens is not None:
            settings["max_tokens"] = tokens or None  # 0: no cap
        chosen = _given(model) or _given(env.get(MODEL_ENV))
        if chosen is None:
            return None
        return cls(
            model=chosen,
            base_url=_given(base_url) or _given(env.get(BASE_URL_ENV)),
            api_key=_given(env.get(API_KEY_ENV)),
            **settings,
        )


def _given(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    return value.strip()


def _limit(
    name: str, given: int | None, variable: str, env: Mapping[str, str], *, least: int = 1
) -> int | None:
    """A limit from its argument, else its environment variable (``None``: neither)."""
    if given is not None:
        if isinstance(given, bool) or not isinstance(given, int) or given < least:
            raise ValueError(f"{name} must be a whole number of at least {least}, not {given!r}")
        return given
    text = _given(env.get(variable))
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = least - 1
    if value < least:
        raise ValueError(f"{variable} must be a whole number of at least {least}, not {text!r}")
    return value
