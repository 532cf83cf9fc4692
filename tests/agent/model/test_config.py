"""``ModelConfig``: the environment, the arguments that override it, validation."""

from __future__ import annotations

import subprocess
import sys

import pytest

from acp_sidecar.agent.model import ModelConfig


def test_no_model_anywhere_means_no_config() -> None:
    assert ModelConfig.from_env(env={"OPENAI_API_KEY": "sk"}) is None
    assert ModelConfig.from_env(env={"ACP_SIDECAR_MODEL": "  "}) is None


def test_the_environment_names_model_endpoint_and_key() -> None:
    config = ModelConfig.from_env(
        env={
            "ACP_SIDECAR_MODEL": "deepseek-chat",
            "OPENAI_BASE_URL": "https://api.deepseek.com/v1",
            "OPENAI_API_KEY": "sk-secret",
        }
    )
    assert config == ModelConfig(
        model="deepseek-chat", base_url="https://api.deepseek.com/v1", api_key="sk-secret"
    )
    assert config.endpoint_url == "https://api.deepseek.com/v1"


def test_arguments_win_over_the_environment() -> None:
    config = ModelConfig.from_env(
        model="qwen3",
        base_url="http://localhost:11434/v1",
        env={"ACP_SIDECAR_MODEL": "other", "OPENAI_BASE_URL": "https://elsewhere/v1"},
    )
    assert config is not None
    assert (config.model, config.base_url, config.api_key) == (
        "qwen3",
        "http://localhost:11434/v1",
        None,
    )


def test_defaults_and_openais_endpoint() -> None:
    config = ModelConfig(model="gpt-4.1")
    assert config.endpoint_url == "https://api.openai.com/v1"
    assert (config.max_turn_requests, config.max_parallel_tools, config.max_retries) == (25, 4, 2)


def test_the_key_stays_out_of_repr() -> None:
    assert "sk-secret" not in repr(ModelConfig(model="m", api_key="sk-secret"))


@pytest.mark.parametrize(
    "bad",
    [
        {"model": " "},
        {"model": "m", "max_turn_requests": 0},
        {"model": "m", "max_parallel_tools": 0},
        {"model": "m", "request_timeout": 0},
        {"model": "m", "max_retries": -1},
    ],
)
def test_nonsense_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        ModelConfig(**bad)  # type: ignore[arg-type]


def test_importing_the_driver_does_not_import_openai() -> None:
    code = (
        "import sys, acp_sidecar.agent.model as m; "
        "m.ModelDriver(m.ModelConfig(model='x'), lambda: None); "
        "print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
