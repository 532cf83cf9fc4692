"""A server's tool list is checked off the event loop: while its schemas are being checked,
the other sessions' requests, a cancel and the end of input are all answered.

The check of one schema is held by a gate (``jsonschema``'s meta-schema check, the costly
part of it) until the test opens it, so what must happen meanwhile is shown by the order of
the answers, not by timing.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from acp_sidecar.mcp.servers import McpServers
from tests.mcp.conftest import HOOKS, Problems, crowd_peer
from tests.server.wire import WireClient, served

pytestmark = pytest.mark.process  # every test here starts an interpreter

CROWD = Path(__file__).parent / "peers" / "crowd_peer.py"
GATE_TIMEOUT = 10.0


class Gate:
    """Holds the first schema check until :meth:`open`; ``opened`` says whether the test
    opened it (rather than its timeout), i.e. whether the held check waited for the test."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self._open = threading.Event()
        self.left = threading.Event()
        self.opened: bool | None = None

    def check(self, original: Any) -> Any:
        def held(schema: Any, *args: Any, **kwargs: Any) -> Any:
            if not self.entered.is_set():
                self.entered.set()
                self.opened = self._open.wait(GATE_TIMEOUT)
                self.left.set()
            return original(schema, *args, **kwargs)

        return held

    def open(self) -> None:
        self._open.set()

    async def wait_entered(self) -> None:
        assert await asyncio.to_thread(self.entered.wait, GATE_TIMEOUT)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate()
    original = jsonschema.Draft202012Validator.check_schema
    monkeypatch.setattr(
        jsonschema.Draft202012Validator, "check_schema", staticmethod(held.check(original))
    )
    yield held
    held.open()


def crowd(salt: Path, tools: int, *args: str) -> dict[str, Any]:
    """The crowd peer with ``tools`` tools whose schemas no other test has (``salt``)."""
    return {
        "name": "crowd",
        "command": sys.executable,
        "args": [str(CROWD), "--tools", str(tools), "--salt", str(salt), *args],
        "env": [],
    }


async def answers(client: WireClient, *ids: int) -> list[int]:
    """The ids of ``ids``' answers in the order they arrive (updates and requests kept)."""
    order: list[int] = []
    while len(order) < len(ids):
        message = await client.receive(GATE_TIMEOUT * 2)
        if "method" not in message:
            assert message["id"] in ids, message
            order.append(message["id"])
        elif message["method"] == "session/update":
            client.updates.append(message)
    return order


async def test_other_sessions_and_a_cancel_are_answered_while_a_tool_list_is_checked(
    tmp_path: Path, gate: Gate
) -> None:
    async with served() as (client, _server):
        await client.initialize()
        waiting = await client.new_session(str(tmp_path))
        prompt = await client.start_prompt(waiting, "wait")
        assert (await client.next_update())["params"]["update"]["content"]["text"] == "started"

        crowded = await client.send_request(
            "session/new", {"cwd": str(tmp_path), "mcpServers": [crowd(tmp_path, 200)]}
        )
        await gate.wait_entered()
        other = await client.send_request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        assert await answers(client, other) == [other]
        await client.notify("session/cancel", {"sessionId": waiting})
        assert await answers(client, prompt) == [prompt]
        gate.open()
        assert await answers(client, crowded) == [crowded]
        assert gate.opened is True
        assert client.received[-1]["result"]["sessionId"]


async def test_the_end_of_input_stops_the_sidecar_while_a_tool_list_is_checked(
    tmp_path: Path, gate: Gate
) -> None:
    async with served() as (client, _server):
        await client.initialize()
        await client.send_request(
            "session/new", {"cwd": str(tmp_path), "mcpServers": [crowd(tmp_path, 200)]}
        )
        await gate.wait_entered()
    # served() saw the sidecar shut down (status 0) after the end of its input, all while the
    # check was held: it did not wait for it.
    gate.open()
    assert await asyncio.to_thread(gate.left.wait, GATE_TIMEOUT)
    assert gate.opened is True


async def test_the_start_timeout_cuts_a_tool_list_check_short(
    tmp_path: Path, gate: Gate, problems: Problems
) -> None:
    config = crowd_peer("crowd", "--tools", "200", "--salt", str(tmp_path))
    servers = await McpServers.start([config], hooks=HOOKS, on_problem=problems, start_timeout=3)
    try:
        assert gate.entered.is_set() and gate.opened is None  # still held
        assert problems == [
            "MCP server 'crowd' did not start: it did not finish starting within 3 s"
        ]
        assert servers.connections == {}
    finally:
        await servers.aclose()
