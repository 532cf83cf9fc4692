"""How the model driver reaches its model: endpoint, credentials and the loop's limits.

A frozen, validated value; no I/O, no ``openai``. The key and a base URL's credentials never
appear in ``repr``. A bad endpoint is not refused here: it surfaces when a turn runs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from acp_sidecar.agent.model.variables import MODEL_ENV as MODEL_ENV
from acp_sidecar.agent.model.variables import MODEL_INFO_ENV as MODEL_INFO_ENV
from acp_sidecar.agent.model.variables import MODELS_ENV as MODELS_ENV
from acp_sidecar.text import shown_url

BASE_URL_ENV: Final = "OPENAI_BASE_URL"
API_KEY_ENV: Final = "OPENAI_API_KEY"
MAX_TURN_REQUESTS_ENV: Final = "ACP_SIDECAR_MAX_TURN_REQUESTS"
MAX_PARALLEL_TOOLS_ENV: Final = "ACP_SIDECAR_MAX_PARALLEL_TOOLS"
MAX_TOKENS_ENV: Final = "ACP_SIDECAR_MAX_TOKENS"
FIRST_BYTE_TIMEOUT_ENV: Final = "ACP_SIDECAR_FIRST_BYTE_TIMEOUT"
MODEL_INFO_SETTINGS: Final = (
    "context=TOKENS, images, reasoning, input=PRICE, output=PRICE, currency=CODE"
)
"""The settings of one ``--model-info`` entry, as the help and the error messages name them."""
DEFAULT_MAX_TOKENS: Final = 8192
"""The default cap on one response's tokens. It stops a model that loops; it is as high as
it can be without a request being refused by a common endpoint whose own per-response
maximum is 8192 (DeepSeek's chat model; OpenAI's older models allow less, gpt-4o 16384).
Reasoning models may need more: ``--max-tokens``, or ``0`` to send no cap."""
DEFAULT_FIRST_BYTE_TIMEOUT: Final = 30.0
"""Seconds an answer may take to begin, by default: a remote endpoint that is up answers within
a few; a local server that loads the model on first use may need more (``doctor`` says so)."""
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
    base_url: str | None = attrs.field(
        default=None, repr=lambda url: repr(url if url is None else shown_url(url))
    )
    """The API root, e.g. ``http://localhost:11434/v1``; ``None`` is OpenAI's own. A user
    name and password in it are sent (HTTP basic authentication), never shown."""
    api_key: str | None = attrs.field(default=None, repr=False)
    """The bearer key; ``None`` sends a placeholder (local servers need none)."""
    key_variable: str | None = API_KEY_ENV
    """The environment variable the key is read from (the one a missing or refused key's
    message names); ``None``: the key is stored in the config file, or the file names this
    endpoint without a key."""
    max_turn_requests: int = attrs.field(default=25, validator=attrs.validators.gt(0))
    """Model requests one prompt turn may make before it stops with ``max_turn_requests``."""
    max_parallel_tools: int = attrs.field(default=4, validator=attrs.validators.gt(0))
    """Tool calls of one model response that run at the same time."""
    request_timeout: float = attrs.field(default=600.0, validator=attrs.validators.gt(0))
    """Seconds the endpoint may stay silent (before its first byte, or between two chunks)."""
    connect_timeout: float = attrs.field(default=10.0, validator=attrs.validators.gt(0))
    """Seconds to open a connection to the endpoint."""
    first_byte_timeout: float = attrs.field(
        default=DEFAULT_FIRST_BYTE_TIMEOUT, validator=attrs.validators.gt(0)
    )
    """Seconds a streamed request's answer may take to begin (connected, sent, the response's
    first byte read); an attempt that takes longer is given up and retried."""
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

    @property
    def shown_url(self) -> str:
        """The API root as the user and the log are shown it: without its credentials."""
        return shown_url(self.endpoint_url)

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
        first_byte_timeout: float | None = None,
        models: Sequence[str] | None = None,
        model_info: Sequence[str] | None = None,
        described: Sequence[ModelProfile] = (),
    ) -> ModelConfig | None:
        """The configuration from the arguments, falling back to the environment.

        ``model`` falls back to ``ACP_SIDECAR_MODEL``, ``base_url`` to ``OPENAI_BASE_URL``;
        the key is ``OPENAI_API_KEY``; ``max_turn_requests`` to
        ``ACP_SIDECAR_MAX_TURN_REQUESTS``, ``max_parallel_tools`` to
        ``ACP_SIDECAR_MAX_PARALLEL_TOOLS`` and ``max_tokens`` to ``ACP_SIDECAR_MAX_TOKENS``
        (where ``0`` means no cap), ``first_byte_timeout`` to
        ``ACP_SIDECAR_FIRST_BYTE_TIMEOUT``, then to the defaults. Blank values count as unset.
        ``models`` (``--models`` values: names separated by commas) falls back to
        ``ACP_SIDECAR_MODELS``, ``model_info`` (``--model-info`` values) to
        ``ACP_SIDECAR_MODEL_INFO`` (entries separated by ``;``); the models offered are those
        named, then those only described, in order, and the default model is ``model``, else
        the first of them. ``described`` (the config file's ``[model_info]`` tables) stands in
        for ``model_info`` when neither it nor the variable is given. Returns ``None`` when no
        model is named anywhere: then the console stays the driver.

        Raises:
            ValueError: a limit (given or from the environment) is not a whole number of at
                least 1 (of at least 0 for ``max_tokens``), a timeout is not a positive number
                of seconds, or a model list or description is
                malformed (:func:`parse_model_info`); the message names the setting and the
                value. Limits are checked even without a model, so a typo never goes
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
        waited = _seconds("first_byte_timeout", first_byte_timeout, FIRST_BYTE_TIMEOUT_ENV, env)
        if waited is not None:
            settings["first_byte_timeout"] = waited
        offered = _offered_models(models, model_info, env, described)
        chosen = (
            _given(model) or _given(env.get(MODEL_ENV)) or (offered[0].name if offered else None)
        )
        if chosen is None:
            return None
        return cls(
            model=chosen,
            base_url=_given(base_url) or _given(env.get(BASE_URL_ENV)),
            api_key=_given(env.get(API_KEY_ENV)),
            models=offered,
            **settings,
        )


def _offered_models(
    models: Sequence[str] | None,
    model_info: Sequence[str] | None,
    env: Mapping[str, str],
    described_elsewhere: Sequence[ModelProfile] = (),
) -> tuple[ModelProfile, ...]:
    """The models named (option, else variable), then those only described, in order."""
    if models:
        names = parse_model_names(models, "--models")
    else:
        listed = _given(env.get(MODELS_ENV))
        names = parse_model_names([listed], MODELS_ENV) if listed else ()
    if model_info:
        described = [parse_model_info(text, "--model-info") for text in model_info]
        source = "--model-info"
    elif _given(env.get(MODEL_INFO_ENV)):
        entries = (_given(env.get(MODEL_INFO_ENV)) or "").split(";")
        described = [parse_model_info(text, MODEL_INFO_ENV) for text in entries if text.strip()]
        source = MODEL_INFO_ENV
    else:
        described = list(described_elsewhere)
        source = "model_info"
    known: dict[str, ModelProfile] = {}
    for profile in described:
        if profile.name in known:
            raise ValueError(f"{source}: model {profile.name!r} is described twice")
        known[profile.name] = profile
    ordered = list(names) + [name for name in known if name not in names]
    return tuple(known.get(name) or ModelProfile(name=name) for name in ordered)


def parse_model_names(texts: Sequence[str], source: str) -> tuple[str, ...]:
    """The model names in ``texts`` (each a comma-separated list), in order, each once.

    Raises:
        ValueError: a name is empty (``a,,b``); the message names ``source`` and the value.
    """
    names: list[str] = []
    for text in texts:
        for part in text.split(","):
            name = part.strip()
            if not name:
                raise ValueError(f"{source} {text!r}: a model name is empty")
            if name not in names:
                names.append(name)
    return tuple(names)


def parse_model_info(text: str, source: str) -> ModelProfile:
    """One model's description: ``NAME:SETTING[,SETTING...]``.

    The settings are ``context=TOKENS`` (its context window), ``images`` (it accepts image
    input), ``reasoning`` (it accepts ``reasoning_effort``), and its prices per million tokens
    with their currency: ``input=PRICE,output=PRICE,currency=CODE``, all three or none. The
    name ends at the last ``:``, so names with colons (``qwen3:8b:context=40960``) work.

    Raises:
        ValueError: the text is malformed; the message names ``source`` (the option or the
            environment variable) and the value, and says what was expected.
    """
    where = f"{source} {text!r}"
    name, colon, spec = text.rpartition(":")
    name = name.strip()
    if not colon or not name or not spec.strip():
        raise ValueError(
            f"{where}: expected NAME:SETTING[,SETTING...] with the settings {MODEL_INFO_SETTINGS}"
        )
    seen: set[str] = set()
    window: int | None = None
    flags = {"images": False, "reasoning": False}
    prices: dict[str, float] = {}
    currency = ""
    for item in spec.split(","):
        key, equals, value = (part.strip() for part in item.partition("="))
        if key in seen:
            raise ValueError(f"{where}: {key} is given twice")
        seen.add(key)
        match key:
            case "images" | "reasoning":
                if equals:
                    raise ValueError(f"{where}: {key} takes no value (write just {key})")
                flags[key] = True
            case "context":
                try:
                    tokens = int(value)
                except ValueError:
                    tokens = 0
                if tokens < 1:
                    raise ValueError(
                        f"{where}: context must be a whole number of tokens of at least 1, "
                        f"not {value!r}"
                    )
                window = tokens
            case "input" | "output":
                try:
                    price = float(value)
                except ValueError:
                    price = math.nan
                if not math.isfinite(price) or price < 0:
                    raise ValueError(
                        f"{where}: {key} must be a price per million tokens (a number of at "
                        f"least 0), not {value!r}"
                    )
                prices[key] = price
            case "currency":
                if not value or any(c.isspace() for c in value):
                    raise ValueError(
                        f"{where}: currency must be a code such as USD or EUR, not {value!r}"
                    )
                currency = value
            case _:
                raise ValueError(
                    f"{where}: unknown setting {key!r} (settings: {MODEL_INFO_SETTINGS})"
                )
    priced = [key for key in ("input", "output", "currency") if key in seen]
    if priced and len(priced) < 3:
        missing = ", ".join(f"{key}=" for key in ("input", "output", "currency") if key not in seen)
        raise ValueError(
            f"{where}: prices need input=, output= and currency= together (missing {missing})"
        )
    return ModelProfile(
        name=name,
        context_window=window,
        images=flags["images"],
        reasoning_effort=flags["reasoning"],
        prices=Prices(prices["input"], prices["output"], currency) if priced else None,
    )


def _given(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    return value.strip()


def _seconds(name: str, given: float | None, variable: str, env: Mapping[str, str]) -> float | None:
    """A timeout from its argument, else its environment variable (``None``: neither)."""
    if given is not None:
        if isinstance(given, bool) or not math.isfinite(given) or given <= 0:
            raise ValueError(f"{name} must be a positive number of seconds, not {given!r}")
        return float(given)
    text = _given(env.get(variable))
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{variable} must be a positive number of seconds, not {text!r}")
    return value


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
