"""A plain NDJSON client for server tests: every message the sidecar writes is checked.

Each line read must be one JSON object that validates against the official ACP schema of the
client's :attr:`WireClient.version` (v1 unless a test sets 2; ``tests/acp_schema.py``);
responses are validated against the method they answer.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import IO, Any

from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.stdio import serve
from tests.acp_schema import Version, update_kinds, validate_agent_message
from tests.drivers import ScriptDriver

ROOT = Path(__file__).resolve().parents[2]
READ_LIMIT = 256 * 1024 * 1024
TIMEOUT = 20.0
"""Seconds one read may wait: a hang guard (generous; a read ends when its message comes)."""


class WireClient:
    """The client end of an ACP connection, speaking raw lines."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.ids = itertools.count(1)
        self.sent_methods: dict[Any, str] = {}
        self.updates: list[dict[str, Any]] = []
        self.agent_requests: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []
        self.valid_lines: set[bytes] = set()
        self.initialized = False
        """Whether an ``initialize`` of this client succeeded (it is refused a second time)."""
        self.version: Version = 1
        """The ACP version whose schema judges what the sidecar writes."""
        self.unstable = False
        """Whether that version's unstable schema judges instead (features not stabilized)."""

    # ---- writing ----

    async def send_line(self, line: bytes) -> None:
        self.writer.write(line if line.endswith(b"\n") else line + b"\n")
        await self.writer.drain()

    async def send(self, message: dict[str, Any]) -> None:
        if "id" in message and "method" in message:
            self.sent_methods[message["id"]] = message["method"]
        await self.send_line(json.dumps(message).encode())

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def send_request(self, method: str, params: Any = None, msg_id: Any = None) -> Any:
        msg_id = next(self.ids) if msg_id is None else msg_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return msg_id

    async def respond(self, msg_id: Any, result: Any) -> None:
        await self.send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def close(self) -> None:
        self.writer.close()

    # ---- reading ----

    async def receive(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next message, validated against the schema."""
        line = await asyncio.wait_for(self.reader.readline(), timeout)
        assert line, "the sidecar closed its output"
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        message = json.loads(line.decode("utf-8"))
        if line not in self.valid_lines:  # a repeated line was validated already
            self.check(message)
            if len(self.valid_lines) < 10_000:
                self.valid_lines.add(line)
        self.received.append(message)
        return message

    def check(self, message: Any) -> None:
        """Validate one message the sidecar wrote against the ACP schema."""
        assert isinstance(message, dict)
        is_response = "id" in message and "method" not in message
        method = self.sent_methods.get(message["id"]) if is_response else None
        validate_agent_message(
            message, request_method=method, unstable=self.unstable, version=self.version
        )
        if self.version == 2 and message.get("method") == "session/update":
            # The v2 schema's open union accepts any kind: a v1-only one must not get through.
            kind = message["params"]["update"]["sessionUpdate"]
            known = update_kinds(unstable=self.unstable, version=2)
            assert kind in known, f"not a v2 update kind: {kind}"

    async def next_response(self, msg_id: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        """Read until the response to ``msg_id``; updates and agent requests are kept."""
        while True:
            message = await self.receive(timeout)
            if "method" in message:
                if message["method"] == "session/update":
                    self.updates.append(message)
                elif "id" in message:
                    self.agent_requests.append(message)
                continue
            if message.get("id") == msg_id:
                return message
            raise AssertionError(f"unexpected message {message}")

    async def next_agent_request(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """Read until the sidecar sends a request (updates are kept)."""
        while True:
            message = await self.receive(timeout)
            if message.get("method") == "session/update":
                self.updates.append(message)
            elif "method" in message and "id" in message:
                return message
            else:
                raise AssertionError(f"unexpected message {message}")

    async def next_update(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        message = await self.receive(timeout)
        assert message.get("method") == "session/update", message
        self.updates.append(message)
        return message

    async def request(self, method: str, params: Any = None, msg_id: Any = None) -> dict[str, Any]:
        return await self.next_response(await self.send_request(method, params, msg_id))

    async def result(self, method: str, params: Any = None) -> Any:
        response = await self.request(method, params)
        assert "result" in response, response
        return response["result"]

    async def error(self, method: str, params: Any = None) -> dict[str, Any]:
        response = await self.request(method, params)
        assert "error" in response, response
        return response["error"]

    # ---- the usual steps ----

    async def initialize(self, **capabilities: Any) -> dict[str, Any]:
        params = {"protocolVersion": 1, "clientCapabilities": capabilities}
        result: dict[str, Any] = await self.result("initialize", params)
        self.initialized = True
        return result

    async def new_session(self, cwd: str = "/tmp") -> str:
        result = await self.result("session/new", {"cwd": cwd, "mcpServers": []})
        session_id: str = result["sessionId"]
        return session_id

    async def start_prompt(self, session_id: str, text: str, *, echoed: bool = True) -> Any:
        """Send a prompt; its request id. ``echoed``: read up to the echo an accepted prompt
        is answered with before its turn's updates (a ``user_message_chunk`` of its text under
        a ``messageId`` of its own) and check it; updates sent before it (the session's
        commands and options, a notice, another session's turn) are kept in :attr:`updates`."""
        msg_id = await self.send_request(
            "session/prompt",
            {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]},
        )
        if echoed:
            await self.next_echo(session_id, text)
        return msg_id

    async def next_echo(self, session_id: str, text: str) -> str:
        """Read up to the echo of the prompt ``text`` in ``session_id`` (see
        :meth:`start_prompt`), check it, and return its ``messageId``."""
        while True:
            echo = (await self.next_update())["params"]
            update = echo["update"]
            if echo["sessionId"] != session_id or update["sessionUpdate"] != "user_message_chunk":
                continue  # sent before the turn (what a session says when opened, a notice)
            assert update["content"] == {"type": "text", "text": text}, update
            message_id = update["messageId"]
            assert isinstance(message_id, str) and message_id, update
            return message_id

    def texts(self) -> list[str]:
        """The text of every agent message chunk received so far."""
        return [
            u["params"]["update"]["content"]["text"]
            for u in self.updates
            if u["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        ]


async def open_pipe_streams(
    read_fd: int, write_fd: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=READ_LIMIT)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()),
        os.fdopen(write_fd, "wb", buffering=0),
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


@asynccontextmanager
async def served(server: AcpServer | None = None) -> AsyncIterator[tuple[WireClient, AcpServer]]:
    """An in-process server on a pair of pipes and the client end of them.

    On exit the client closes its output (end of file for the server), and the server must
    shut down cleanly, returning 0.
    """
    server = server or AcpServer(ScriptDriver, cancel_grace=0.3)
    to_server_r, to_server_w = os.pipe()
    to_client_r, to_client_w = os.pipe()
    task = asyncio.create_task(serve(server, to_server_r, to_client_w, handle_signals=False))
    reader, writer = await open_pipe_streams(to_client_r, to_server_w)
    client = WireClient(reader, writer)
    try:
        yield client, server
    finally:
        client.close()
        status = await asyncio.wait_for(task, 30)  # hang guards
        assert status == 0
        rest = await asyncio.wait_for(reader.read(), 30)
        for line in rest.splitlines():
            client.check(json.loads(line))


def cli_server(*args: str) -> AcpServer:
    """The server ``acp-sidecar serve ARGS`` builds (the config file layered under the
    options, the driver and tools they name), for :func:`served` in this process.

    Process-wide set-up the command does first (hardening, taking over fd 1, logging, the
    child-environment rules) is not done: tests of those start a process."""
    from acp_sidecar import cli
    from acp_sidecar.agent.driver import load_driver_factory
    from acp_sidecar.server.settings import ServeSettings
    from acp_sidecar.store import SessionStore

    options = cli.with_config_file(cli.build_parser().parse_args(["serve", *args]))
    settings = ServeSettings.from_args(options)
    tools = cli.tools_provider(options)
    factory = (
        load_driver_factory(options.driver) if options.driver else settings.driver_factory(tools)
    )
    live = settings.live
    return AcpServer(
        factory,
        tools=tools,
        store=lambda: SessionStore(options.store, fsync=options.fsync),
        allow_outside_workspace=live.allow_outside_workspace,
        mcp_start_timeout=live.mcp_start_timeout,
        default_mode=live.default_mode,
        settings=settings,
        acp_v2=bool(options.acp_v2),
    )


def cli_served(*args: str) -> AbstractAsyncContextManager[tuple[WireClient, AcpServer]]:
    """:func:`served` with the server of ``acp-sidecar serve ARGS`` (:func:`cli_server`)."""
    return served(cli_server(*args))


async def start_sidecar(
    *args: str,
    env: dict[str, str] | None = None,
    stderr: int = asyncio.subprocess.PIPE,
    preexec_fn: Callable[[], None] | None = None,
    argv: Sequence[str] | None = None,
    inherit_env: bool = True,
) -> tuple[WireClient, asyncio.subprocess.Process]:
    """``python -m acp_sidecar ARGS`` as a subprocess (this repository on ``PYTHONPATH``),
    and the client end of its stdio.

    ``env`` is added to this process's environment, or is the whole of the child's when
    ``inherit_env`` is false (as :mod:`tests.unprivileged` wants). ``argv`` replaces the
    command (e.g. :func:`tests.unprivileged.command`); ``preexec_fn`` runs in the child before
    the sidecar starts (resource limits)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})} if inherit_env else env
    process = await asyncio.create_subprocess_exec(
        *(argv or [sys.executable, "-m", "acp_sidecar", *args]),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        cwd=ROOT,
        env=environment,
        limit=READ_LIMIT,
        preexec_fn=preexec_fn,
    )
    assert process.stdin is not None and process.stdout is not None
    return WireClient(process.stdout, process.stdin), process


@asynccontextmanager
async def spawned(
    *args: str,
    env: dict[str, str] | None = None,
    stderr: int = asyncio.subprocess.PIPE,
    preexec_fn: Callable[[], None] | None = None,
    argv: Sequence[str] | None = None,
    inherit_env: bool = True,
) -> AsyncIterator[tuple[WireClient, asyncio.subprocess.Process]]:
    """:func:`start_sidecar`, killed on the way out if it is still running."""
    client, process = await start_sidecar(
        *args, env=env, stderr=stderr, preexec_fn=preexec_fn, argv=argv, inherit_env=inherit_env
    )
    try:
        yield client, process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@asynccontextmanager
async def initialized(
    *args: str,
    env: dict[str, str] | None = None,
    stderr: int = asyncio.subprocess.PIPE,
) -> AsyncIterator[tuple[WireClient, asyncio.subprocess.Process]]:
    """:func:`spawned`, with the client's ``initialize`` done."""
    async with spawned(*args, env=env, stderr=stderr) as (client, process):
        await client.initialize()
        yield client, process


def popen_sidecar(
    *args: str, stderr: IO[bytes], cwd: Path = ROOT
) -> tuple[subprocess.Popen[bytes], int, int]:
    """``python -m acp_sidecar ARGS`` as a subprocess (this repository on ``PYTHONPATH``), and
    the descriptors of its stdin and stdout, non-blocking: for a client that writes and reads
    on its own schedule (``os.write``/``os.read``, a selector)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "acp_sidecar", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin.fileno(), process.stdout.fileno()
    os.set_blocking(stdin, False)
    os.set_blocking(stdout, False)
    return process, stdin, stdout
