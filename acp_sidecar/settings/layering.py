"""Layering the config file under the command line and the environment.

Invariants:
- Option, then variable, then file, then default; a list comes whole from one layer.
- The endpoint and its key come from the same layer, so a key meant for one provider is never
  sent to another one's URL by a layer that did not name it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

import attrs

from acp_sidecar.settings.keys import DEFAULTS, KEYS, KEYS_BY_NAME
from acp_sidecar.settings.reading import FileSettings
from acp_sidecar.values import Value

if TYPE_CHECKING:
    from acp_sidecar.agent.model.config import ModelConfig, ModelProfile

# The model package's names for these (agent.model.config), kept here so that layering
# imports nothing heavy on every start; a test keeps them equal.
API_KEY_ENV: Final = "OPENAI_API_KEY"
BASE_URL_ENV: Final = "OPENAI_BASE_URL"
MODEL_INFO_ENV: Final = "ACP_SIDECAR_MODEL_INFO"
OPENAI_HOST: Final = "api.openai.com"


@attrs.frozen(repr=False, eq=False)
class EndpointKey(Value):
    """The endpoint's key and where it came from (for ``doctor``; never the key in repr)."""

    value: str | None = attrs.field(repr=False)
    """The key; ``None``: none configured (local servers need none)."""
    variable: str | None
    """The environment variable it is read from; ``None``: stored in the file, or none."""

    @property
    def source(self) -> str:
        """Where the key comes from, as ``doctor`` says it (never the key itself)."""
        if self.variable is not None:
            return f"${self.variable}"
        return "stored in the config file" if self.value is not None else "none"


def _given(value: object) -> bool:
    return value is not None and value != [] and value != ()


def _variable_set(name: str | None, env: Mapping[str, str]) -> bool:
    return name is not None and bool(env.get(name, "").strip())


def layered(
    args: argparse.Namespace, file: FileSettings, env: Mapping[str, str] | None = None
) -> argparse.Namespace:
    """A copy of ``args`` with each key the options left unset taken from ``env``'s layer or
    the file, then the defaults (module invariants). Also sets ``model_profiles`` (the file's
    ``[model_info]`` tables when neither ``--model-info`` nor its variable is given) and
    ``endpoint_key`` (:func:`endpoint_key`).

    Raises:
        ValueError: ``ACP_SIDECAR_MODE`` names no mode (the message names it).
    """
    source = os.environ if env is None else env
    result = argparse.Namespace(**vars(args))
    result.no_model = no_model(args)
    for key in KEYS:
        if key.option is None:
            continue
        if _given(getattr(result, key.dest, None)) or _variable_set(key.env, source):
            if key.name == "mode" and not _given(getattr(result, key.dest, None)):
                result.mode = _mode_from_env(source[str(key.env)])
            continue
        value = file.values.get(key.name)
        if value is None:
            value = DEFAULTS.get(key.name)
        if isinstance(value, tuple):
            value = list(value)
        setattr(result, key.dest, value)
    described = _given(getattr(result, "model_info", None)) or _variable_set(MODEL_INFO_ENV, source)
    result.model_profiles = () if described else file.model_info
    result.endpoint_key = endpoint_key(args, file, source)
    if result.no_model:
        result.model, result.models, result.model_info, result.model_profiles = None, [], [], ()
    return result


def no_model(args: argparse.Namespace) -> bool:
    """Whether the command line asks for no model (``--no-model``, or ``--model ''``): then
    no layer's model counts, the environment's included."""
    return bool(getattr(args, "no_model", False)) or getattr(args, "model", None) == ""


def _mode_from_env(text: str) -> str:
    key = KEYS_BY_NAME["mode"]
    mode = text.strip()
    if mode not in key.choices:
        raise ValueError(f"{key.env} {text!r}: expected one of {', '.join(key.choices)}")
    return mode


def endpoint_key(
    args: argparse.Namespace, file: FileSettings, env: Mapping[str, str]
) -> EndpointKey:
    """The endpoint's key by the rule of the module invariants."""
    if _given(getattr(args, "base_url", None)) or _variable_set(BASE_URL_ENV, env):
        return _from_variable(API_KEY_ENV, env)
    variable = file.values.get("api_key_env")
    if isinstance(variable, str):
        return _from_variable(variable, env)
    if file.api_key is not None:
        return EndpointKey(file.api_key, None)
    url = file.values.get("base_url")
    if isinstance(url, str) and not _is_openai(url):
        return EndpointKey(None, None)
    return _from_variable(API_KEY_ENV, env)


def _is_openai(url: str) -> bool:
    """Whether ``url`` is OpenAI's own API (where ``OPENAI_API_KEY`` is meant to go)."""
    from urllib.parse import urlsplit

    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    return (host or "").lower() == OPENAI_HOST


def _from_variable(name: str, env: Mapping[str, str]) -> EndpointKey:
    value = env.get(name, "").strip()
    return EndpointKey(value or None, name)


def model_profiles(args: argparse.Namespace) -> tuple[ModelProfile, ...]:
    """The file's model descriptions kept by :func:`layered` (none on a plain namespace)."""
    profiles = getattr(args, "model_profiles", ())
    return tuple(profiles)


def model_environment(args: argparse.Namespace, env: Mapping[str, str]) -> dict[str, str]:
    """``env`` as the model configuration reads it: ``OPENAI_API_KEY`` is the endpoint's key
    chosen by :func:`layered` (absent when there is none), whatever variable it came from."""
    result = dict(env)
    key: EndpointKey | None = getattr(args, "endpoint_key", None)
    if key is None:
        return result
    result.pop(API_KEY_ENV, None)
    if key.value is not None:
        result[API_KEY_ENV] = key.value
    return result


def layered_model_config(args: argparse.Namespace, env: Mapping[str, str]) -> ModelConfig | None:
    """The model configuration of layered ``args`` (:func:`layered`) in ``env``: the one
    reading that ``serve`` and ``doctor`` share; ``None`` when no model is named.

    Raises:
        ValueError: a model setting cannot be used (the message names it).
    """
    from acp_sidecar.agent.model.config import ModelConfig

    if no_model(args):
        return None
    config = ModelConfig.from_env(
        args.model,
        args.base_url,
        model_environment(args, env),
        described=model_profiles(args),
        max_turn_requests=args.max_turn_requests,
        max_parallel_tools=args.max_parallel_tools,
        max_tokens=args.max_tokens,
        first_byte_timeout=getattr(args, "first_byte_timeout", None),
        models=args.models,
        model_info=args.model_info,
    )
    key: EndpointKey | None = getattr(args, "endpoint_key", None)
    if config is None or key is None:
        return config
    return attrs.evolve(config, key_variable=key.variable)
