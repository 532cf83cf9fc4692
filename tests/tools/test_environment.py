"""The environment of child processes: the sidecar's, without its secrets."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from acp_sidecar.agent.model.config import API_KEY_ENV
from acp_sidecar.tools import environment
from acp_sidecar.tools.environment import (
    SECRET_VARIABLES,
    ChildEnvironment,
    child_environment,
    configure_child_environment,
)

KEY = "sk-test-0123456789abcdef"


@pytest.fixture(autouse=True)
def unconfigured() -> Iterator[None]:
    saved = environment._configured
    environment._configured = None
    yield
    environment._configured = saved


def test_the_model_key_variable_is_a_secret() -> None:
    assert API_KEY_ENV in SECRET_VARIABLES


def test_secrets_and_copies_of_their_values_are_left_out() -> None:
    env = {
        "PATH": "/usr/bin",
        "OPENAI_API_KEY": KEY,
        "DEEPSEEK_API_KEY": KEY,  # the key came from here
        "PROXY_URL": f"https://x:{KEY}@proxy",
        "GITHUB_TOKEN": "ghp_user_token_for_gh",  # the user's own: kept
    }
    assert child_environment(env) == {"PATH": "/usr/bin", "GITHUB_TOKEN": "ghp_user_token_for_gh"}


def test_a_short_placeholder_key_is_hidden_by_name_only() -> None:
    env = {"OPENAI_API_KEY": "none", "MODE": "none"}
    assert child_environment(env) == {"MODE": "none"}


def test_passed_through_names_are_kept_from_the_flag_or_the_environment() -> None:
    env = {"OPENAI_API_KEY": KEY, "DEEPSEEK_API_KEY": KEY, "ACP_SIDECAR_PASS_ENV": "X, Y"}
    rules = ChildEnvironment.from_env(env, pass_env=["OPENAI_API_KEY"])
    assert rules.passed == {"OPENAI_API_KEY", "X", "Y"}
    assert rules.build(env) == env  # a value the user passed through is no longer hidden
    assert ChildEnvironment.from_env({"ACP_SIDECAR_PASS_ENV": "OPENAI_API_KEY"}).passed == {
        "OPENAI_API_KEY"
    }


def test_configured_secrets_and_rules_apply_to_every_child() -> None:
    configure_child_environment(ChildEnvironment.from_env({}, secrets=["MY_ENDPOINT_TOKEN"]))
    env = {"OPENAI_API_KEY": KEY, "MY_ENDPOINT_TOKEN": "tok-abcdefgh", "HOME": "/home/u"}
    assert child_environment(env) == {"HOME": "/home/u"}
