"""Callback types the MCP modules share, kept apart from the SDK.

Importing this module imports neither the ``mcp`` SDK nor any other module of this package,
so code that only names these types (a test double, a protocol) stays light.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeAlias

ProgressCallback: TypeAlias = Callable[[float, float | None, str | None], Awaitable[None]]
"""``(progress, total, message)`` of one MCP progress notification, as a tool call reports
them (``total`` and ``message`` are ``None`` when the server gave none)."""

__all__ = ["ProgressCallback"]
