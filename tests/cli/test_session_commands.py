"""``acp-sidecar sessions``, ``replay`` and ``demo`` on real stored sessions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from tests.server.wire import served
from tests.tooling import TOOLS

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, store: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_sidecar",
            *args,
            "--store",
            str(store),
            "--tools",
            "tests.tooling:TOOLS",
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100", "NO_COLOR": "1"},
    )


@pytest.fixture
async def stored(tmp_path: Path) -> tuple[Path, str, list[dict[str, object]]]:
    """A stored session, and the exact updates session/load sends for it."""
    store = tmp_path / "sessions"
    cwd = str(tmp_path / "ws")
    server = AcpServer(
        tools=ToolsProvider(builtins=False, entry_points=False, extra=TOOLS),
        store=lambda: SessionStore(store),
    )
    async with served(server) as (wire, _server):
        await wire.initialize(_meta={"terminal_output": True})
        session = await wire.new_session(cwd)
        await wire.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
        for text in (
            "what can you do?",
            '/note {"path": "app.py", "old": "a = 1\\n", "new": "a = 2\\n"}',
            '/stream {"command": "pytest -q", "lines": 3, "exit_code": 1}',
        ):
            await wire.next_response(await wire.start_prompt(session, text))
    server = AcpServer(
        tools=ToolsProvider(builtins=False, entry_points=False, extra=TOOLS),
        store=lambda: SessionStore(store),
    )
    async with served(server) as (wire, _server):
        await wire.initialize(_meta={"terminal_output": True})
        await wire.result("session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []})
        loaded = list(wire.updates)
    return store, session, loaded


def test_replay_json_is_exactly_what_session_load_sends(
    stored: tuple[Path, str, list[dict[str, object]]],
) -> None:
    store, session, loaded = stored
    done = cli("replay", session, "--json", store=store)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines == loaded
    by_path = cli("replay", str(store / f"{session}.jsonl"), "--json", store=store)
    assert by_path.stdout == done.stdout


def test_replay_renders_the_transcript(stored: tuple[Path, str, list[dict[str, object]]]) -> None:
    store, session, _loaded = stored
    done = cli("replay", session, store=store)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "what can you do?" in text
    assert "-a = 1" in text and "+a = 2" in text  # the diff card
    assert "$ pytest -q" in text and "pytest -q 2" in text and "exit 1" in text  # the terminal card


def test_sessions_lists_them_in_a_table(
    stored: tuple[Path, str, list[dict[str, object]]], tmp_path: Path
) -> None:
    store, session, _loaded = stored
    done = cli("sessions", store=store)
    assert done.returncode == 0, done.stderr
    assert session in done.stdout and "what can you do?" in done.stdout
    elsewhere = cli("sessions", "--cwd", str(tmp_path / "nowhere"), store=store)
    assert session not in elsewhere.stdout and "No stored sessions" in elsewhere.stdout


def test_replay_of_an_unknown_session_is_a_clear_error(tmp_path: Path) -> None:
    done = cli("replay", "no-such-session", store=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("acp-sidecar: ")
    assert "no-such-session" in done.stderr
    assert done.stdout == ""


def test_demo_runs_a_scripted_session(tmp_path: Path) -> None:
    done = cli("demo", store=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    for expected in (
        "Write greet.py",
        "Edit greet.py",
        "Read greet.py",
        "Hello, world!",
        "exit 0",
        "greet.py",
    ):
        assert expected in text, expected
    assert list(tmp_path.iterdir()) == []  # the demo keeps its session in a temporary store
