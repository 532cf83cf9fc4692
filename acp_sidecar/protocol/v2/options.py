"""What a v2 session offers the client: its config options and its commands.

v2 renamed the option's ``id`` to ``configId`` and tags a command (``command``) and its input
(``text``); otherwise these are v1's.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.session import SessionConfigOptionCategory, SessionConfigSelectOption

__all__ = [
    "Command",
    "ConfigOption",
    "SessionConfigBoolean",
    "SessionConfigSelect",
    "SessionConfigSelectOption",
    "TextCommandInput",
]


@attrs.frozen(repr=False, eq=False)
class SessionConfigSelect(WireType):
    """A config option picked from a list of values."""

    type: Literal["select"] = attrs.field(default="select", kw_only=True)
    """The tag, always ``"select"``."""
    config_id: str
    """The option's id, sent back in ``session/set_config_option``."""
    name: str
    """Human-readable name."""
    current_value: str
    """The value now in force (one of ``options``)."""
    options: list[SessionConfigSelectOption]
    """The values to pick from (at least one)."""
    description: str | None = None
    """What the option does."""
    category: SessionConfigOptionCategory | None = None
    """``mode``, ``model``, ``thought_level``, … (a client may place it by this)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionConfigBoolean(WireType):
    """A config option that is on or off."""

    type: Literal["boolean"] = attrs.field(default="boolean", kw_only=True)
    """The tag, always ``"boolean"``."""
    config_id: str
    """The option's id."""
    name: str
    """Human-readable name."""
    current_value: bool
    """Whether it is on."""
    description: str | None = None
    """What the option does."""
    category: SessionConfigOptionCategory | None = None
    """Where a client may place it."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


ConfigOption: TypeAlias = SessionConfigSelect | SessionConfigBoolean
"""A v2 config option (closed: one class per kind we send)."""


@attrs.frozen(repr=False, eq=False)
class TextCommandInput(WireType):
    """A command that takes free text after its name."""

    type: Literal["text"] = attrs.field(default="text", kw_only=True)
    """The tag, always ``"text"``."""
    hint: str
    """What to type, shown while the input is empty."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class Command(WireType):
    """A slash command the session offers (v2 tags it ``command``)."""

    type: Literal["command"] = attrs.field(default="command", kw_only=True)
    """The tag, always ``"command"``."""
    name: str
    """The name typed after ``/``."""
    description: str
    """What it does."""
    input: TextCommandInput | None = None
    """The input it takes; ``None``: none."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""
