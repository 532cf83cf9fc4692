"""The ``acp-sidecar sessions`` table: titles shown as they are (markup is text), columns sized
from the rows' text (rich measuring every cell was half the cost of a big table).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

from acp_sidecar.text import harmless

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

    from acp_sidecar.store import SessionSummary

_COLUMNS: Final = (
    ("updated", "cyan", True),
    ("session id", "bold", True),
    ("title", "", False),
    ("cwd", "dim", False),
)
"""Each column's header, style, and whether it is kept on one line."""
_CHROME: Final = 3 * len(_COLUMNS) + 1
"""The cells a row takes besides its text: a border before each column and after the last,
a space each side of each cell."""
_NARROWEST: Final = 10
"""The least a wrapped column is given."""


class SessionsTable:
    """Stored sessions, one row each, in the order given (drawn as a rich table)."""

    def __init__(self, sessions: Iterable[SessionSummary]) -> None:
        self.rows: Final = [
            (
                summary.updated_at.astimezone().strftime("%Y-%m-%d %H:%M"),
                summary.session_id,
                harmless(summary.title or "(no prompt yet)"),
                harmless(summary.cwd),
            )
            for summary in sessions
        ]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        table = Table(title="Stored sessions", expand=False)
        widths = _widths(self.rows, options.max_width)
        for (header, style, one_line), width in zip(_COLUMNS, widths, strict=True):
            table.add_column(header, style=style, no_wrap=one_line, width=width)
        for row in self.rows:
            table.add_row(*(Text(text) for text in row))
        yield table


def _widths(rows: list[tuple[str, str, str, str]], room: int) -> list[int]:
    """Each column's width: its longest text, the title and the cwd narrowed to fit ``room``."""
    widths = [cell_len(header) for header, _style, _one_line in _COLUMNS]
    for row in rows:
        widths = [max(width, cell_len(text)) for width, text in zip(widths, row, strict=True)]
    updated, session_id, title, cwd = widths
    shared = room - _CHROME - updated - session_id  # what the title and the cwd may take
    if title + cwd > shared:
        half = max(_NARROWEST, shared // 2)
        if title <= half:
            cwd = max(_NARROWEST, shared - title)
        elif cwd <= half:
            title = max(_NARROWEST, shared - cwd)
        else:
            title, cwd = half, max(_NARROWEST, shared - half)
    return [updated, session_id, title, cwd]


def sessions_table(sessions: Iterable[SessionSummary]) -> SessionsTable:
    """Stored sessions, one row each, in the order given (newest first from the store)."""
    return SessionsTable(sessions)
