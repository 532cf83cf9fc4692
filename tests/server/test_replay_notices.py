"""What a session told its user outside the conversation, and its compactions, are recorded
once, whichever client made the session, and ``session/load`` replays them in the form the
loading client understands: a ``notice`` (``compaction_update``) where it advertised
``session.notices`` (``session.compaction``), else the agent message any client reads (a
compaction, silent live for such a client, stays silent).

In process, over the raw wire (every message checked against the ACP schema)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.server.app import AcpServer
from acp_sidecar.store import CompactionRecord, SessionStore
from tests.server.wire import WireClient, served

NOTICES = {"session": {"notices": {}}}
COMPACTION = {"session": {"compaction": {}}}
BOTH = {"session": {"notices": {}, "compaction": {}}}
MISSING = {"name": "gone", "command": "/nonexistent/mcp-server", "args": [], "env": []}
TOLD = "MCP server 'gone' did not start"


def _server(store: Path) -> AcpServer:
    return AcpServer(store=lambda: SessionStore(store, fsync="never"), cancel_grace=0.3)


def _updates(wire: WireClient) -> list[dict[str, Any]]:
    return [u["params"]["update"] for u in wire.updates]


def _of(updates: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == kind]


def _agent_text(updates: list[dict[str, Any]]) -> str:
    return "".join(u["content"]["text"] for u in _of(updates, "agent_message_chunk"))


async def _until(wire: WireClient, wanted: str, timeout: float = 20) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while wanted not in json.dumps(_updates(wire)):
        await wire.next_update(max(deadline - loop.time(), 0.01))


async def _made_with_a_failed_server(store: Path, cwd: str, capabilities: dict[str, Any]) -> str:
    """A session whose MCP server did not start, made by a client with ``capabilities``."""
    async with served(_server(store)) as (wire, _):
        await wire.initialize(**capabilities)
        result = await wire.result("session/new", {"cwd": cwd, "mcpServers": [MISSING]})
        session: str = result["sessionId"]
        await _until(wire, TOLD)
        await wire.next_response(await wire.start_prompt(session, "hello"))
    return session


async def _loaded(store: Path, session: str, cwd: str, capabilities: dict[str, Any]) -> list[Any]:
    """The updates ``session/load`` sends to a client with ``capabilities`` (no servers)."""
    async with served(_server(store)) as (wire, _):
        await wire.initialize(**capabilities)
        await wire.result("session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []})
        return _updates(wire)


@pytest.mark.parametrize("made_by", [NOTICES, {}], ids=["made-with-notices", "made-without"])
async def test_a_failed_mcp_server_is_replayed_in_the_loading_clients_form(
    tmp_path: Path, made_by: dict[str, Any]
) -> None:
    store, cwd = tmp_path / "store", str(tmp_path)
    session = await _made_with_a_failed_server(store, cwd, made_by)

    as_notices = await _loaded(store, session, cwd, NOTICES)
    [notice] = _of(as_notices, "notice")
    assert notice["severity"] == "warning" and notice["title"].startswith(TOLD)
    assert TOLD not in _agent_text(as_notices)
    # Where it was told: before the first prompt, as live.
    kinds = [u["sessionUpdate"] for u in as_notices]
    assert kinds.index("notice") < kinds.index("user_message_chunk")

    as_text = await _loaded(store, session, cwd, {})
    assert _of(as_text, "notice") == []
    assert TOLD in _agent_text(as_text)


async def _stored_compaction(store: Path, cwd: str) -> str:
    """A log with two prompts, the first summarised by a compaction recorded in the second."""
    sessions = SessionStore(store, fsync="never")
    with sessions.create("compacted", cwd) as writer:
        writer.user_message([{"type": "text", "text": "first"}])
        writer.agent_text("first answer")
        writer.end_turn("end_turn")
        writer.user_message([{"type": "text", "text": "second"}])
        writer.append(CompactionRecord(summary="The user said first; it was answered.", turns=1))
        writer.agent_text("second answer")
        writer.end_turn("end_turn")
    return "compacted"


async def test_a_compaction_is_replayed_to_a_client_that_shows_them(tmp_path: Path) -> None:
    store, cwd = tmp_path / "store", str(tmp_path)
    session = await _stored_compaction(store, cwd)

    shown = await _loaded(store, session, cwd, COMPACTION)
    [compaction] = _of(shown, "compaction_update")
    assert compaction["status"] == "completed"
    assert compaction["summary"] == [
        {"type": "text", "text": "The user said first; it was answered."}
    ]
    kinds = [u["sessionUpdate"] for u in shown]
    second = [i for i, k in enumerate(kinds) if k == "user_message_chunk"][1]
    assert second < kinds.index("compaction_update") < len(kinds) - 1
    assert _agent_text(shown) == "first answersecond answer"  # every turn is still replayed

    silent = await _loaded(store, session, cwd, NOTICES)
    assert _of(silent, "compaction_update") == [] and _of(silent, "compaction_summary_chunk") == []
    assert "summar" not in _agent_text(silent).lower()


async def test_replayed_compactions_have_ids_of_their_own(tmp_path: Path) -> None:
    store, cwd = tmp_path / "store", str(tmp_path)
    sessions = SessionStore(store, fsync="never")
    with sessions.create("twice", cwd) as writer:
        for n in range(3):
            writer.user_message([{"type": "text", "text": f"prompt {n}"}])
            if n:
                writer.append(CompactionRecord(summary=f"summary {n}", turns=n))
            writer.agent_text("answer")
            writer.end_turn("end_turn")
    updates = await _loaded(store, "twice", cwd, BOTH)
    ids = [u["compactionId"] for u in _of(updates, "compaction_update")]
    assert len(ids) == 2 and len(set(ids)) == 2


async def test_replayed_notices_stand_in_paragraphs_of_their_own_as_they_did_live(
    tmp_path: Path,
) -> None:
    """§2b: "two notices in one turn run together" — on a load as well as live."""
    store, cwd = tmp_path / "store", str(tmp_path)
    with SessionStore(store, fsync="never").create("told", cwd) as writer:
        writer.user_message([{"type": "text", "text": "hello"}])
        writer.agent_text("Some answer.")
        writer.notice("The conversation is too long (the session keeps them).")
        writer.notice("Could not reach the model.")
        writer.notice("MCP server 'x' stopped.", "warning")
        writer.agent_text("More.")
        writer.end_turn("end_turn")
        writer.user_message([{"type": "text", "text": "again"}])
        writer.gap("the disk was full")
        writer.agent_text("Back.")
        writer.end_turn("end_turn")

    replies: list[str] = []  # the agent's message after each prompt
    for update in await _loaded(store, "told", cwd, {}):
        if update["sessionUpdate"] == "user_message_chunk":
            replies.append("")
        elif update["sessionUpdate"] == "agent_message_chunk":
            replies[-1] += update["content"]["text"]
    assert [reply.split("\n\n") for reply in replies] == [
        [
            "Some answer.",
            "The conversation is too long (the session keeps them).",
            "Could not reach the model.",
            "MCP server 'x' stopped.",
            "More.",
        ],
        ["[Some of this session was not recorded here: the disk was full]", "Back."],
    ]
