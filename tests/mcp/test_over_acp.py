"""MCP servers named by the editor, end to end: the official ACP SDK client drives
``acp-sidecar`` (the console driver; in process unless the test is about the sidecar's
process) and names real MCP servers in ``session/new``; every message the sidecar writes is
checked against the ACP schema (:class:`tests.sdk.Wire`).

Peers: :mod:`tests.mcp.wire_peer` (built with the MCP SDK's server side) and the PyPI
reference servers ``mcp-server-time`` and ``mcp-server-git``, started as a user would.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import ClientCapabilities, ElicitationCapabilities, ElicitationFormCapabilities

from tests.in_process import sdk_served
from tests.mcp.conftest import git_program
from tests.mcp.over_acp import (
    PEER,
    McpEditor,
    alive,
    bare_sidecar,
    console_script,
    descendants,
    peer,
)
from tests.sdk import ROOT, prompt, sdk_sidecar


def command(tool: str, /, **arguments: Any) -> str:
    return f"/{tool} {json.dumps(arguments)}"


def texts(card: dict[str, Any]) -> str:
    """The text of a card's content blocks."""
    return "".join(
        c["content"].get("text", "") for c in card.get("content") or () if c["type"] == "content"
    )


@pytest.mark.process
async def test_new_session_lists_the_servers_tools_as_commands(tmp_path: Path) -> None:
    editor = McpEditor()
    servers = [peer(tmp_path / "peer"), console_script("mcp-server-time", "time")]
    async with sdk_served(editor, store=tmp_path / "store") as (connection, wire):
        init = wire.initialized.agent_capabilities.mcp_capabilities
        assert init.http is True
        await connection.new_session(cwd=str(tmp_path), mcp_servers=servers)
        await editor.until(lambda: editor.commands)
        menu = editor.commands[-1]
        assert {"mcp__peer__echo", "mcp__peer__touch", "mcp__time__get_current_time"} <= set(menu)
        assert "read" in menu  # the built-in tools stay
        assert menu["mcp__peer__echo"] == "Return the text."  # first sentence only
        assert editor.said == []  # nothing went wrong
        assert wire.checked > 0


@pytest.mark.process
async def test_calls_draw_cards_and_ask_only_for_tools_that_may_change_things(
    tmp_path: Path,
) -> None:
    editor = McpEditor()
    state = tmp_path / "peer"
    servers = [peer(state), console_script("mcp-server-time", "time")]
    async with sdk_sidecar(editor, store=tmp_path / "store") as (connection, wire):
        session = (await connection.new_session(cwd=str(tmp_path), mcp_servers=servers)).session_id

        wire.cards()
        assert (
            await prompt(connection, session, command("mcp__peer__echo", text="hi")) == "end_turn"
        )
        start, *_, final = wire.cards()
        assert start["sessionUpdate"] == "tool_call" and start["rawInput"] == {"text": "hi"}
        assert final["status"] == "completed" and texts(final) == "hi"
        assert editor.asked == []  # read-only and closed-world: runs without asking

        time_call = command("mcp__time__get_current_time", timezone="UTC")
        assert await prompt(connection, session, time_call) == "end_turn"
        final = wire.cards()[-1]
        assert final["status"] == "completed" and "UTC" in texts(final)

        assert await prompt(connection, session, command("mcp__peer__touch", name="made")) == (
            "end_turn"
        )
        final = wire.cards()[-1]
        assert len(editor.asked) == 1  # no annotations: asked in ask mode
        assert final["status"] == "completed" and (state / "made").exists()

        await connection.set_session_mode(session_id=session, mode_id="read-only")
        assert await prompt(connection, session, command("mcp__peer__touch", name="no")) == (
            "end_turn"
        )
        assert wire.cards()[-1]["status"] == "failed"
        assert not (state / "no").exists()


@pytest.mark.process
async def test_git_server_on_a_temporary_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run([git_program(), "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "a.txt").write_text("a\n")
    editor = McpEditor()
    server = console_script("mcp-server-git", "git", "--repository", str(repo))
    async with sdk_served(editor, store=tmp_path / "store") as (connection, wire):
        session = (await connection.new_session(cwd=str(repo), mcp_servers=[server])).session_id
        await editor.until(lambda: editor.commands)
        assert "mcp__git__git_status" in editor.commands[-1]
        wire.cards()
        call = command("mcp__git__git_status", repo_path=str(repo))
        assert await prompt(connection, session, call) == "end_turn"
        final = wire.cards()[-1]
        assert final["status"] == "completed"
        assert "a.txt" in texts(final)


@pytest.mark.process
async def test_cancel_mid_call_reaches_the_server_and_fails_the_card(tmp_path: Path) -> None:
    editor = McpEditor()
    state = tmp_path / "peer"
    async with sdk_served(editor, store=tmp_path / "store") as (connection, wire):
        session = (
            await connection.new_session(cwd=str(tmp_path), mcp_servers=[peer(state)])
        ).session_id
        wire.cards()
        running = asyncio.ensure_future(prompt(connection, session, "/mcp__peer__slow"))
        async with asyncio.timeout(10):
            while not any(u.get("status") == "in_progress" for u in wire.updates):
                await asyncio.sleep(0.02)
        await connection.cancel(session_id=session)
        assert await asyncio.wait_for(running, 10) == "cancelled"
        assert wire.cards()[-1]["status"] == "failed"
        async with asyncio.timeout(30):  # a hang guard
            while not (state / "cancelled").exists():
                await asyncio.sleep(0.05)


@pytest.mark.process
async def test_problems_are_told_after_the_answer_and_the_session_still_works(
    tmp_path: Path,
) -> None:
    editor = McpEditor()
    servers = [
        peer(tmp_path / "peer"),
        peer(tmp_path / "twin", name="peer"),  # the same name again
        acp.schema.McpServerStdio(name="relative", command="python3", args=[], env=[]),
        acp.schema.McpServerStdio(
            name="missing", command=str(tmp_path / "no-such-server"), args=[], env=[]
        ),
    ]
    async with sdk_served(editor, store=tmp_path / "store") as (connection, _wire):
        session = (await connection.new_session(cwd=str(tmp_path), mcp_servers=servers)).session_id
        await editor.until(lambda: editor.commands and editor.said)
        told = "".join(editor.said)
        for name in ("'peer'", "relative", "missing"):
            assert name in told, told
        assert "mcp__peer__echo" in editor.commands[-1]
        assert await prompt(connection, session, command("mcp__peer__echo", text="x")) == (
            "end_turn"
        )
    # The log kept what the user was told (as a notice), so a load shows it again.
    reloaded = McpEditor()
    async with sdk_served(reloaded, store=tmp_path / "store") as (connection, _wire):
        await connection.load_session(cwd=str(tmp_path), session_id=session, mcp_servers=[])
        assert told in "".join(reloaded.said)


@pytest.mark.process
async def test_roots_are_the_session_cwd(tmp_path: Path) -> None:
    editor = McpEditor()
    async with sdk_served(editor, store=tmp_path / "store") as (connection, wire):
        session = (
            await connection.new_session(cwd=str(tmp_path), mcp_servers=[peer(tmp_path / "p")])
        ).session_id
        wire.cards()
        assert await prompt(connection, session, "/mcp__peer__roots") == "end_turn"
        assert texts(wire.cards()[-1]) == tmp_path.as_uri()


@pytest.mark.process
async def test_elicitation_is_forwarded_when_the_editor_advertises_it(tmp_path: Path) -> None:
    editor = McpEditor(elicit={"branch": "main"})
    capabilities = ClientCapabilities(
        elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
    )
    async with sdk_served(
        editor, store=tmp_path / "store", capabilities=capabilities, unstable=True
    ) as (connection, wire):
        session = (
            await connection.new_session(cwd=str(tmp_path), mcp_servers=[peer(tmp_path / "p")])
        ).session_id
        wire.cards()
        assert await prompt(connection, session, "/mcp__peer__ask") == "end_turn"
        assert texts(wire.cards()[-1]) == "accept main"
        [asked] = editor.elicited
        assert asked["message"] == "Which branch?"
        form = asked["mode"]  # the SDK hands the form mode's fields over as one value
        assert form.session_id == session
        assert list(form.requested_schema.properties) == ["branch"]


@pytest.mark.process
async def test_elicitation_is_declined_without_the_capability(tmp_path: Path) -> None:
    editor = McpEditor(elicit={"branch": "main"})
    async with sdk_served(editor, store=tmp_path / "store") as (connection, wire):
        session = (
            await connection.new_session(cwd=str(tmp_path), mcp_servers=[peer(tmp_path / "p")])
        ).session_id
        wire.cards()
        assert await prompt(connection, session, "/mcp__peer__ask") == "end_turn"
        assert texts(wire.cards()[-1]) == "decline -"
        assert editor.elicited == []


@pytest.mark.process
async def test_tools_list_changed_sends_the_commands_again(tmp_path: Path) -> None:
    editor = McpEditor()
    async with sdk_served(editor, store=tmp_path / "store") as (connection, _wire):
        session = (
            await connection.new_session(cwd=str(tmp_path), mcp_servers=[peer(tmp_path / "p")])
        ).session_id
        await editor.until(lambda: editor.commands)
        assert "mcp__peer__grown" not in editor.commands[-1]
        assert await prompt(connection, session, "/mcp__peer__grow") == "end_turn"
        await editor.until(lambda: "mcp__peer__grown" in editor.commands[-1])
        assert await prompt(connection, session, "/mcp__peer__grown") == "end_turn"


def test_the_peer_runs_under_this_python() -> None:
    """The peers are started with the test's own interpreter (where the MCP SDK is): this
    process is that interpreter."""
    importlib.import_module("mcp.server")


@pytest.mark.process
async def test_load_replays_the_calls_with_and_without_the_server(tmp_path: Path) -> None:
    store = tmp_path / "store"
    state = tmp_path / "peer"
    editor = McpEditor()
    async with sdk_served(editor, store=store) as (connection, wire):
        session = (
            await connection.new_session(cwd=str(tmp_path), mcp_servers=[peer(state)])
        ).session_id
        wire.cards()
        assert await prompt(connection, session, command("mcp__peer__echo", text="hi")) == (
            "end_turn"
        )
        live = wire.cards()

    for servers, present in (([], False), ([peer(state)], True)):
        editor = McpEditor()
        async with sdk_served(editor, store=store) as (connection, wire):
            await connection.load_session(
                cwd=str(tmp_path), session_id=session, mcp_servers=servers
            )
            replayed = wire.cards()
            if present:  # the cards it drew live
                assert replayed[0] == live[0]
            else:  # a plain card for a tool no longer there, titled as the editor showed it
                assert (replayed[0]["title"], replayed[0]["kind"]) == (
                    live[0]["title"],
                    live[0]["kind"],
                )
                assert replayed[0]["rawInput"] == live[0]["rawInput"]
            assert replayed[-1]["status"] == "completed"
            assert replayed[-1]["content"] == live[-1]["content"]
            await editor.until(editor.has_commands)
            assert ("mcp__peer__echo" in editor.commands[-1]) is present
            if present:  # and the session goes on using the server
                again = command("mcp__peer__echo", text="again")
                assert await prompt(connection, session, again) == "end_turn"
                assert texts(wire.cards()[-1]) == "again"


@pytest.mark.process
async def test_loading_a_session_again_replaces_its_servers(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    editor = McpEditor()
    async with sdk_served(editor, store=tmp_path / "store") as (connection, _wire):
        session = (
            await connection.new_session(cwd=str(tmp_path), mcp_servers=[peer(first)])
        ).session_id
        await editor.until(lambda: editor.commands)
        first_pid = int((first / "pid").read_text())
        await connection.load_session(
            cwd=str(tmp_path), session_id=session, mcp_servers=[peer(second, name="other")]
        )
        await editor.until(lambda: "mcp__other__echo" in editor.commands[-1])
        assert "mcp__peer__echo" not in editor.commands[-1]
        assert not alive(first_pid)
        assert alive(int((second / "pid").read_text()))


@pytest.mark.process
async def test_no_process_is_left_behind_after_eof(tmp_path: Path) -> None:
    editor = McpEditor()
    servers = [peer(tmp_path / "peer"), console_script("mcp-server-time", "time")]
    seen: set[int] = set()
    already = descendants(os.getpid())  # this run's own (session-wide peers): not the sidecar's
    async with sdk_sidecar(editor, store=tmp_path / "store") as (connection, _wire):
        await connection.new_session(cwd=str(tmp_path), mcp_servers=servers)
        await connection.new_session(cwd=str(tmp_path), mcp_servers=servers[:1])
        # the sidecar, its three servers and their children
        seen = descendants(os.getpid()) - already
        assert len(seen) >= 4, seen
    # sdk_sidecar has closed stdin and seen the sidecar exit 0
    assert sorted(pid for pid in seen if alive(pid)) == []


@pytest.mark.process
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
async def test_a_signal_stops_the_servers_within_the_bound(
    tmp_path: Path, signum: signal.Signals
) -> None:
    state = tmp_path / "peer"
    peer(state)
    process = await bare_sidecar(tmp_path, "peer", [str(PEER), str(state)])
    assert process.stdin is not None and process.stdout is not None
    async with asyncio.timeout(15):
        while True:
            message = json.loads(await process.stdout.readline())
            if message.get("id") == 1:
                break
    server_pid = int((state / "pid").read_text())
    assert alive(server_pid)
    process.send_signal(signum)
    # The hang guard is generous; what matters is the order: the sidecar ends the server,
    # then exits 0.
    assert await asyncio.wait_for(process.wait(), 60) == 0
    assert not alive(server_pid)


async def _modules_after(tmp_path: Path, servers: list[dict[str, Any]]) -> set[str]:
    """Which of the MCP packages a sidecar had imported when it exited, after a session
    with ``servers`` and one prompt."""
    out = tmp_path / "modules.json"
    code = (
        "import atexit, json, sys\n"
        "def note():\n"
        f"    names = [m for m in ('mcp', 'acp_sidecar.mcp') if m in sys.modules]\n"
        f"    open({str(out)!r}, 'w').write(json.dumps(names))\n"
        "atexit.register(note)\n"
        "from acp_sidecar.cli import main\n"
        "raise SystemExit(main(['--store', sys.argv[1]]))\n"
    )
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": str(tmp_path), "mcpServers": servers},
        },
    ]
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        code,
        str(tmp_path / "store"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={"PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
    await process.stdin.drain()
    async with asyncio.timeout(15):
        while json.loads(await process.stdout.readline()).get("id") != 1:
            pass
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 5) == 0
    return set(json.loads(out.read_text()))


@pytest.mark.process
async def test_a_session_without_servers_never_imports_mcp(tmp_path: Path) -> None:
    assert await _modules_after(tmp_path, []) == set()
    # The check can fail: a session with a server does import it.
    server = {
        "name": "peer",
        "command": sys.executable,
        "args": [str(PEER), str(tmp_path)],
        "env": [],
    }
    assert await _modules_after(tmp_path, [server]) == {"mcp", "acp_sidecar.mcp"}


@pytest.mark.process
async def test_a_server_that_never_answers_is_left_out_after_the_start_timeout(
    tmp_path: Path,
) -> None:
    editor = McpEditor()
    hanging = acp.schema.McpServerStdio(
        name="hangs", command=sys.executable, args=["-c", "import sys; sys.stdin.read()"], env=[]
    )
    async with sdk_served(editor, "--mcp-start-timeout", "4", store=tmp_path / "store") as (
        connection,
        _wire,
    ):
        servers = [hanging, peer(tmp_path / "p")]
        session = (await connection.new_session(cwd=str(tmp_path), mcp_servers=servers)).session_id
        await editor.until(lambda: editor.commands and editor.said)
        assert "hangs" in "".join(editor.said)
        assert "mcp__peer__echo" in editor.commands[-1]
        assert not any(name.startswith("mcp__hangs") for name in editor.commands[-1])
        assert await prompt(connection, session, command("mcp__peer__echo", text="x")) == (
            "end_turn"
        )


@pytest.mark.process
async def test_the_end_of_a_shell_call_never_touches_the_servers(tmp_path: Path) -> None:
    """What a ``bash`` call left behind is ended when it ends; the session's MCP servers
    (also the sidecar's children) are not the call's, and live on."""
    editor = McpEditor()
    state = tmp_path / "peer"
    async with sdk_sidecar(editor, store=tmp_path / "store") as (connection, wire):
        session = (
            await connection.new_session(cwd=str(tmp_path), mcp_servers=[peer(state)])
        ).session_id
        await connection.set_session_mode(session_id=session, mode_id="auto")
        server_pid = int((state / "pid").read_text())
        assert await prompt(connection, session, "!(sleep 30 &) ; echo started") == "end_turn"
        assert alive(server_pid)
        wire.cards()
        assert await prompt(connection, session, command("mcp__peer__echo", text="still")) == (
            "end_turn"
        )
        assert texts(wire.cards()[-1]) == "still"


@pytest.mark.process
async def test_a_server_that_dies_is_told_and_its_tools_leave_the_commands(
    tmp_path: Path,
) -> None:
    editor = McpEditor()
    servers = [peer(tmp_path / "a"), peer(tmp_path / "b", name="other")]
    async with sdk_served(editor, store=tmp_path / "store") as (connection, wire):
        session = (await connection.new_session(cwd=str(tmp_path), mcp_servers=servers)).session_id
        await editor.until(editor.has_commands)
        assert "mcp__peer__die" in editor.commands[-1]
        wire.cards()
        assert await prompt(connection, session, "/mcp__peer__die") == "end_turn"
        assert wire.cards()[-1]["status"] == "failed"
        await editor.until(lambda: "mcp__peer__echo" not in editor.commands[-1])
        assert "mcp__other__echo" in editor.commands[-1]
        await editor.until(lambda: "'peer'" in "".join(editor.said))
        assert await prompt(connection, session, command("mcp__other__echo", text="on")) == (
            "end_turn"
        )
        assert texts(wire.cards()[-1]) == "on"
