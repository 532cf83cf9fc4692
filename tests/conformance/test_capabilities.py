"""Client capabilities: the agent uses a client method only when the client advertised it,
and uses it when it did.

Spec: https://agentclientprotocol.com/protocol/initialization ("Capabilities", "Client
Capabilities"), https://agentclientprotocol.com/protocol/file-system ("Checking Support"),
https://agentclientprotocol.com/protocol/overview ("Client": optional methods and the
capability each requires), https://agentclientprotocol.com/protocol/extensibility
("Advertising Custom Capabilities").
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from tests.conformance.peer import TOOLS, Agent, Turn, sidecar

pytestmark = pytest.mark.asyncio(loop_scope="module")

CAPABILITIES: dict[str, dict[str, Any]] = {
    "nothing": {},
    "read": {"fs": {"readTextFile": True}},
    "write": {"fs": {"readTextFile": False, "writeTextFile": True}},
    "everything": {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        "elicitation": {"form": {}, "url": {}},
        "_meta": {"terminal_output": True},
    },
}
"""What each client advertises in ``initialize``."""

COMMANDS = [
    "/read notes.txt",
    '/write {"path": "new.txt", "content": "written\\n"}',
    '/edit {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}',
    "!echo hi",
    '/stream {"command": "tick", "lines": 2}',
    "/look notes.txt",
]
"""A turn for every kind of tool: read, write, edit, a shell command, a terminal card."""


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=list(CAPABILITIES))
async def client(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Agent, dict[str, Any]]]:
    """An agent initialized by a client advertising one of :data:`CAPABILITIES`."""
    capabilities = CAPABILITIES[request.param]
    async with sidecar(*TOOLS) as agent:
        await agent.initialize(**capabilities)
        yield agent, capabilities


def allowed_methods(capabilities: dict[str, Any]) -> set[str]:
    """The client methods an agent may call, given what the client advertised."""
    allowed = {"session/request_permission"}  # a baseline client method
    fs = capabilities.get("fs") or {}
    if fs.get("readTextFile") is True:
        allowed.add("fs/read_text_file")
    if fs.get("writeTextFile") is True:
        allowed.add("fs/write_text_file")
    if capabilities.get("terminal") is True:
        allowed |= {
            "terminal/create",
            "terminal/output",
            "terminal/release",
            "terminal/wait_for_exit",
            "terminal/kill",
        }
    if capabilities.get("elicitation"):
        allowed.add("elicitation/create")
    return allowed


async def test_client_methods_are_called_only_when_advertised(
    client: tuple[Agent, dict[str, Any]], workspace: Path
) -> None:
    """Initialization, "Capabilities": "Clients and Agents MUST treat all capabilities
    omitted in the initialize request as UNSUPPORTED." File System: "If readTextFile or
    writeTextFile is false or not present, the Agent MUST NOT attempt to call the
    corresponding filesystem method." Overview: ``terminal/*`` "requires terminal
    capability". Schema, ``ClientCapabilities.elicitation``: "Omitted or null both mean the
    client does not advertise elicitation support." A turn of every kind of tool call makes
    no client request beyond what the client advertised (and the baseline permission
    request), and every turn still ends normally."""
    agent, capabilities = client
    session = await agent.new_session(workspace)
    first = len(agent.requests)
    for command in COMMANDS:
        turn = await agent.prompt(session, command)
        assert turn.stop_reason == "end_turn", command
    used = {request["method"] for request in agent.requests[first:]}
    assert used <= allowed_methods(capabilities)


async def test_reads_go_through_the_editor_exactly_when_advertised(
    client: tuple[Agent, dict[str, Any]], workspace: Path
) -> None:
    """File System: "The fs/read_text_file method allows Agents to read text file contents
    from the Client's filesystem, including unsaved changes in the editor" — available when
    ``fs.readTextFile`` is advertised and only then. With it, reading a file asks the editor
    (absolute path, this session) and shows the editor's unsaved text; without it, the agent
    reads the disk itself."""
    agent, capabilities = client
    advertised = (capabilities.get("fs") or {}).get("readTextFile") is True
    session = await agent.new_session(workspace)
    path = str(workspace / "notes.txt")
    agent.buffers[path] = "unsaved editor text\n"
    turn = await agent.prompt(session, "/read notes.txt")
    reads = [r["params"] for r in turn.requests if r["method"] == "fs/read_text_file"]
    shown = card_text(turn)
    if advertised:
        assert reads and all(r == {**r, "sessionId": session, "path": path} for r in reads)
        assert "unsaved editor text" in shown
    else:
        assert reads == []
        assert "alpha" in shown and "unsaved" not in shown


async def test_writes_go_through_the_editor_exactly_when_advertised(
    client: tuple[Agent, dict[str, Any]], workspace: Path
) -> None:
    """File System: "The fs/write_text_file method allows Agents to write or update text
    files in the Client's filesystem" — available when ``fs.writeTextFile`` is advertised
    and only then. With it, the write is the editor's (absolute path, this session, the
    whole content); without it, the agent writes the file itself. Either way the file ends
    up written and the tool call completes."""
    agent, capabilities = client
    advertised = (capabilities.get("fs") or {}).get("writeTextFile") is True
    session = await agent.new_session(workspace)
    turn = await agent.prompt(session, '/write {"path": "out.txt", "content": "one\\ntwo\\n"}')
    writes = [r["params"] for r in turn.requests if r["method"] == "fs/write_text_file"]
    path = str(workspace / "out.txt")
    if advertised:
        assert writes == [{"sessionId": session, "path": path, "content": "one\ntwo\n"}]
    else:
        assert writes == []
    assert Path(path).read_text(encoding="utf-8") == "one\ntwo\n"
    (call,) = turn.of_kind("tool_call")
    assert turn.final_status(call["toolCallId"]) == "completed"


async def test_a_custom_capability_gates_its_extension(
    client: tuple[Agent, dict[str, Any]], workspace: Path
) -> None:
    """Extensibility, "Advertising Custom Capabilities": implementations "SHOULD use the
    _meta field in capability objects to advertise support for extensions". The terminal
    card extension (``_meta.terminal_info`` / ``terminal_output`` / ``terminal_exit`` and
    ``terminal`` content) is sent only to a client that advertised
    ``clientCapabilities._meta.terminal_output``; other clients get the output as text."""
    agent, capabilities = client
    advertised = (capabilities.get("_meta") or {}).get("terminal_output") is True
    session = await agent.new_session(workspace)
    turn = await agent.prompt(session, "!echo hi")
    cards = turn.of_kind("tool_call", "tool_call_update")
    extension = [c for c in cards if set(c.get("_meta") or {}) & TERMINAL_KEYS]
    terminal_content = [
        item for c in cards for item in c.get("content") or [] if item["type"] == "terminal"
    ]
    if advertised:
        assert extension and terminal_content
    else:
        assert extension == [] and terminal_content == []
        assert "hi" in card_text(turn)


TERMINAL_KEYS = {"terminal_info", "terminal_output", "terminal_exit"}


def card_text(turn: Turn) -> str:
    """Everything the turn's tool cards showed as text."""
    texts = []
    for update in turn.of_kind("tool_call", "tool_call_update"):
        for item in update.get("content") or []:
            if item["type"] == "content" and item["content"]["type"] == "text":
                texts.append(item["content"]["text"])
    return json.dumps(texts)
