"""ACP v2 ``tool_call/cancel`` and ``terminal/cancel``: the client stops one call or one kept
terminal it was told it may cancel (``capabilities.cancel``); the answer is ``{}`` once the
stop is under way, and the card's final status or the terminal's exit status confirms it.
"""

from __future__ import annotations

from typing import Any

import attrs

from acp_sidecar.protocol._base import WireType

__all__ = [
    "CancelTerminalRequest",
    "CancelTerminalResponse",
    "CancelToolCallRequest",
    "CancelToolCallResponse",
]


@attrs.frozen(repr=False, eq=False)
class CancelToolCallRequest(WireType):
    """Params of ``tool_call/cancel``."""

    session_id: str
    """The session the call runs in."""
    tool_call_id: str
    """The call to stop."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class CancelToolCallResponse(WireType):
    """Result of ``tool_call/cancel``: the stop is under way."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class CancelTerminalRequest(WireType):
    """Params of ``terminal/cancel``."""

    session_id: str
    """The session the terminal belongs to."""
    terminal_id: str
    """The terminal whose process to stop."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class CancelTerminalResponse(WireType):
    """Result of ``terminal/cancel``: the stop is under way."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""
