"""What a check of the endpoint found: one check per name of :data:`CHECK_NAMES`, in that order."""

from __future__ import annotations

from typing import Final

import attrs

from acp_sidecar.checks import Check

REACHABLE: Final = "reachable"
KEY: Final = "key"
MODELS_LISTED: Final = "models listed"
MODEL_ANSWERS: Final = "model answers"
STREAMING: Final = "streaming"
TOOL_CALLS: Final = "tool calls"
REASONING: Final = "reasoning"
CHECK_NAMES: Final = (
    REACHABLE,
    KEY,
    MODELS_LISTED,
    MODEL_ANSWERS,
    STREAMING,
    TOOL_CALLS,
    REASONING,
)
"""The checks of every report, in order."""


@attrs.frozen
class EndpointReport:
    """What :func:`probe_endpoint` found."""

    base_url: str
    """The API root that was checked (OpenAI's when none was given), without its credentials."""
    models: tuple[str, ...]
    """The models ``GET /models`` listed (empty when it lists none)."""
    checks: tuple[Check, ...]
    """One per :data:`CHECK_NAMES`, in that order."""
    began_s: float | None = None
    """Seconds the chat request's answer took to begin (its head read); ``None``: it did not
    begin, or no chat request was made."""

    @property
    def ok(self) -> bool:
        """No check failed."""
        return all(check.status != "failed" for check in self.checks)

    def check(self, name: str) -> Check:
        """The check called ``name``.

        Raises:
            KeyError: no check has that name (see :data:`CHECK_NAMES`).
        """
        for check in self.checks:
            if check.name == name:
                return check
        raise KeyError(name)
