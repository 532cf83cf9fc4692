"""Callback types the MCP modules share; importing this imports neither the SDK nor this package."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeAlias

ProgressCallback: TypeAlias = Callable[[float, float | None, str | None], Awaitable[None]]
"""``(progress, total, message)`` of one MCP progress notification, as a tool call reports
them (``total`` and ``message`` are ``None`` when the server gave none)."""

__all__ = ["ProgressCallback"]
