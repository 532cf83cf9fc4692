"""The built-in tools driven over the wire by the console: cards validated by the schema,
the default ask mode prompting before write/edit/bash, live bash output, the editor's fs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.agent.toolset import ToolsProvider
from acp_sidecar.server.app import AcpServer
from tests.server.wire import WireClient, served


@pytest.fixture
async def builtins() -> AsyncIterator[WireClient]:
    async with served(AcpServer(tools=ToolsProvider(entry_points=False))) as (wire, _server):
        yield wire


async def turn(
    wire: WireClient, session: str, text: str, *, answer: str | None = "allow_once"
) -> list[dict[str, Any]]:
    """Run a prompt, answering permission requests (and fs reads/writes are not expected)."""
    wire.updates.clear()
    msg_id = await wire.start_prompt(session, text)
    asked = 0
    while True:
        message = await wire.receive()
        if message.get("method") == "session/update":
            wire.updates.append(message)
        elif message.get("method") == "session/request_permission":
            asked += 1
            assert answer is not None, "unexpected permission request"
            await wire.respond(
                message["id"], {"outcome": {"outcome": "selected", "optionId": answer}}
            )
        elif message.get("id") == msg_id:
            assert message["result"]["stopReason"] == "end_turn"
            break
        else:
            raise AssertionError(message)
    updates = [
        m["params"]["update"]
        for m in wire.updates
        if m["params"]["update"]["sessionUpdate"] in ("tool_call", "tool_call_update")
    ]
    updates.append({"asked": asked})
    return updates


async def test_write_edit_read_bash_grep_glob_in_ask_mode(
    builtins: WireClient, tmp_path: Path
) -> None:
    await builtins.initialize(_meta={"terminal_output": True})
    session = await builtins.new_session(str(tmp_path))

    written = await turn(
        builtins, session, '/write {"path": "pkg/hello.py", "content": "print(\\"hi\\")\\n"}'
    )
    assert written[-1] == {"asked": 1}
    assert written[0]["kind"] == "edit" and written[0]["title"].endswith("pkg/hello.py")
    assert written[0]["content"][0] == {
        "type": "diff",
        "path": str(tmp_path / "pkg/hello.py"),
        "oldText": None,
        "newText": 'print("hi")\n',
    }
    assert (tmp_path / "pkg/hello.py").read_text() == 'print("hi")\n'

    edited = await turn(
        builtins,
        session,
        '/edit {"path": "pkg/hello.py", "old_string": "hi", "new_string": "hello"}',
    )
    assert edited[-1] == {"asked": 1}
    final = [u for u in edited if u.get("status") == "completed"][-1]
    assert final["content"][0]["type"] == "diff"
    assert (tmp_path / "pkg/hello.py").read_text() == 'print("hello")\n'

    read = await turn(builtins, session, "/read pkg/hello.py", answer=None)  # reading never asks
    assert read[0]["kind"] == "read"
    assert read[0]["locations"][0]["path"] == str(tmp_path / "pkg/hello.py")

    ran = await turn(
        builtins,
        session,
        "!python3 pkg/hello.py; for i in 1 2 3; do echo line $i; sleep 0.1; done; exit 4",
    )
    assert ran[-1] == {"asked": 1}
    start = ran[0]
    assert start["kind"] == "execute" and start["_meta"]["terminal_info"]["cwd"] == str(tmp_path)
    live = [u for u in ran[1:-2] if "terminal_output" in u.get("_meta", {})]
    assert live, "no live output before the result"
    end = ran[-2]
    assert "content" not in end
    assert end["_meta"]["terminal_exit"]["exit_code"] == 4
    streamed = "".join(
        u["_meta"]["terminal_output"]["data"]
        for u in ran
        if "terminal_output" in u.get("_meta", {})
    )
    assert streamed.startswith("hello\nline 1\n") and streamed.endswith("line 3\n")

    found = await turn(builtins, session, "/grep hello", answer=None)
    assert found[0]["kind"] == "search"
    assert "pkg/hello.py" in found[-2]["content"][0]["content"]["text"]

    globbed = await turn(builtins, session, '/glob {"pattern": "**/*.py"}', answer=None)
    assert "pkg/hello.py" in globbed[-2]["content"][0]["content"]["text"]


async def test_paths_outside_the_workspace_are_refused(
    builtins: WireClient, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "secret.txt").write_text("nope")
    await builtins.initialize()
    session = await builtins.new_session(str(workspace))
    refused = await turn(builtins, session, "/read ../secret.txt", answer=None)
    assert refused[-2]["status"] == "failed"
    assert "outside" in refused[-2]["content"][0]["content"]["text"]


async def test_reads_and_writes_go_through_the_editor_when_it_offers_fs(
    builtins: WireClient, tmp_path: Path
) -> None:
    await builtins.initialize(fs={"readTextFile": True, "writeTextFile": True})
    session = await builtins.new_session(str(tmp_path))
    (tmp_path / "buffer.txt").write_text("on disk\n")
    await builtins.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
    msg_id = await builtins.start_prompt(session, "/read buffer.txt")
    request = await builtins.next_agent_request()
    assert request["method"] == "fs/read_text_file"
    assert request["params"]["path"] == str(tmp_path / "buffer.txt")
    await builtins.respond(request["id"], {"content": "unsaved editor buffer\n"})
    await builtins.next_response(msg_id)
    final = builtins.updates[-2]["params"]["update"]  # the last is the turn's session info
    assert "unsaved editor buffer" in final["content"][0]["content"]["text"]


async def test_allow_outside_workspace_lets_tools_leave_it(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "shared.txt").write_text("from outside\n")
    server = AcpServer(tools=ToolsProvider(entry_points=False), allow_outside_workspace=True)
    async with served(server) as (wire, _server):
        await wire.initialize()
        session = await wire.new_session(str(workspace))
        read = await turn(wire, session, "/read ../shared.txt", answer=None)
        assert read[-2]["status"] == "completed"
        assert "from outside" in read[-2]["content"][0]["content"]["text"]
