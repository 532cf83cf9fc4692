"""A session's title and last activity: taken from the first prompt, announced with
``session_info_update`` at the end of every turn, shown by ``session/list``, and sent again at
the end of a load. Every message is checked against the official schema by the wire client."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from tests.server.wire import WireClient, served
from tests.tooling import TOOLS


def server(store: Path) -> AcpServer:
    return AcpServer(
        tools=ToolsProvider(builtins=False, entry_points=False, extra=TOOLS),
        store=lambda: SessionStore(store),
    )


async def turn(wire: WireClient, session: str, *blocks: Any) -> list[dict[str, Any]]:
    wire.updates.clear()
    msg_id = await wire.send_request(
        "session/prompt", {"sessionId": session, "prompt": list(blocks)}
    )
    assert (await wire.next_response(msg_id))["result"]["stopReason"] == "end_turn"
    return [u["params"]["update"] for u in wire.updates]


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def when(info: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(info["updatedAt"])


async def test_the_first_prompt_titles_the_session_and_every_turn_moves_updated_at(
    tmp_path: Path,
) -> None:
    long = "Please fix the flaky test in the payments module " * 4
    async with served(server(tmp_path / "store")) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        first = await turn(wire, session, text(long))
        second = await turn(wire, session, text("and now the docs"))
        listed = await wire.result("session/list", {})
    info = first[-1]
    assert info["sessionUpdate"] == "session_info_update"
    title = info["title"]
    assert title.startswith("Please fix the flaky test") and title.endswith("…")
    assert len(title) <= 80 and "\n" not in title
    assert [u["sessionUpdate"] for u in second].count("session_info_update") == 1
    later = second[-1]
    assert later["sessionUpdate"] == "session_info_update"
    assert "title" not in later  # the title comes from the first prompt only
    assert when(later) >= when(info)
    [entry] = listed["sessions"]
    assert entry["sessionId"] == session and entry["title"] == title


async def test_a_prompt_without_text_takes_its_resources_name(tmp_path: Path) -> None:
    link = {"type": "resource_link", "name": "design.md", "uri": f"file://{tmp_path}/design.md"}
    async with served(server(tmp_path / "store")) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        updates = await turn(wire, session, link)
    assert updates[-1]["title"] == "design.md"


async def test_a_load_ends_with_the_title_and_updated_at_that_the_list_shows(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    async with served(server(store)) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
        await turn(wire, session, text("what can you do?"))
    async with served(server(store)) as (wire, _server):
        await wire.initialize()
        [listed] = (await wire.result("session/list", {}))["sessions"]
        await wire.result(
            "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        )
        replayed = [u["params"]["update"] for u in wire.updates]
        assert replayed[-1] == {
            "sessionUpdate": "session_info_update",
            "title": "what can you do?",
            "updatedAt": listed["updatedAt"],
        }
        # Loaded, the session keeps its title: the next turn does not take another.
        after = await turn(wire, session, text("something else"))
    assert after[-1]["sessionUpdate"] == "session_info_update" and "title" not in after[-1]


async def test_a_session_loaded_before_its_first_prompt_is_titled_by_it(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with served(server(store)) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(tmp_path))
    async with served(server(store)) as (wire, _server):
        await wire.initialize()
        await wire.result(
            "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        )
        info = wire.updates[-1]["params"]["update"]
        assert info["sessionUpdate"] == "session_info_update" and "title" not in info
        updates = await turn(wire, session, text("first words"))
    assert updates[-1]["title"] == "first words"


async def test_a_failed_mcp_server_told_before_the_first_prompt_keeps_the_title(
    tmp_path: Path,
) -> None:
    """The failure is told (and logged as a notice) before the user says anything; the title
    is still the first prompt's, in the list, on a load and in the turn's own update."""
    store = tmp_path / "store"
    missing = {
        "name": "missing",
        "command": str(tmp_path / "no-such-server"),
        "args": [],
        "env": [],
    }
    async with served(server(store)) as (wire, _server):
        await wire.initialize()
        created = await wire.result("session/new", {"cwd": str(tmp_path), "mcpServers": [missing]})
        session = created["sessionId"]
        while not any("missing" in said for said in wire.texts()):
            await wire.next_update()
        updates = await turn(wire, session, text("fix the build"))
        assert updates[-1]["title"] == "fix the build"
        [listed] = (await wire.result("session/list", {}))["sessions"]
    assert listed["title"] == "fix the build"
    async with served(server(store)) as (wire, _server):
        await wire.initialize()
        await wire.result(
            "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        )
        info = wire.updates[-1]["params"]["update"]
        assert info["sessionUpdate"] == "session_info_update"
        assert info["title"] == "fix the build"
