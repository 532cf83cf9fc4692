"""The file changes ``configure``'s answers make: pure values, no file."""

from __future__ import annotations

from pathlib import Path

from acp_sidecar.agent.model.config import ModelProfile, Prices
from acp_sidecar.configure.answers import (
    HIDDEN,
    Answers,
    KeyFromEnv,
    KeyStored,
    ModelDescription,
    NoKey,
    file_changes,
    key_value,
)
from acp_sidecar.settings import ConfigLocation, FileSettings

EMPTY = FileSettings(ConfigLocation(Path("/nowhere/config.toml"), explicit=False))


def test_each_key_form_removes_the_others() -> None:
    url, model = "http://127.0.0.1:9/v1", "m"
    env, _ = file_changes(Answers(url, KeyFromEnv("K"), model), EMPTY)
    assert (env["api_key_env"], env["api_key"]) == ("K", None)
    stored, _ = file_changes(Answers(url, KeyStored("sk-1"), model), EMPTY)
    assert (stored["api_key_env"], stored["api_key"]) == (None, "sk-1")
    hidden, _ = file_changes(Answers(url, KeyStored("sk-1"), model), EMPTY, hide_key=True)
    assert hidden["api_key"] == HIDDEN
    none, _ = file_changes(Answers(url, NoKey(), model), EMPTY)
    assert (none["api_key_env"], none["api_key"]) == (None, None)


def test_the_picker_leads_with_the_default_model_or_is_removed() -> None:
    named, _ = file_changes(Answers("http://h/v1", NoKey(), "b", ("a", "b", "c")), EMPTY)
    assert named["models"] == ("b", "a", "c")
    unnamed, _ = file_changes(Answers("http://h/v1", NoKey(), "b"), EMPTY)
    assert unnamed["models"] is None


def test_a_described_model_keeps_its_other_settings() -> None:
    profile = ModelProfile(
        "m", context_window=1000, images=True, reasoning_effort=True, prices=Prices(1, 2, "EUR")
    )
    file = FileSettings(EMPTY.location, exists=True, model_info=(profile,))
    described = {
        "m": ModelDescription(context=2000, reasoning=False),
        "n": ModelDescription(context=None, reasoning=None),  # nothing answered: untouched
        "o": ModelDescription(context=500),
    }
    _, tables = file_changes(Answers("http://h/v1", NoKey(), "m", (), described), file)
    assert tables == {
        "m": {"context": 2000, "images": True, "input": 1, "output": 2, "currency": "EUR"},
        "o": {"context": 500},
    }


def test_a_table_emptied_by_the_answers_is_removed() -> None:
    file = FileSettings(
        EMPTY.location, exists=True, model_info=(ModelProfile("m", reasoning_effort=True),)
    )
    answers = Answers("http://h/v1", NoKey(), "m", (), {"m": ModelDescription(reasoning=False)})
    assert file_changes(answers, file)[1] == {"m": None}


def test_the_key_value_comes_from_its_source() -> None:
    assert key_value(KeyFromEnv("K"), {"K": " sk-2 "}) == "sk-2"
    assert key_value(KeyFromEnv("K"), {}) is None
    assert key_value(KeyStored("sk-3")) == "sk-3"
    assert key_value(NoKey()) is None
    assert "sk-3" not in repr(KeyStored("sk-3"))
