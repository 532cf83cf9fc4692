"""A finding of a check (``configure``, ``doctor``): a frozen value of text for people, never a
secret. Standard library and attrs only, so the offline checks do not pay for ``openai``.
"""

from __future__ import annotations

from typing import Literal

import attrs

Status = Literal["ok", "failed", "skipped", "warning"]
"""What a check found: it works; it does not (``fix`` says what to do); it was not run or
does not apply (``detail`` says why); it works with a limit the user should know of."""


@attrs.frozen
class Check:
    """One finding, as ``configure`` and ``doctor`` show it."""

    name: str
    """What was checked ("reachable", "config file", "ripgrep"…)."""
    status: Status
    detail: str
    """What was seen, in a sentence."""
    fix: str | None = None
    """What to do about it (when it failed or warns)."""
