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


def test_the_loop_limits_come_from_the_environment() -> None:
    config = ModelConfig.from_env(
        env={
            "ACP_SIDECAR_MODEL": "m",
            "ACP_SIDECAR_MAX_TURN_REQUESTS": " 7 ",
            "ACP_SIDECAR_MAX_PARALLEL_TOOLS": "2",
        }
    )
    assert config is not None
    assert (config.max_turn_requests, config.max_parallel_tools) == (7, 2)


def test_limit_arguments_win_over_the_environment() -> None:
    config = ModelConfig.from_env(
        max_turn_requests=3,
        max_parallel_tools=1,
        env={
            "ACP_SIDECAR_MODEL": "m",
            "ACP_SIDECAR_MAX_TURN_REQUESTS": "7",
            "ACP_SIDECAR_MAX_PARALLEL_TOOLS": "not a number",  # not read: the argument wins
        },
    )
    assert config is not None
    assert (config.max_turn_requests, config.max_parallel_tools) == (3, 1)


def test_unset_or_blank_limits_keep_the_defaults() -> None:
    env = {"ACP_SIDECAR_MODEL": "m", "ACP_SIDECAR_MAX_PARALLEL_TOOLS": "  "}
    config = ModelConfig.from_env(env=env)
    assert config is not None
    assert (config.max_turn_requests, config.max_parallel_tools) == (25, 4)


@pytest.mark.parametrize("text", ["0", "-2", "many", "2.5", "1e3"])
@pytest.mark.parametrize(
    "variable", ["ACP_SIDECAR_MAX_TURN_REQUESTS", "ACP_SIDECAR_MAX_PARALLEL_TOOLS"]
)
def test_a_bad_limit_in_the_environment_is_refused_clearly(variable: str, text: str) -> None:
    with pytest.raises(ValueError) as caught:
        ModelConfig.from_env(env={"ACP_SIDECAR_MODEL": "m", variable: text})
    assert str(caught.value) == f"{variable} must be a whole number of at least 1, not {text!r}"


@pytest.mark.parametrize("value", [0, -1, True, 2.0, "3"])
@pytest.mark.parametrize("name", ["max_turn_requests", "max_parallel_tools"])
def test_a_bad_limit_argument_is_refused_clearly(name: str, value: object) -> None:
    with pytest.raises(ValueError) as caught:
        ModelConfig.from_env("m", env={}, **{name: value})  # type: ignore[arg-type]
    assert str(caught.value) == f"{name} must be a whole number of at least 1, not {value!r}"


def test_a_bad_limit_is_refused_even_without_a_model() -> None:
    with pytest.raises(ValueError, match="ACP_SIDECAR_MAX_TURN_REQUESTS"):
        ModelConfig.from_env(env={"ACP_SIDECAR_MAX_TURN_REQUESTS": "0"})


def test_the_token_cap_comes_from_the_argument_the_environment_or_the_default() -> None:
    def cap(env: dict[str, str], given: int | None = None) -> int | None:
        config = ModelConfig.from_env("m", env=env, max_tokens=given)
        assert config is not None
        return config.max_tokens

    assert cap({}) == 8192
    assert cap({"ACP_SIDECAR_MAX_TOKENS": " 2048 "}) == 2048
    assert cap({"ACP_SIDECAR_MAX_TOKENS": "0"}) is None  # 0: no cap is sent
    assert cap({"ACP_SIDECAR_MAX_TOKENS": "2048"}, given=100) == 100
    assert cap({"ACP_SIDECAR_MAX_TOKENS": "2048"}, given=0) is None


@pytest.mark.parametrize("text", ["-1", "lots", "1.5"])
def test_a_bad_token_cap_is_refused_clearly(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        ModelConfig.from_env(env={"ACP_SIDECAR_MAX_TOKENS": text})
    assert str(caught.value) == (
        f"ACP_SIDECAR_MAX_TOKENS must be a whole number of at least 0, not {text!r}"
    )
    with pytest.raises(ValueError, match="max_tokens must be a whole number of at least 0"):
        ModelConfig.from_env("m", env={}, max_tokens=-1)


def test_the_first_byte_timeout_comes_from_the_argument_the_environment_or_the_default() -> None:
    def waited(env: dict[str, str], given: float | None = None) -> float:
        config = ModelConfig.from_env("m", env=env, first_byte_timeout=given)
        assert config is not None
        return config.first_byte_timeout

    assert waited({}) == 30.0
    assert waited({"ACP_SIDECAR_FIRST_BYTE_TIMEOUT": " 120 "}) == 120.0
    assert waited({"ACP_SIDECAR_FIRST_BYTE_TIMEOUT": "120"}, given=2.5) == 2.5


@pytest.mark.parametrize("text", ["0", "-1", "soon", "inf", "nan"])
def test_a_bad_first_byte_timeout_is_refused_clearly(text: str) -> None:
    with pytest.raises(ValueError) as caught:
        ModelConfig.from_env(env={"ACP_SIDECAR_FIRST_BYTE_TIMEOUT": text})
    assert str(caught.value) == (
        f"ACP_SIDECAR_FIRST_BYTE_TIMEOUT must be a positive number of seconds, not {text!r}"
    )
    with pytest.raises(ValueError, match="first_byte_timeout must be a positive number"):
        ModelConfig.from_env("m", env={}, first_byte_timeout=0.0)


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
        {"model": "m", "max_tokens": 0},
    ],
)
def test_nonsense_is_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        ModelConfig(**bad)  # type: ignore[arg-type]


@pytest.mark.process
def test_importing_the_driver_does_not_import_openai() -> None:
    code = (
        "import sys, acp_sidecar.agent.model as m; "
        "m.ModelDriver(m.ModelConfig(model='x'), lambda: None); "
        "print('openai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
