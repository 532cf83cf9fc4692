"""The ``acp-sidecar sessions`` table: text shown as it is, columns sized as rich would."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from acp_sidecar.render.sessions import sessions_table
from acp_sidecar.store import SessionSummary

WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def summary(n: int, title: str | None, cwd: str) -> SessionSummary:
    return SessionSummary(f"s{n:05d}", cwd, title, WHEN, WHEN, "ask", Path(f"/s/s{n}.jsonl"))


SESSIONS = [
    summary(n, f"task {n}: " + "fix the failing test " * (n % 4), f"/work/project-{n % 7}")
    for n in range(40)
] + [summary(40, None, "/w")]


def drawn(table: object, width: int) -> str:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(table)
    out = console.file.getvalue()
    assert isinstance(out, str)
    return out


def richs_own(sessions: list[SessionSummary]) -> Table:
    """The table as rich sizes it itself (measuring every cell)."""
    table = Table(title="Stored sessions", expand=False)
    table.add_column("updated", style="cyan", no_wrap=True)
    table.add_column("session id", style="bold", no_wrap=True)
    table.add_column("title")
    table.add_column("cwd", style="dim")
    for s in sessions:
        updated = s.updated_at.astimezone().strftime("%Y-%m-%d %H:%M")
        table.add_row(updated, s.session_id, s.title or "(no prompt yet)", s.cwd)
    return table


def test_titles_and_directories_are_shown_as_typed_not_as_markup() -> None:
    # A prompt about rich markup: "[/]" alone made `acp-sidecar sessions` fail (MarkupError).
    odd = [summary(1, "close the [/] tag and [red]colour it", "/work/[x]")]
    out = drawn(sessions_table(odd), 200)
    assert "close the [/] tag and [red]colour it" in out and "/work/[x]" in out


@pytest.mark.parametrize("width", [200, 120, 100, 80])
def test_the_columns_are_what_rich_would_make_of_them(width: int) -> None:
    assert drawn(sessions_table(SESSIONS), width) == drawn(richs_own(SESSIONS), width)


@pytest.mark.parametrize("width", [70, 60, 50])
def test_a_narrow_terminal_wraps_the_title_and_the_cwd(width: int) -> None:
    out = drawn(sessions_table(SESSIONS), width)
    assert max(len(line) for line in out.splitlines()) <= width
    assert all(s.session_id in out for s in SESSIONS)
