"""Messages for the user, not the model, over the raw wire (the pinned SDK does not know
``notice``): a ``notice`` update where the client advertises ``session.notices``, else the
agent message it always was. What is about the log failing is live only (never logged, never
replayed); a failed MCP server is recorded once, whatever the client. Every message the
sidecar writes is checked against the official schema by the wire client."""

from __future__ import annotations

import json
import resource
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.bridge.notices import UserMessage, shows_notices, user_updates
from acp_sidecar.protocol.initialize import ClientCapabilities, ClientSessionCapabilities
from tests.server.test_store_hardening import (
    NOT_RECORDED,
    finish,
    limit,
    load,
    prompt,
    records,
    session_updates,
    sidecar,
    texts_of,
)
from tests.server.wire import WireClient, cli_served

NOTICES = {"session": {"notices": {}}}


def notices_of(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        u["params"]["update"] for u in updates if u["params"]["update"]["sessionUpdate"] == "notice"
    ]


async def updates_until(wire: WireClient, wanted: str, timeout: float = 20) -> None:
    """Read updates until one holds ``wanted`` (a notice's title or an agent message's text)."""
    while wanted not in json.dumps([u["params"]["update"] for u in wire.updates]):
        await wire.next_update(timeout)


def test_the_one_decision_follows_the_capability() -> None:
    message = UserMessage("error", "MCP server 'x' did not start: no such file\nmore detail")
    plain = ClientCapabilities()
    assert not shows_notices(plain)
    assert not shows_notices(ClientCapabilities(session=ClientSessionCapabilities()))
    capable = ClientCapabilities(session=ClientSessionCapabilities(notices={}))
    assert shows_notices(capable)
    [as_message] = user_updates(plain, [message])
    assert as_message.session_update == "agent_message_chunk"
    [as_notice] = user_updates(capable, [message])
    assert as_notice.session_update == "notice"
    assert as_notice.severity == "error"  # type: ignore[union-attr]
    assert as_notice.title == "MCP server 'x' did not start: no such file"  # type: ignore[union-attr]
    assert as_notice.description == message.text  # type: ignore[union-attr]
    [short] = user_updates(capable, [UserMessage("info", "Recording resumed.")])
    assert short.title == "Recording resumed." and short.description is None  # type: ignore[union-attr]


@pytest.mark.process  # a file-size limit set in the sidecar process
@pytest.mark.parametrize("capable", [True, False], ids=["notices", "no-notices"])
async def test_a_failed_store_write_is_a_notice_where_the_client_shows_them(
    tmp_path: Path, capable: bool
) -> None:
    store = tmp_path / "store"
    (tmp_path / "big.txt").write_text(
        "".join(f"line {n:04d} " + "x" * 90 + "\n" for n in range(80))
    )
    fsize = limit(resource.RLIMIT_FSIZE, 4096)
    async with sidecar("--store", str(store), preexec=fsize) as (wire, process):
        await wire.initialize(**(NOTICES if capable else {}))
        session = await wire.new_session(str(tmp_path))
        await prompt(wire, session, "/read big.txt")  # its result cannot fit under the limit
        told, notices = texts_of(wire.updates), notices_of(wire.updates)
        await finish(wire, process)
    if capable:
        assert NOT_RECORDED not in told
        titles = [n["title"] for n in notices]
        assert any(NOT_RECORDED in t for t in titles), notices
        assert any("Recording of this session resumed" in t for t in titles)
        assert all(n["severity"] == "warning" for n in notices)
        assert any("File too large" in (n.get("description") or "") for n in notices)
    else:
        assert notices == []
        assert NOT_RECORDED in told and "File too large" in told
    # Live only: the log has no record of it, so a load shows nothing of it.
    assert all(r["type"] != "notice" for r in records(store / f"{session}.jsonl"))
    async with cli_served("--store", str(store)) as (wire, _server):
        await wire.initialize(**NOTICES)
        assert "result" in await load(wire, session, str(tmp_path))
        replayed = session_updates(wire, session)
        assert notices_of(replayed) == [] and NOT_RECORDED not in texts_of(replayed)


@pytest.mark.parametrize("capable", [True, False], ids=["notices", "no-notices"])
async def test_a_tool_plugin_that_failed_to_load_is_told_to_the_first_session(
    tmp_path: Path, capable: bool
) -> None:
    async with cli_served("--tools", "no_such_plugin_module") as (wire, _server):
        await wire.initialize(**(NOTICES if capable else {}))
        await wire.new_session(str(tmp_path))
        await updates_until(wire, "skipped a tool plugin")
        if capable:
            [notice] = notices_of(wire.updates)
            assert notice["severity"] == "warning"
            assert notice["title"].startswith("Warning: skipped a tool plugin:")
            assert "no_such_plugin_module" in notice["title"] + notice.get("description", "")
            assert "skipped a tool plugin" not in texts_of(wire.updates)
        else:
            assert notices_of(wire.updates) == []
            assert "Warning: skipped a tool plugin:" in texts_of(wire.updates)
        # Once per connection: the next session is not told again.
        wire.updates.clear()
        second = await wire.new_session(str(tmp_path))
        await prompt(wire, second, "hello")
        assert "skipped a tool plugin" not in json.dumps(wire.updates)


@pytest.mark.parametrize("capable", [True, False], ids=["notices", "no-notices"])
async def test_an_mcp_server_that_did_not_start_is_a_notice_where_the_client_shows_them(
    tmp_path: Path, capable: bool
) -> None:
    store = tmp_path / "store"
    missing = {"name": "gone", "command": "/nonexistent/mcp-server", "args": [], "env": []}
    async with cli_served("--store", str(store)) as (wire, _server):
        await wire.initialize(**(NOTICES if capable else {}))
        result = await wire.result("session/new", {"cwd": str(tmp_path), "mcpServers": [missing]})
        session = result["sessionId"]
        await updates_until(wire, "MCP server 'gone' did not start")
        notices, told = notices_of(wire.updates), texts_of(wire.updates)
        await prompt(wire, session, "hello")  # the log has a prompt: it is whole on disk
    kept = [
        r
        for r in records(store / f"{session}.jsonl")
        if r["type"] == "notice" and "MCP server" in r["text"]
    ]
    if capable:
        [notice] = notices
        assert notice["title"].startswith("MCP server 'gone' did not start")
        assert "did not start" not in told
    else:
        assert notices == [] and "MCP server 'gone' did not start" in told
    # Recorded once whatever the client showed, for a load to replay in its own form
    # (tests/server/test_replay_notices.py).
    assert len(kept) == 1 and "did not start" in kept[0]["text"]
    assert kept[0]["severity"] == "warning"
