"""``acp-sidecar sessions``, ``replay`` and ``demo`` on real stored sessions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from tests.in_process import Ran, run_cli
from tests.server.wire import served
from tests.tooling import TOOLS

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, store: Path) -> Ran:
    """``acp-sidecar --store STORE --tools tests.tooling:TOOLS ARGS``, in process."""
    return run_cli(
        # Before the subcommand, where every command takes them (sessions takes no --tools).
        *("--store", str(store), "--tools", "tests.tooling:TOOLS", *args),
        cwd=ROOT,
        env={"COLUMNS": "100", "NO_COLOR": "1"},
    )


@pytest.fixture
async def stored(tmp_path: Path) -> tuple[Path, str, list[dict[str, object]]]:
    """A stored session, and the exact updates session/load sends for it."""
    store = tmp_path / "sessions"
    (tmp_path / "ws").mkdir()  # session/new takes an existing directory only
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


async def test_sessions_no_longer_lists_a_deleted_session(
    stored: tuple[Path, str, list[dict[str, object]]],
) -> None:
    store, session, _loaded = stored
    server = AcpServer(
        tools=ToolsProvider(builtins=False, entry_points=False, extra=TOOLS),
        store=lambda: SessionStore(store),
    )
    async with served(server) as (wire, _server):
        await wire.initialize()
        assert await wire.result("session/delete", {"sessionId": session}) == {}
    done = cli("sessions", store=store)
    assert done.returncode == 0, done.stderr
    assert session not in done.stdout and "No stored sessions" in done.stdout
    replay = cli("replay", session, store=store)
    assert replay.returncode != 0 and session in replay.stderr


def test_replay_of_an_unknown_session_is_a_clear_error(tmp_path: Path) -> None:
    done = cli("replay", "no-such-session", store=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("acp-sidecar: ")
    assert "no-such-session" in done.stderr
    assert done.stdout == ""


@pytest.mark.process
def test_demo_runs_a_scripted_session_kept_in_the_store(tmp_path: Path) -> None:
    done = cli("demo", store=tmp_path)
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
    # Piped: no line padded to a width.
    assert [line for line in text.splitlines() if line != line.rstrip(" ")] == []
    # The command list arrives during the first prompt: it is not drawn in its middle...
    first_card = text.index("Write greet.py")
    assert "commands:" not in text[:first_card]
    # ...but ends the demo, with what to try next.
    ending = text[text.index("end of the demo") :]
    for expected in ("/read /write /edit /bash /grep /glob", "acp-sidecar configure", "replay"):
        assert expected in ending, expected
    (log,) = tmp_path.glob("*.jsonl")  # --store keeps the demo's session, to replay later
    replayed = cli("replay", log.stem, store=tmp_path)
    assert replayed.returncode == 0 and "Hello, world!" in replayed.stdout
    assert [line for line in replayed.stdout.splitlines() if line != line.rstrip(" ")] == []


def test_replay_json_for_a_client_without_terminal_cards(
    stored: tuple[Path, str, list[dict[str, object]]],
) -> None:
    store, session, _loaded = stored
    done = cli("replay", session, "--json", "--no-terminal-output", store=store)
    assert done.returncode == 0, done.stderr
    updates = [json.loads(line)["params"]["update"] for line in done.stdout.splitlines()]
    assert all("_meta" not in u for u in updates)
    final = [u for u in updates if u.get("status") == "failed"][-1]  # it exited 1
    assert final["content"][0]["content"]["text"].startswith("```console\npytest -q 0")


def test_a_tool_that_is_no_longer_registered_replays_as_a_generic_card(
    stored: tuple[Path, str, list[dict[str, object]]],
) -> None:
    store, session, loaded = stored
    # no --tools: the test tools are gone
    done = run_cli("replay", session, "--json", "--store", str(store), cwd=ROOT)
    assert done.returncode == 0, done.stderr
    cards = [json.loads(line)["params"]["update"] for line in done.stdout.splitlines()]
    starts = [u for u in cards if u["sessionUpdate"] == "tool_call"]
    live = [u["params"]["update"] for u in loaded]  # type: ignore[index]
    shown = [(u["title"], u["kind"]) for u in live if u["sessionUpdate"] == "tool_call"]
    assert [(u["title"], u["kind"]) for u in starts] == shown  # as the editor showed them
    assert not any("content" in u for u in starts)  # a generic card: the title and the input
    assert starts[0]["rawInput"]["path"] == "app.py"
    assert [u["status"] for u in cards if u.get("status") in ("completed", "failed")] == [
        "completed",
        "completed",
    ]


def test_tools_lists_every_tool_with_its_schema(tmp_path: Path) -> None:
    done = cli("tools", "--json", store=tmp_path)
    assert done.returncode == 0, done.stderr
    schemas = {tool["name"]: tool for tool in json.loads(done.stdout)}
    assert {"read", "write", "edit", "bash", "grep", "glob", "note", "stream", "look"} <= set(
        schemas
    )
    assert schemas["note"]["parameters"]["required"] == ["path"]
    assert set(schemas["read"]) == {"name", "description", "parameters"}
    text = cli("tools", store=tmp_path)
    assert "note\n  Pretend to edit a file (a diff card).\n  parameters:" in text.stdout


def test_a_tool_module_that_fails_to_load_is_reported_skipped_and_fails_the_listing(
    tmp_path: Path,
) -> None:
    (tmp_path / "broken_tools.py").write_text("import json\n\nTOOLS = json.loads('{')\n")
    done = run_cli(
        *("tools", "--json", "--tools", "no_such_module:TOOLS", "--tools", "broken_tools:TOOLS"),
        *("--log-level", "DEBUG"),
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert "no_such_module" in done.stderr
    assert "broken_tools:TOOLS: cannot import broken_tools: JSONDecodeError" in done.stderr
    assert f"(at {tmp_path / 'broken_tools.py'}:3)" in done.stderr
    assert "Traceback (most recent call last)" in done.stderr
    assert 'broken_tools.py", line 3, in <module>' in done.stderr
    assert "read" in {tool["name"] for tool in json.loads(done.stdout)}


@pytest.mark.process
def test_a_tool_module_in_the_current_directory_loads(tmp_path: Path) -> None:
    (tmp_path / "my_tools.py").write_text(
        "from acp_sidecar.tools import define_tool\n"
        "async def hello(args, execution):\n    return 'hi'\n"
        "TOOLS = [define_tool(name='hello', description='Say hi.', parameters={}, execute=hello)]\n"
    )
    script = Path(sys.executable).with_name("acp-sidecar")
    done = subprocess.run(
        [str(script), "tools", "--json", "--tools", "my_tools:TOOLS"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "hello" in {tool["name"] for tool in json.loads(done.stdout)}
