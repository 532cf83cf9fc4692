"""The ``acp-sidecar sessions`` table."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.table import Table

if TYPE_CHECKING:
    from acp_sidecar.store import SessionSummary


def sessions_table(sessions: Iterable[SessionSummary]) -> Table:
    """Stored sessions, one row each, in the order given (newest first from the store)."""
    table = Table(title="Stored sessions", expand=False)
    table.add_column("updated", style="cyan", no_wrap=True)
    table.add_column("session id", style="bold", no_wrap=True)
    table.add_column("title")
    table.add_column("cwd", style="dim")
    for summary in sessions:
        updated = summary.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
        table.add_row(updated, summary.session_id, summary.title or "(no prompt yet)", summary.cwd)
    return table
