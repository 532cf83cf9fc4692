"""What ``configure`` decides, and the file changes that say it (the same for both ways of
answering). Writing one form of the key removes the other; no ``repr`` holds a stored key.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final, TypeAlias, assert_never

import attrs

from acp_sidecar.agent.model.config import DEFAULT_BASE_URL, ModelProfile
from acp_sidecar.settings import FileSettings
from acp_sidecar.text import shown_url

HIDDEN: Final = "<hidden>"
"""What the preview of the file shows instead of a stored key."""


@attrs.frozen
class KeyFromEnv:
    """The key is read from an environment variable when the sidecar starts."""

    variable: str


@attrs.frozen
class KeyStored:
    """The key is kept in the config file (mode 0600)."""

    value: str = attrs.field(repr=False)


@attrs.frozen
class NoKey:
    """The endpoint needs no key (a local server)."""


KeySource: TypeAlias = KeyFromEnv | KeyStored | NoKey


def key_value(key: KeySource, env: Mapping[str, str] | None = None) -> str | None:
    """The key itself, as the check sends it (``None``: none, or its variable is unset)."""
    match key:
        case KeyFromEnv(variable):
            found = (os.environ if env is None else env).get(variable, "").strip()
            return found or None
        case KeyStored(value):
            return value
        case NoKey():
            return None
        case _:
            assert_never(key)


@attrs.frozen
class ModelDescription:
    """What the user said of one model (``None``: not asked, left as the file says)."""

    context: int | None = None
    """Its context window in tokens."""
    reasoning: bool | None = None
    """Whether it takes a reasoning effort."""


@attrs.frozen
class Answers:
    """Everything ``configure`` writes."""

    base_url: str
    key: KeySource
    model: str
    """The default model."""
    models: tuple[str, ...] = ()
    """The models offered in the picker besides the default and the listing; empty: none
    named (the key is removed)."""
    described: Mapping[str, ModelDescription] = attrs.field(factory=dict)
    """Per model, what was answered of it."""


def file_changes(
    answers: Answers, file: FileSettings, *, hide_key: bool = False
) -> tuple[dict[str, object | None], dict[str, Mapping[str, object] | None]]:
    """The top-level changes and the model tables to hand to ``save_settings`` (see the
    module invariants); ``hide_key`` puts :data:`HIDDEN` where a stored key or the base URL's
    password goes (for the preview)."""
    changes: dict[str, object | None] = {
        "base_url": shown_url(answers.base_url, password=HIDDEN) if hide_key else answers.base_url,
        "model": answers.model,
        "models": _picker(answers) or None,
    }
    match answers.key:
        case KeyFromEnv(variable):
            changes |= {"api_key_env": variable, "api_key": None}
        case KeyStored(value):
            changes |= {"api_key_env": None, "api_key": HIDDEN if hide_key else value}
        case NoKey():
            changes |= {"api_key_env": None, "api_key": None}
        case _:
            assert_never(answers.key)
    profiles = {profile.name: profile for profile in file.model_info}
    tables: dict[str, Mapping[str, object] | None] = {}
    for name, description in answers.described.items():
        before = _table(profiles.get(name))
        after = _described(before, description)
        if after != before:
            tables[name] = after or None  # an empty table is removed
    return changes, tables


def _picker(answers: Answers) -> tuple[str, ...]:
    if not answers.models:
        return ()
    return tuple(dict.fromkeys((answers.model, *answers.models)))


def _table(profile: ModelProfile | None) -> dict[str, object]:
    """The model's table as the file has it (empty: none)."""
    table: dict[str, object] = {}
    if profile is None:
        return table
    if profile.context_window is not None:
        table["context"] = profile.context_window
    if profile.images:
        table["images"] = True
    if profile.reasoning_effort:
        table["reasoning"] = True
    if profile.prices is not None:
        table |= {
            "input": profile.prices.input_per_mtok,
            "output": profile.prices.output_per_mtok,
            "currency": profile.prices.currency,
        }
    return table


def _described(table: dict[str, object], description: ModelDescription) -> dict[str, object]:
    """``table`` with the answers of ``description`` in it."""
    result = dict(table)
    if description.context is not None:
        result["context"] = description.context
    if description.reasoning is True:
        result["reasoning"] = True
    elif description.reasoning is False:
        result.pop("reasoning", None)
    return result


def file_key(file: FileSettings) -> KeySource | None:
    """The key the file configures (``None``: it says nothing of a key)."""
    variable = file.values.get("api_key_env")
    if isinstance(variable, str):
        return KeyFromEnv(variable)
    if file.api_key is not None:
        return KeyStored(file.api_key)
    return None


def same_endpoint(left: str | None, right: str | None) -> bool:
    """Whether two base URLs name the same endpoint (unset is OpenAI's)."""
    return (left or DEFAULT_BASE_URL).rstrip("/") == (right or DEFAULT_BASE_URL).rstrip("/")
