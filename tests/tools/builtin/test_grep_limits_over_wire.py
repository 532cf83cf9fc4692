"""``grep``'s Python engine under hostile input, driven as found: a sidecar subprocess where
its memory is measured, else in process.

- A catastrophically backtracking pattern froze every session (``re`` holds the GIL) and
  ``session/cancel`` waited for it. Now other sessions are served at once, cancel ends the
  turn at once (the search thread stops at its next line: tests/tools/builtin/test_grep.py).
- A file with one line of 48 MiB was read whole, in a loop that copied it again per block.
  Now the line is searched in its first ``MAX_LINE_BYTES`` (8 MiB), in bounded memory.

The sidecar gets a ``PATH`` without ripgrep (linear-time) so the Python engine runs.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.procfs import peak_rss
from tests.server.wire import WireClient
from tests.tools.builtin.sidecar import open_session, run, served_sidecar, sidecar, text_of

REDOS_PATTERN = "(a|a)+$"
"""Exponential in a backtracking engine: each extra ``a`` doubles the work."""
REDOS_LENGTH = 30
"""Enough ``a``s that the old engine (``re``, holding the GIL) froze the server for minutes."""


async def start_turn_and_wait_for_card(wire: WireClient, session: str, text: str) -> Any:
    """Start a prompt and read until its tool card is open (the tool is running)."""
    msg_id = await wire.start_prompt(session, text)
    while True:
        update = await wire.next_update(timeout=10)
        if update["params"]["update"]["sessionUpdate"] == "tool_call":
            return msg_id


async def test_a_redos_grep_freezes_no_other_session_and_cancel_stops_it(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    # Four bad lines: the new engine spends 2 s on them (0.5 s each) before it finishes.
    (workspace / "bad.txt").write_text(("a" * REDOS_LENGTH + "!\n") * 4)
    async with served_sidecar(tmp_path) as (wire, _server):
        slow = await open_session(wire, workspace)
        other = await open_session(wire, workspace)
        msg_id = await start_turn_and_wait_for_card(
            wire, slow, f'/grep {{"pattern": "{REDOS_PATTERN}"}}'
        )
        await asyncio.sleep(0.3)  # the match is under way
        # Another session is served while the match runs (the old engine held the GIL for
        # minutes): its answer comes before the grep's turn ends (``next_response`` fails on
        # any other response first).
        asked = await wire.send_request(
            "session/set_mode", {"sessionId": other, "modeId": "read-only"}
        )
        await wire.next_response(asked, timeout=60)
        # Cancel ends the turn before the search would have (``end_turn``)...
        await wire.notify("session/cancel", {"sessionId": slow})
        response = await wire.next_response(msg_id, timeout=60)
        assert response["result"]["stopReason"] == "cancelled", response
        # (That the search thread itself stops at the next line is pinned in process:
        # test_grep.py, test_a_cancel_stops_a_slow_search_at_the_next_line.)
        # The server goes on serving the session that was cancelled.
        card = await run(wire, slow, '/glob {"pattern": "*.txt"}')
        assert text_of(card) == "bad.txt"


async def test_a_pattern_too_slow_on_every_line_gives_up_with_a_clear_error(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "bad.txt").write_text(("a" * REDOS_LENGTH + "!\n") * 7)
    async with served_sidecar(tmp_path) as (wire, _server):
        session = await open_session(wire, workspace)
        card = await run(wire, session, f'/grep {{"pattern": "{REDOS_PATTERN}"}}', timeout=30)
        assert card["status"] == "failed"
        text = text_of(card)
        assert "bad.txt:1, bad.txt:2, bad.txt:3, bad.txt:4, bad.txt:5)" in text
        assert "backtracks catastrophically" in text


LONG_LINE_BYTES = 48 * 1024 * 1024


@pytest.mark.process
async def test_a_48_mib_line_is_searched_in_bounded_memory(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with open(workspace / "long.txt", "wb") as f:
        f.write(b"needle at the start ")
        block = b"x" * (1024 * 1024)
        for _ in range(LONG_LINE_BYTES // len(block)):
            f.write(block)
        f.write(b" needle past the cap\nthe needle on line two\n")
    async with sidecar(tmp_path) as (wire, process):
        session = await open_session(wire, workspace)
        await run(wire, session, '/glob {"pattern": "*"}')  # the baseline: everything loaded
        baseline = peak_rss(process.pid)
        card = await run(wire, session, '/grep {"pattern": "needle"}', timeout=60)
        grown = peak_rss(process.pid) - baseline
        assert card["status"] == "completed", card
        # The old engine held the line at least twice over (bytes, then text); now a few
        # copies of the 8 MiB searched.
        assert grown < LONG_LINE_BYTES, grown
        text = text_of(card)
        assert "1: needle at the start xxx" in text
        assert "[line cut: longer than 8,388,608 bytes" in text
        assert "2: the needle on line two" in text
        assert "[1 line longer than" in text
