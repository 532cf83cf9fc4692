"""``acp-sidecar sessions``: a table in a terminal, one tab-separated line a session when piped."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
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


_UNSEPARATED = str.maketrans({"\t": "\\t", "\n": "\\n", "\r": "\\r"})
"""A field holds no tab or line break (a directory's name may): they are written escaped."""


def sessions_lines(sessions: Iterable[SessionSummary]) -> Iterator[str]:
    """Stored sessions, one line each (``\\n`` included), in the order given: the last update
    (ISO 8601 UTC), the id, the title (empty without one) and the cwd, tab-separated -- what a
    script reads, and as quick to write for ten thousand sessions as for one."""
    from acp_sidecar.store import format_timestamp

    for summary in sessions:
        fields = (
            format_timestamp(summary.updated_at),
            summary.session_id,
            summary.title or "",
            summary.cwd,
        )
        yield "\t".join(field.translate(_UNSEPARATED) for field in fields) + "\n"
