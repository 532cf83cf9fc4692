"""The ACP v2 ``session/update`` kinds session set-up sends whose shape differs from v1's.

``notice`` and ``session_info_update`` have v1's shapes; a v2 connection sends the v1 values
of those (:mod:`acp_sidecar.bridge.v2.updates` decides, kind by kind).
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.v2.options import Command, ConfigOption


@attrs.frozen(repr=False, eq=False)
class AvailableCommandsUpdate(WireType):
    """Session update ``available_commands_update``: the whole list, replaced."""

    session_update: Literal["available_commands_update"] = attrs.field(
        default="available_commands_update", kw_only=True
    )
    """The tag."""
    available_commands: list[Command]
    """Every command now offered."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ConfigOptionUpdate(WireType):
    """Session update ``config_option_update``: every option, as now in force."""

    session_update: Literal["config_option_update"] = attrs.field(
        default="config_option_update", kw_only=True
    )
    """The tag."""
    config_options: list[ConfigOption]
    """The session's config options."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""
