"""A request's task answers it itself, from its last step; cancelled requests still get one
answer each."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import pytest

from acp_sidecar.protocol import REQUEST_CANCELLED
from acp_sidecar.server.app import AcpServer
from acp_sidecar.server.handlers import HANDLERS
from tests.drivers import ScriptDriver


class RecordingWire:
    """Stands in for the wire's writer: keeps every message written, in order."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, line: bytes) -> None:
        self.messages.append(json.loads(line))

    write_now = write

    async def drain(self) -> None:
        return None


def started_server() -> tuple[AcpServer, RecordingWire]:
    server = AcpServer(ScriptDriver)
    wire = RecordingWire()
    server.protocol.attach(cast(Any, wire))
    server.initialized = True
    return server, wire


def request(msg_id: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


async def test_a_request_is_answered_in_the_step_its_handler_ends() -> None:
    server, wire = started_server()
    server.protocol.receive_line(request(1, "authenticate", {"methodId": "configure"}))
    assert wire.messages == []
    await asyncio.sleep(0)  # one turn of the loop: the request's task runs its one step
    assert wire.messages == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    for _ in range(3):
        await asyncio.sleep(0)
    assert len(wire.messages) == 1  # and its done callback does not answer again
    assert server.protocol.handler_tasks() == []


async def test_a_failing_handler_is_answered_once_with_its_error() -> None:
    server, wire = started_server()
    server.protocol.receive_line(
        request(1, "session/set_mode", {"sessionId": "nope", "modeId": "x"})
    )
    for _ in range(3):
        await asyncio.sleep(0)
    assert [m["id"] for m in wire.messages] == [1]
    assert "error" in wire.messages[0]


async def test_a_request_cancelled_before_its_handler_starts_is_answered_once() -> None:
    server, wire = started_server()
    server.protocol.receive_line(request(7, "authenticate", {"methodId": "configure"}))
    server.protocol.receive_line(
        json.dumps(
            {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": 7}}
        ).encode()
    )
    for _ in range(3):
        await asyncio.sleep(0)
    assert [m["id"] for m in wire.messages] == [7]
    assert wire.messages[0]["error"]["code"] == REQUEST_CANCELLED


async def test_a_request_cancelled_at_shutdown_is_answered_once() -> None:
    server, wire = started_server()
    server.protocol.receive_line(request(1, "session/new", {"cwd": "/", "mcpServers": []}))
    await asyncio.sleep(0.05)
    session = wire.messages[0]["result"]["sessionId"]
    wire.messages.clear()
    server.protocol.receive_line(
        request(
            2,
            "session/prompt",
            {"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]},
        )
    )
    await asyncio.sleep(0.05)
    server.protocol.cancel_all_requests()  # the request task itself, not the turn's signal
    await asyncio.sleep(1.0)
    answers = [m for m in wire.messages if "id" in m]
    assert [m["id"] for m in answers] == [2]
    assert answers[0]["error"]["code"] == REQUEST_CANCELLED


def cancel_request(msg_id: int) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": msg_id}}
    ).encode()


async def test_a_coroutine_notification_handler_runs_and_is_never_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # pygls runs a notification through the same handler path as a request, under an id
    # it makes up: only requests may answer from their task.
    ran: list[str] = []

    async def cancel(server: AcpServer, params: Any) -> None:
        await asyncio.sleep(0)
        ran.append(params.session_id)

    monkeypatch.setitem(HANDLERS, "session/cancel", cancel)
    server, wire = started_server()
    server.protocol.receive_line(
        json.dumps(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "x"}}
        ).encode()
    )
    for _ in range(5):
        await asyncio.sleep(0)
    assert ran == ["x"]
    assert wire.messages == []
    assert server.protocol.handler_tasks() == []


async def test_shutdown_waits_for_a_request_the_client_cancelled_just_before() -> None:
    # The cancelled prompt is still winding its turn down: close() must not return (and
    # the wire close) before it answers.
    server, wire = started_server()
    server.protocol.receive_line(request(1, "session/new", {"cwd": "/", "mcpServers": []}))
    await asyncio.sleep(0.05)
    session = wire.messages[0]["result"]["sessionId"]
    wire.messages.clear()
    prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "ignore-cancel"}]}
    server.protocol.receive_line(request(2, "session/prompt", prompt))
    await asyncio.sleep(0.05)
    server.protocol.receive_line(cancel_request(2))
    server.protocol.receive_line(cancel_request(2))  # a held cancel is acted on again
    await asyncio.sleep(0)
    # The turn ignores cancellation for an hour: close() returning at all is its shutdown
    # bound at work (the wait is a hang guard).
    await asyncio.wait_for(server.close(1.2), 30)
    answers = [m for m in wire.messages if "id" in m]
    assert [m["id"] for m in answers] == [2]
    assert answers[0]["error"]["code"] == REQUEST_CANCELLED
