"""What the user is told about the endpoint's key: where it comes from and what to do.

Invariants:
- A key is named by where it actually comes from (:attr:`ModelConfig.key_variable`): a key
  read from the environment is that variable's to set or check, never the config file's; a
  stored key is the config file's.
- Nothing here shows a key, and nothing imports ``openai``.
"""

from __future__ import annotations

from typing import Final

from acp_sidecar.agent.model.config import ModelConfig

NAME_A_KEY: Final = (
    'The config file names this endpoint but no key: add api_key_env = "NAME" (the variable '
    "that holds it), or store one with `acp-sidecar configure`."
)


def key_fix(config: ModelConfig) -> str:
    """The sentence that follows "needs an API key" (no key) or "rejected the API key"."""
    variable = config.key_variable
    if config.api_key is None:
        if variable is None:
            return NAME_A_KEY
        return f"Set {variable} in the environment acp-sidecar runs in."
    if variable is None:
        return "Check the key stored in the config file (`acp-sidecar configure` replaces it)."
    return f"Check {variable}."


def key_check_fix(config: ModelConfig) -> str:
    """The fix under a failed key check (``configure``, ``doctor``)."""
    variable = config.key_variable
    if config.api_key is None:
        if variable is None:
            return NAME_A_KEY
        return (
            f"Set {variable} to the endpoint's key in the environment your editor starts "
            "acp-sidecar in."
        )
    if variable is None:
        return "Store the right key: `acp-sidecar configure` replaces it."
    return f"Check the value of ${variable}: the endpoint refused it."
