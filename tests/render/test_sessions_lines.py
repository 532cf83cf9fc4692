"""The piped form of ``acp-sidecar sessions``: one line a session, fields that cannot break it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from acp_sidecar.render.sessions import sessions_lines
from acp_sidecar.store import SessionSummary

WHEN = datetime(2026, 1, 2, 3, 4, 5, 600000, tzinfo=UTC)


def summary(title: str | None, cwd: str) -> SessionSummary:
    return SessionSummary("s1", cwd, title, WHEN, WHEN, "ask", Path("/s/s1.jsonl"))


def test_one_line_a_session_with_tabs_and_breaks_written_escaped() -> None:
    lines = list(sessions_lines([summary("fix it", "/work/a\tb\nc\r"), summary(None, "/w")]))
    assert lines == [
        "2026-01-02T03:04:05.600000Z\ts1\tfix it\t/work/a\\tb\\nc\\r\n",
        "2026-01-02T03:04:05.600000Z\ts1\t\t/w\n",
    ]
