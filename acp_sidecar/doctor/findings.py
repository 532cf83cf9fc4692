"""What doctor finds: one check and the section it is shown in (shared by the checks and
their output, so neither imports the other)."""

from __future__ import annotations

from typing import Literal

import attrs

from acp_sidecar.checks import Check

Section = Literal["config", "model", "endpoint", "machine"]
"""Where a finding belongs: the config file, the model settings and key, the endpoint's
answers, this machine (ripgrep, the store)."""


@attrs.frozen
class Finding:
    """One check and the section it is shown in."""

    section: Section
    check: Check
