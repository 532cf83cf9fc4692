"""The file tools driven over the wire, in auto mode, by slash commands.

:func:`auto_sidecar` starts ``python -m acp_sidecar`` (the console driver: prompts are slash
commands for the tools) with an optional ``preexec_fn`` (resource limits), opens a session in
``workspace`` in auto mode (no permission requests), and :func:`call` runs one command and
returns the final card's status and text; :func:`auto_served` is the same sidecar in process,
for the tests that look at what the tools do rather than at the process (its memory, its CPU,
a kill, a limit).

:func:`sidecar` starts one whose ``PATH`` has no ripgrep, so ``grep`` runs its Python engine
(the wire tests of the walks and of the engine's limits; :func:`served_sidecar` in process);
:func:`open_session` opens an auto session in it, :func:`run` runs one prompt and returns the
turn's last card update, and :func:`text_of` reads that card's text.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs

from acp_sidecar.server.app import AcpServer
from tests.in_process import serving
from tests.server.wire import WireClient, spawned


@attrs.frozen
class Sidecar:
    client: WireClient
    process: asyncio.subprocess.Process | None
    """``None`` in process (:func:`auto_served`)."""
    session: str


@asynccontextmanager
async def auto_sidecar(
    workspace: Path,
    *,
    preexec_fn: Callable[[], None] | None = None,
    capabilities: dict[str, Any] | None = None,
) -> AsyncIterator[Sidecar]:
    """A sidecar subprocess with one session in ``workspace``, in auto mode; killed at exit."""
    async with spawned(stderr=asyncio.subprocess.DEVNULL, preexec_fn=preexec_fn) as (
        client,
        process,
    ):
        await patiently(
            client, "initialize", INITIALIZE | {"clientCapabilities": capabilities or {}}
        )
        new = await patiently(client, "session/new", {"cwd": str(workspace), "mcpServers": []})
        session = new["sessionId"]
        await patiently(client, "session/set_mode", {"sessionId": session, "modeId": "auto"})
        yield Sidecar(client, process, session)


INITIALIZE = {"protocolVersion": 1}
STARTED = 60.0
"""A hang guard for a subprocess's first answers: a loaded machine takes seconds to start one."""


async def patiently(client: WireClient, method: str, params: dict[str, Any]) -> Any:
    """The result of ``method``, waited for up to :data:`STARTED` seconds."""
    response = await client.next_response(await client.send_request(method, params), STARTED)
    assert "result" in response, response
    return response["result"]


@asynccontextmanager
async def auto_served(
    workspace: Path, *, capabilities: dict[str, Any] | None = None
) -> AsyncIterator[Sidecar]:
    """:func:`auto_sidecar`'s sidecar in process."""
    async with serving() as (client, _server):
        await client.initialize(**(capabilities or {}))
        session = await client.new_session(str(workspace))
        await client.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
        yield Sidecar(client, None, session)


def command(tool: str, **args: Any) -> str:
    """The slash command that calls ``tool`` with ``args``."""
    return f"/{tool} {json.dumps(args)}"


async def call(sidecar: Sidecar, text: str, *, timeout: float = 30.0) -> tuple[str, str]:
    """Run one prompt; the final tool card's status and its text content."""
    client = sidecar.client
    client.updates.clear()
    msg_id = await client.start_prompt(sidecar.session, text)
    response = await client.next_response(msg_id, timeout)
    assert "result" in response, response
    updates = [m["params"]["update"] for m in client.updates]
    final = [
        u
        for u in updates
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") in ("completed", "failed")
    ]
    assert final, updates
    content = final[-1].get("content") or []
    texts = [c["content"]["text"] for c in content if c.get("type") == "content"]
    return final[-1]["status"], "\n".join(texts)


def card_title(sidecar: Sidecar) -> str:
    """The title of the last card's final update (after :func:`call`)."""
    titles = [
        m["params"]["update"]["title"]
        for m in sidecar.client.updates
        if m["params"]["update"]["sessionUpdate"] == "tool_call_update"
        and "title" in m["params"]["update"]
    ]
    return titles[-1]


@asynccontextmanager
async def sidecar(
    tmp_path: Path,
) -> AsyncIterator[tuple[WireClient, asyncio.subprocess.Process]]:
    """A sidecar whose ``PATH`` has no ripgrep, so grep runs its Python engine."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    async with spawned(env={"PATH": str(empty)}, stderr=asyncio.subprocess.DEVNULL) as pair:
        await patiently(pair[0], "initialize", INITIALIZE | {"clientCapabilities": {}})
        yield pair


@asynccontextmanager
async def served_sidecar(tmp_path: Path) -> AsyncIterator[tuple[WireClient, AcpServer]]:
    """:func:`sidecar` in process: ``PATH`` has no ripgrep while it serves."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    async with serving(env={"PATH": str(empty)}) as (wire, server):
        await wire.initialize()
        yield wire, server


async def open_session(wire: WireClient, cwd: Path) -> str:
    session = await wire.new_session(str(cwd))
    await wire.next_update()  # available_commands_update
    await wire.result("session/set_mode", {"sessionId": session, "modeId": "auto"})
    return session


async def run(wire: WireClient, session: str, text: str, timeout: float = 30) -> dict[str, Any]:
    """Run one prompt to its end; the last card update of the turn."""
    wire.updates.clear()
    response = await wire.next_response(await wire.start_prompt(session, text), timeout)
    assert response["result"]["stopReason"] == "end_turn", response
    cards = [
        m["params"]["update"]
        for m in wire.updates
        if m["params"]["update"]["sessionUpdate"] in ("tool_call", "tool_call_update")
    ]
    return cards[-1]


def text_of(card: dict[str, Any]) -> str:
    text: str = card["content"][0]["content"]["text"]
    return text
