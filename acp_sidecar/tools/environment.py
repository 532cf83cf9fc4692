"""The environment of every process the sidecar starts: its own, minus its secrets.

Left out: the credential variables and any variable whose value holds one of their values;
``--pass-env`` names are kept. It keeps secrets from leaking by accident; it is no sandbox.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Final

import attrs

SECRET_VARIABLES: Final = frozenset({"OPENAI_API_KEY"})
"""The variables the sidecar reads its own credentials from (the model endpoint's key)."""

PASS_ENV_ENV: Final = "ACP_SIDECAR_PASS_ENV"
"""Names of secret variables the user lets child processes see (commas or spaces between)."""

MIN_SECRET_CHARS: Final = 8
"""Secret values at least this long are also hidden wherever else they appear."""


def _frozen(names: Iterable[str]) -> frozenset[str]:
    return frozenset(names)


def _names(values: Iterable[str]) -> frozenset[str]:
    return frozenset(name for value in values for name in re.split(r"[,\s]+", value) if name)


@attrs.frozen
class ChildEnvironment:
    """Which variables child processes must not see, and which the user passes through."""

    secrets: frozenset[str] = attrs.field(default=SECRET_VARIABLES, converter=_frozen)
    """Variables holding the sidecar's secrets."""
    passed: frozenset[str] = attrs.field(default=frozenset(), converter=_frozen)
    """Secret variables the user lets through anyway."""

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        pass_env: Iterable[str] = (),
        secrets: Iterable[str] = (),
    ) -> ChildEnvironment:
        """The rules for a sidecar configured with ``secrets`` (beyond
        :data:`SECRET_VARIABLES`) and ``pass_env`` (beyond ``ACP_SIDECAR_PASS_ENV`` in
        ``env``, default ``os.environ``)."""
        source = os.environ if env is None else env
        return cls(
            secrets=SECRET_VARIABLES | frozenset(secrets),
            passed=_names(pass_env) | _names([source.get(PASS_ENV_ENV, "")]),
        )

    def build(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` without the secrets (see the module invariants)."""
        hidden = self.secrets - self.passed
        values = [
            value
            for name, value in env.items()
            if name in hidden and len(value) >= MIN_SECRET_CHARS
        ]
        return {
            name: value
            for name, value in env.items()
            if name in self.passed
            or (name not in hidden and not any(secret in value for secret in values))
        }


_configured: ChildEnvironment | None = None


def configure_child_environment(rules: ChildEnvironment) -> None:
    """Set the rules every child process's environment is built with (once, at start-up)."""
    global _configured
    _configured = rules


def child_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment to start a child process with: ``env`` (default ``os.environ``)
    without the sidecar's secrets."""
    source = os.environ if env is None else env
    rules = _configured if _configured is not None else ChildEnvironment.from_env(source)
    return rules.build(source)
