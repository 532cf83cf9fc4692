"""The script flags of ``configure``, and the answers they give without asking anything.

A key never comes from the command line (``--api-key-stdin`` only); nothing that matters is
guessed; a key configured for one endpoint is never carried over to another.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Final

import attrs

from acp_sidecar.configure.answers import (
    Answers,
    KeyFromEnv,
    KeySource,
    KeyStored,
    ModelDescription,
    NoKey,
    file_key,
    same_endpoint,
)
from acp_sidecar.configure.presets import CUSTOM, PRESETS_BY_ID, Preset, preset_for_url
from acp_sidecar.settings import FileSettings
from acp_sidecar.settings.reading import key_problem, url_problem
from acp_sidecar.text import shown_url

ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class UsageError(Exception):
    """The flags cannot be used as given (exit status 2); the message says which to give."""


@attrs.frozen
class ConfigureOptions:
    """The flags of ``configure``, checked."""

    provider: Preset | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    api_key_stdin: bool = False
    no_api_key: bool = False
    model: str | None = None
    models: tuple[str, ...] = ()
    context_window: int | None = None
    """The default model's context window, in tokens."""
    check: bool = True
    non_interactive: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ConfigureOptions:
        """The options of a parsed command line.

        Raises:
            UsageError: a value is malformed (an unknown provider, a URL without http(s)://,
                a variable name that is not one, a window that is no whole number of tokens).
        """
        provider = getattr(args, "provider", None)
        preset = None
        if provider is not None:
            preset = PRESETS_BY_ID.get(provider)
            if preset is None:
                raise UsageError(
                    f"--provider {provider}: expected one of {', '.join(PRESETS_BY_ID)}"
                )
        base_url = _text(getattr(args, "base_url", None))
        if base_url is not None and (problem := url_problem(base_url)) is not None:
            raise UsageError(f"--base-url {shown_url(base_url)}: {problem}")
        variable = _text(getattr(args, "api_key_env", None))
        if variable is not None and not ENV_NAME.fullmatch(variable):
            raise UsageError(f"--api-key-env {variable}: expected an environment variable's name")
        window = _text(getattr(args, "context_window", None))
        tokens = None
        if window is not None:
            try:
                tokens = int(window)
            except ValueError:
                tokens = 0
            if tokens < 1:
                raise UsageError(
                    f"--context-window {window}: expected a whole number of tokens of at least 1"
                )
        return cls(
            provider=preset,
            base_url=base_url,
            api_key_env=variable,
            api_key_stdin=bool(getattr(args, "api_key_stdin", False)),
            no_api_key=bool(getattr(args, "no_api_key", False)),
            model=_text(getattr(args, "model", None)),
            models=split_names(getattr(args, "models", None) or ()),
            context_window=tokens,
            check=bool(getattr(args, "check", True)),
            non_interactive=bool(getattr(args, "non_interactive", False)),
        )


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def split_names(values: Sequence[str]) -> tuple[str, ...]:
    """Model names from ``a,b`` values (repeatable), in order, each once."""
    names = (name.strip() for value in values for name in value.split(","))
    return tuple(dict.fromkeys(name for name in names if name))


def read_stdin_key(text: str) -> KeyStored:
    """The key piped to ``--api-key-stdin`` (its first line, stripped).

    Raises:
        UsageError: standard input held no key.
    """
    lines = text.strip().splitlines()
    key = lines[0].strip() if lines else ""
    if not key:
        raise UsageError("--api-key-stdin: standard input held no key")
    if (problem := key_problem(key)) is not None:
        raise UsageError(f"--api-key-stdin: {problem}")
    return KeyStored(key)


def scripted_answers(
    options: ConfigureOptions, file: FileSettings, stdin_key: KeyStored | None = None
) -> Answers:
    """The answers the flags give, completed from the file and the preset (module
    invariants).

    Raises:
        UsageError: a needed value is given by nothing (the message names the flag).
    """
    preset = options.provider
    file_url = _file_text(file, "base_url")
    if preset is not None and preset.id == CUSTOM and options.base_url is None:
        raise UsageError("--provider custom needs --base-url URL")
    base_url = options.base_url or (preset.base_url if preset is not None else None)
    if base_url is None and preset is None:
        base_url = file_url
    if base_url is None:
        raise UsageError("say which endpoint to use: --provider NAME or --base-url URL")
    same = file_url is not None and same_endpoint(base_url, file_url)
    known = preset if preset is not None and preset.id != CUSTOM else preset_for_url(base_url)
    key: KeySource | None
    if options.api_key_env is not None:
        key = KeyFromEnv(options.api_key_env)
    elif stdin_key is not None:
        key = stdin_key
    elif options.no_api_key:
        key = NoKey()
    else:
        key = file_key(file) if same else None
        if key is None and known is not None:
            key = KeyFromEnv(known.key_env) if known.key_env else NoKey()
        if key is None and same:
            key = NoKey()  # the file names this endpoint and no key for it
    if key is None:
        raise UsageError(
            "say how the endpoint's key is found: --api-key-env NAME, --api-key-stdin or "
            "--no-api-key"
        )
    model = options.model or (_file_text(file, "model") if same else None)
    model = model or (known.model if known is not None else None)
    if model is None:
        raise UsageError("name the default model: --model NAME")
    models = options.models
    if not models and same:
        listed = file.values.get("models")
        models = tuple(str(name) for name in listed) if isinstance(listed, tuple) else ()
    described: dict[str, ModelDescription] = {}
    if options.context_window is not None:
        described[model] = ModelDescription(context=options.context_window)
    return Answers(base_url=base_url, key=key, model=model, models=models, described=described)


def _file_text(file: FileSettings, name: str) -> str | None:
    value = file.values.get(name)
    return value if isinstance(value, str) else None
