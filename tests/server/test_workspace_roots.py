"""A session's workspace roots are resolved once, when it is created, loaded or resumed: a root
replaced afterwards by a symbolic link to another directory admits nothing of it (issue 25 §6).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import SessionStore
from tests.server.wire import WireClient, served


def builtins_server(tmp_path: Path) -> AcpServer:
    return AcpServer(
        tools=ToolsProvider(entry_points=False), store=lambda: SessionStore(tmp_path / "store")
    )


async def read_card(wire: WireClient, session: str, path: Path) -> tuple[str, str]:
    """The last status and the text of the card of ``/read path``."""
    wire.updates.clear()
    await wire.next_response(await wire.start_prompt(session, f"/read {path}"))
    status, text = "", ""
    for message in wire.updates:
        update: dict[str, Any] = message["params"]["update"]
        if update["sessionUpdate"] not in ("tool_call", "tool_call_update"):
            continue
        status = update.get("status") or status
        for item in update.get("content") or []:
            text = item.get("content", {}).get("text", text)
    return status, text


@pytest.mark.parametrize("attach", ["session/new", "session/load", "session/resume"])
@pytest.mark.parametrize("root", ["cwd", "additional"])
async def test_a_root_replaced_by_a_symlink_later_admits_nothing_new(
    tmp_path: Path, attach: str, root: str
) -> None:
    """It was resolved again on every call, so the link's target became the workspace."""
    ws, lib, other = tmp_path / "ws", tmp_path / "lib", tmp_path / "other"
    for directory in (ws, lib, other):
        directory.mkdir()
    (other / "secret.txt").write_text("top secret\n")
    (lib / "api.txt").write_text("the library\n")
    params = {"cwd": str(ws), "mcpServers": []}
    async with served(builtins_server(tmp_path)) as (wire, _server):
        await wire.initialize()
        new = await wire.result("session/new", {**params, "additionalDirectories": [str(lib)]})
        session = new["sessionId"]
        if attach != "session/new":
            await wire.result("session/close", {"sessionId": session})
            await wire.result(attach, {**params, "sessionId": session})
        status, text = await read_card(wire, session, lib / "api.txt")
        assert (status, text.endswith("\tthe library")) == ("completed", True), text
        swapped = ws if root == "cwd" else lib
        swapped.rename(tmp_path / "moved")
        swapped.symlink_to(other, target_is_directory=True)
        status, text = await read_card(wire, session, swapped / "secret.txt")
    assert status == "failed"
    assert "top secret" not in text
    assert "outside the workspace" in text, text


async def test_a_root_named_through_a_symlink_is_where_it_pointed_when_attached(
    tmp_path: Path,
) -> None:
    """Resolved at ``session/new``: a link the editor names as a root admits its target."""
    target, ws = tmp_path / "target", tmp_path / "ws"
    target.mkdir()
    ws.mkdir()
    (target / "api.txt").write_text("through the link\n")
    (tmp_path / "link").symlink_to(target, target_is_directory=True)
    async with served(builtins_server(tmp_path)) as (wire, _server):
        await wire.initialize()
        new = await wire.result(
            "session/new",
            {"cwd": str(ws), "mcpServers": [], "additionalDirectories": [str(tmp_path / "link")]},
        )
        status, text = await read_card(wire, new["sessionId"], tmp_path / "link" / "api.txt")
    assert (status, text.endswith("\tthrough the link")) == ("completed", True), text
