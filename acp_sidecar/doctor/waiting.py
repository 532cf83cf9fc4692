"""How long the model's answer took to begin, against the first-byte timeout: more than half is a
warning (a local server loading the model begins slowly the first time).
"""

from __future__ import annotations

import math
from typing import Final

from acp_sidecar.agent.model.config import FIRST_BYTE_TIMEOUT_ENV, ModelConfig
from acp_sidecar.checks import Check

FIRST_BYTE: Final = "first byte"

STEP_S: Final = 30
"""A suggested timeout is a multiple of this."""


def suggested_timeout(began_s: float, timeout: float) -> int:
    """A first-byte timeout with room for an answer that took ``began_s`` to begin: three
    times that, at least twice the current one, in whole steps of :data:`STEP_S`."""
    return max(STEP_S, math.ceil(max(3 * began_s, 2 * timeout) / STEP_S) * STEP_S)


def first_byte_check(config: ModelConfig, began_s: float | None) -> Check | None:
    """The finding on an answer that began after ``began_s`` (``None``: none began)."""
    if began_s is None:
        return None
    limit = config.first_byte_timeout
    if began_s <= limit / 2:
        return Check(
            FIRST_BYTE,
            "ok",
            f"The answer began after {began_s:.1f} s; acp-sidecar waits up to {limit:g} s.",
        )
    longer = suggested_timeout(began_s, limit)
    return Check(
        FIRST_BYTE,
        "warning",
        f"The answer took {began_s:.1f} s to begin: acp-sidecar gives up on an answer that "
        f"has not begun after {limit:g} s (the first-byte timeout).",
        f"Give it longer: first_byte_timeout = {longer} in the config file, "
        f"--first-byte-timeout {longer} or {FIRST_BYTE_TIMEOUT_ENV}={longer}. A local server "
        "that loads the model on first use is slow to begin until the model is loaded.",
    )
