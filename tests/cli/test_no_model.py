"""``--no-model`` (and ``--model ''``): the console answers in this run, whatever the config
file, the environment or the other options name; a changed file does not bring a model back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.cli import build_parser, with_config_file
from acp_sidecar.server.settings import ServeSettings

MODELS = {
    "ACP_SIDECAR_MODEL": "env-model",
    "ACP_SIDECAR_MODELS": "a,b",
    "ACP_SIDECAR_MODEL_INFO": "c:context=1000",
    "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    "OPENAI_API_KEY": "sk-from-the-shell",
}


def settings(config: Path, *argv: str) -> ServeSettings:
    return ServeSettings.from_args(
        with_config_file(build_parser().parse_args(["--config", str(config), *argv]))
    )


@pytest.fixture
def configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config file and an environment that both name a model."""
    for name, value in MODELS.items():
        monkeypatch.setenv(name, value)
    config = tmp_path / "config.toml"
    config.write_text('model = "file-model"\nmodels = ["x", "y"]\n[model_info."z"]\ncontext = 9\n')
    return config


def test_the_configured_model_answers_without_the_flag(configured: Path) -> None:
    live = settings(configured).live
    assert live.model is not None and live.model.model == "env-model"


@pytest.mark.parametrize("argv", [("--no-model",), ("--model", ""), ("serve", "--no-model")])
def test_no_model_means_the_console_whatever_is_configured(
    configured: Path, argv: tuple[str, ...]
) -> None:
    serving = settings(configured, *argv)
    assert (serving.live.model, serving.live.model_problem) == (None, None)
    assert serving.driver_factory(ToolsProvider(builtins=False, entry_points=False)) is None


def test_a_changed_config_file_does_not_bring_the_model_back(configured: Path) -> None:
    serving = settings(configured, "--no-model")
    configured.write_text('model = "another-model"\n')
    os.utime(configured, (1, 1))  # a stamp of its own, however fast the rewrite
    serving.refresh()
    assert serving.live.model is None


def test_no_model_wins_over_a_model_on_the_same_command_line(configured: Path) -> None:
    assert settings(configured, "--model", "m", "--no-model").live.model is None
