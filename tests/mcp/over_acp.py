"""Helpers for the end-to-end MCP tests: the official ACP SDK client drives ``acp-sidecar``
(a subprocess) whose sessions name MCP servers, real ones started as a user would.

- :func:`peer` names :mod:`tests.mcp.wire_peer` (our SDK-built server) as a stdio server;
  :func:`console_script` the PyPI reference servers installed beside the test's Python.
- :class:`McpEditor` keeps the slash-command lists and the agent's messages, answers every
  permission dialog with ``allow_once`` (counting them) and every elicitation from a script.
- :func:`descendants` / :func:`alive`: the processes under the sidecar, to prove none is
  left behind.
- :func:`bare_sidecar`: a sidecar driven by raw lines, for tests that end it by EOF or a
  signal while a session's server starts or runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from acp.schema import (
    AcceptElicitationResponse,
    AgentMessageChunk,
    AllowedOutcome,
    AvailableCommandsUpdate,
    DeclineElicitationResponse,
    EnvVariable,
    McpServerStdio,
    RequestPermissionResponse,
)

from tests.sdk import ROOT

PEER = Path(__file__).with_name("wire_peer.py")
BIN = Path(sys.executable).parent


async def bare_sidecar(tmp_path: Path, name: str, args: list[str]) -> asyncio.subprocess.Process:
    """``acp-sidecar`` as a subprocess (console driver, its store under ``tmp_path``), sent
    ``initialize`` (id 0) and a ``session/new`` (id 1) naming one stdio server ``name`` run as
    ``python *args``; nothing is read yet."""
    server = {"name": name, "command": sys.executable, "args": args, "env": []}
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": str(tmp_path), "mcpServers": [server]},
        },
    ]
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acp_sidecar",
        "--store",
        str(tmp_path / "store"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env={"PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
    await process.stdin.drain()
    return process


def peer(state: Path, name: str = "peer") -> McpServerStdio:
    """Our test server, keeping its pid and what it saw in ``state``."""
    state.mkdir(parents=True, exist_ok=True)
    return McpServerStdio(name=name, command=sys.executable, args=[str(PEER), str(state)], env=[])


def console_script(script: str, name: str, *args: str, **env: str) -> McpServerStdio:
    """A server installed as a console script beside the test's Python (skips without it)."""
    path = BIN / script
    if not path.exists():
        found = shutil.which(script)
        if found is None:
            pytest.skip(f"{script} is not installed (pip install {script})")
        path = Path(found)
    return McpServerStdio(
        name=name,
        command=str(path),
        args=list(args),
        env=[EnvVariable(name=k, value=v) for k, v in env.items()],
    )


class McpEditor:
    """Keeps commands and messages; allows each dialog once; answers elicitations from
    ``elicit`` (``None``: decline)."""

    def __init__(self, elicit: dict[str, Any] | None = None) -> None:
        self.commands: list[dict[str, str]] = []
        self.said: list[str] = []
        self.asked: list[str] = []
        self.elicited: list[dict[str, Any]] = []
        self.elicit = elicit
        self.changed = asyncio.Event()

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AvailableCommandsUpdate):
            self.commands.append({c.name: c.description for c in update.available_commands})
        elif isinstance(update, AgentMessageChunk):
            self.said.append(update.content.text)
        self.changed.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: Any, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append(tool_call.title or "")
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="allow_once")
        )

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.elicited.append({"message": message, "mode": mode, **kwargs})
        if self.elicit is None:
            return DeclineElicitationResponse(action="decline")
        return AcceptElicitationResponse(action="accept", content=self.elicit)

    def has_commands(self) -> bool:
        """Whether a slash-command list arrived."""
        return bool(self.commands)

    async def until(self, check: Any, timeout: float = 10.0) -> None:
        """Wait until ``check()`` holds (re-checked on every update)."""
        async with asyncio.timeout(timeout):
            while not check():
                self.changed.clear()
                await self.changed.wait()


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` now (from ``/proc``)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rpartition(")")[2].split()[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"
