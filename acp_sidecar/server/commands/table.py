"""The session's commands: adding one is one entry in :data:`SESSION_COMMANDS`."""

from __future__ import annotations

from typing import Final

from acp_sidecar.server.commands.base import SessionCommand
from acp_sidecar.server.commands.export import export

SESSION_COMMANDS: Final[tuple[SessionCommand, ...]] = (
    SessionCommand(
        name="export",
        description="Write this session's transcript beside its log (HTML; `md`: Markdown).",
        hint="md for Markdown (default: HTML)",
        handler=export,
    ),
)
"""Every session command, in the order the editor lists them (after a console's tools)."""
