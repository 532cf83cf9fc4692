"""The official ACP Python SDK's client as a subprocess peer of ``acp-sidecar``.

:func:`sdk_sidecar` spawns the sidecar the way an editor on the SDK does and initializes the
connection; :class:`Wire` sees every message on the way and validates each one the sidecar
writes against the official schema, keeping updates and permission requests as wire JSON.
The editors that answer it (the SDK client's handlers) are in :mod:`tests.fakes`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
from acp.connection import StreamDirection, StreamEvent
from acp.schema import ClientCapabilities

from tests.acp_schema import SchemaViolation, only_unstable, validate_agent_message
from tests.isolation import child_variables

ROOT = Path(__file__).resolve().parents[1]


class SchemaObserver:
    """Validates every message the sidecar writes (the SDK's incoming direction) against the
    stable schema; with ``unstable``, what only the unstable schema defines (the answer to
    ``session/fork``, plan operations: :func:`tests.acp_schema.only_unstable`) against that
    one.

    The SDK only logs what an observer raises: each violation is also kept in
    :attr:`violations`, which :func:`sdk_sidecar` and :func:`tests.in_process.sdk_served`
    check is empty when the connection ends (:meth:`check_clean`)."""

    def __init__(self, unstable: bool = False) -> None:
        self.methods: dict[Any, str] = {}
        self.checked = 0
        self.unstable = unstable
        self.violations: list[str] = []

    def __call__(self, event: StreamEvent) -> None:
        message = event.message
        if event.direction is StreamDirection.OUTGOING:
            if "method" in message and "id" in message:
                self.methods[message["id"]] = message["method"]
            return
        is_response = "id" in message and "method" not in message
        method = self.methods.get(message["id"]) if is_response else None
        unstable = self.unstable and only_unstable(message, method)
        try:
            validate_agent_message(message, request_method=method, unstable=unstable)
        except (SchemaViolation, ValueError) as violation:
            self.violations.append(str(violation))
            raise
        self.checked += 1

    def check_clean(self, since: int = 0) -> None:
        """Raise unless every message seen was valid (from violation ``since`` on)."""
        assert not self.violations[since:], "\n".join(self.violations[since:])


class Wire(SchemaObserver):
    """Also keeps each update and each permission request's card, as wire JSON."""

    def __init__(self, unstable: bool = False) -> None:
        super().__init__(unstable)
        self.asked: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []
        self.initialized: Any = None
        """The answer to ``initialize`` (set by :func:`sdk_sidecar`)."""

    def __call__(self, event: StreamEvent) -> None:
        super().__call__(event)
        message = event.message
        if event.direction is not StreamDirection.INCOMING:
            return
        if message.get("method") == "session/update":
            self.updates.append(message["params"]["update"])
        elif message.get("method") == "session/request_permission":
            self.asked.append(message["params"]["toolCall"])

    def cards(self) -> list[dict[str, Any]]:
        """The tool-call updates since the last call, taking every update kept so far."""
        taken = [u for u in self.updates if u["sessionUpdate"] in ("tool_call", "tool_call_update")]
        self.updates = []
        return taken


class Transcript:
    """An observer keeping every message the sidecar writes, in order, as wire JSON (the
    :class:`Wire` checks them): what several sessions on one connection said, each update
    with its session, and where the answers came among the updates."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def __call__(self, event: StreamEvent) -> None:
        if event.direction is StreamDirection.INCOMING:
            self.messages.append(event.message)

    def updates(self, session: str, since: int = 0) -> list[dict[str, Any]]:
        """The updates of ``session`` from message ``since`` on."""
        return [
            m["params"]["update"]
            for m in self.messages[since:]
            if m.get("method") == "session/update" and m["params"]["sessionId"] == session
        ]


@asynccontextmanager
async def sdk_sidecar(
    client: Any,
    *args: str,
    store: Path | None = None,
    capabilities: ClientCapabilities | None = None,
    observers: Sequence[Callable[[StreamEvent], None]] = (),
    unstable: bool = False,
    env: dict[str, str] | None = None,
) -> AsyncIterator[tuple[Any, Wire]]:
    """``acp-sidecar ARGS`` spawned by the SDK with ``client`` answering it, initialized; the
    sidecar must exit cleanly when the connection closes. Sessions go to ``store`` (default:
    the suite's temporary store); ``observers`` see every message after the :class:`Wire`;
    ``unstable`` lets the SDK handle the methods it calls unstable (``elicitation/create``,
    ``session/fork``) and judges what only the unstable schema defines by it (see
    :class:`SchemaObserver`); ``env`` adds to the sidecar's environment."""
    wire = Wire(unstable)
    # The SDK passes on only HOME, PATH and a few more of ours: the isolation goes explicitly.
    env = (
        child_variables()
        | {"PYTHONPATH": str(ROOT)}
        | ({"ACP_SIDECAR_STORE": str(store)} if store is not None else {})
        | (env or {})
    )
    async with acp.spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "acp_sidecar",
        *args,
        env=env,
        cwd=ROOT,
        observers=[wire, *observers],
        use_unstable_protocol=unstable,
        # The SDK waits 2 s for an exit after closing stdin, then terminates: on a loaded
        # machine a clean shutdown (MCP servers stopped first) takes longer. A hang guard.
        transport_kwargs={"shutdown_timeout": 30.0},
    ) as (connection, process):
        wire.initialized = await connection.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=capabilities or ClientCapabilities(),
        )
        yield connection, wire
    assert process.returncode == 0
    wire.check_clean()


async def new_session(connection: Any, cwd: Path, mode: str | None = None) -> str:
    """A new session working in ``cwd`` (switched to ``mode`` when given)."""
    session: str = (await connection.new_session(cwd=str(cwd), mcp_servers=[])).session_id
    if mode is not None:
        await connection.set_session_mode(session_id=session, mode_id=mode)
    return session


async def prompt(connection: Any, session: str, *blocks: Any) -> str:
    """Run one prompt (a string is a text block); its stop reason."""
    content = [acp.text_block(b) if isinstance(b, str) else b for b in blocks]
    done = await connection.prompt(session_id=session, prompt=content)
    return str(done.stop_reason)


def command(name: str, **arguments: Any) -> str:
    """The console command ``/NAME {json}``."""
    return f"/{name} {json.dumps(arguments)}"
