"""Agent → client requests: permission and file system, capabilities and cancellation."""

from __future__ import annotations

import asyncio

import pytest

from acp_sidecar.agent.driver import ClientCapabilityError
from acp_sidecar.protocol import (
    INTERNAL_ERROR,
    AcpError,
    ClientCapabilities,
    FileSystemCapability,
    ReadTextFileRequest,
    WriteTextFileRequest,
)
from acp_sidecar.server.app import AcpServer
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.errors import ToolCancelledError
from tests.server.wire import WireClient


async def test_permission_round_trip(ready: WireClient) -> None:
    session = await ready.new_session()
    prompt = await ready.start_prompt(session, "permission")
    request = await ready.next_agent_request()
    assert request["method"] == "session/request_permission"
    assert request["params"]["sessionId"] == session
    assert [o["optionId"] for o in request["params"]["options"]] == ["allow", "reject"]
    await ready.respond(request["id"], {"outcome": {"outcome": "selected", "optionId": "allow"}})
    response = await ready.next_response(prompt)
    assert response["result"] == {"stopReason": "end_turn"}
    assert ready.texts() == ["permission: selected allow"]


async def test_fs_read_and_write_go_through_the_client(ready: WireClient) -> None:
    session = await ready.new_session()
    prompt = await ready.start_prompt(session, "read /tmp/notes.txt")
    request = await ready.next_agent_request()
    assert request["method"] == "fs/read_text_file"
    assert request["params"] == {"sessionId": session, "path": "/tmp/notes.txt"}
    await ready.respond(request["id"], {"content": "hello from the editor"})
    assert (await ready.next_response(prompt))["result"] == {"stopReason": "end_turn"}

    prompt = await ready.start_prompt(session, "write /tmp/out.txt new text")
    request = await ready.next_agent_request()
    assert request["method"] == "fs/write_text_file"
    assert request["params"]["content"] == "new text"
    await ready.respond(request["id"], {})
    assert (await ready.next_response(prompt))["result"] == {"stopReason": "end_turn"}
    assert ready.texts() == ["read: hello from the editor", "written"]


async def test_a_client_error_reaches_the_driver_as_acp_error(ready: WireClient) -> None:
    session = await ready.new_session()
    prompt = await ready.start_prompt(session, "read /nope")
    request = await ready.next_agent_request()
    await ready.send(
        {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32002, "message": "no file"}}
    )
    response = await ready.next_response(prompt)
    # The test driver does not catch it: the prompt fails with that same AcpError.
    assert response["error"] == {"code": -32002, "message": "no file"}
    assert await ready.new_session()


async def test_fs_without_the_capability_is_refused_before_sending(wire: WireClient) -> None:
    await wire.initialize()  # no fs capability
    session = await wire.new_session()
    response = await wire.next_response(await wire.start_prompt(session, "read /tmp/x"))
    assert response["error"]["code"] == INTERNAL_ERROR
    assert "fs.readTextFile" in response["error"]["message"]
    assert wire.agent_requests == []


async def test_cancelling_the_turn_abandons_a_pending_client_request(ready: WireClient) -> None:
    session = await ready.new_session()
    prompt = await ready.start_prompt(session, "permission")
    request = await ready.next_agent_request()
    await ready.notify("session/cancel", {"sessionId": session})
    cancel = await ready.receive()
    assert cancel == {
        "jsonrpc": "2.0",
        "method": "$/cancel_request",
        "params": {"requestId": request["id"]},
    }
    assert (await ready.next_response(prompt))["result"] == {"stopReason": "cancelled"}
    # A late answer to the abandoned request is dropped quietly.
    await ready.respond(request["id"], {"outcome": {"outcome": "cancelled"}})
    assert await ready.new_session()


# ---- the proxy on its own -------------------------------------------------------------------


async def test_proxy_checks_each_fs_capability_separately(
    connection: tuple[WireClient, AcpServer],
) -> None:
    _wire, server = connection
    server.client_capabilities = ClientCapabilities(fs=FileSystemCapability(read_text_file=True))
    with pytest.raises(ClientCapabilityError, match=r"fs\.writeTextFile"):
        await server.client.write_text_file(
            WriteTextFileRequest(session_id="s", path="/tmp/x", content="")
        )


async def test_proxy_raises_tool_cancelled_when_its_signal_fires(
    connection: tuple[WireClient, AcpServer],
) -> None:
    wire, server = connection
    server.client_capabilities = ClientCapabilities(fs=FileSystemCapability(read_text_file=True))
    signal = CancelSignal()
    call = asyncio.create_task(
        server.client.read_text_file(
            ReadTextFileRequest(session_id="s", path="/tmp/x"), signal=signal
        )
    )
    request = await wire.next_agent_request()
    signal.cancel("user pressed stop")
    with pytest.raises(ToolCancelledError, match="user pressed stop"):
        await call
    assert (await wire.receive())["params"] == {"requestId": request["id"]}
    assert len(server.protocol.outgoing) == 0


async def test_proxy_task_cancellation_abandons_the_wait(
    connection: tuple[WireClient, AcpServer],
) -> None:
    wire, server = connection
    server.client_capabilities = ClientCapabilities(fs=FileSystemCapability(read_text_file=True))
    call = asyncio.create_task(
        server.client.read_text_file(ReadTextFileRequest(session_id="s", path="/tmp/x"))
    )
    request = await wire.next_agent_request()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert (await wire.receive())["params"] == {"requestId": request["id"]}
    assert len(server.protocol.outgoing) == 0


async def test_proxy_rejects_an_answer_that_does_not_decode(
    connection: tuple[WireClient, AcpServer],
) -> None:
    wire, server = connection
    server.client_capabilities = ClientCapabilities(fs=FileSystemCapability(read_text_file=True))
    call = asyncio.create_task(
        server.client.read_text_file(ReadTextFileRequest(session_id="s", path="/tmp/x"))
    )
    request = await wire.next_agent_request()
    await wire.respond(request["id"], {"content": 42})
    with pytest.raises(AcpError, match="content"):
        await call


@pytest.mark.parametrize("answer", [None, {}])
async def test_proxy_accepts_null_where_the_response_has_no_required_field(
    connection: tuple[WireClient, AcpServer], answer: object
) -> None:
    wire, server = connection
    server.client_capabilities = ClientCapabilities(fs=FileSystemCapability(write_text_file=True))
    call = asyncio.create_task(
        server.client.write_text_file(WriteTextFileRequest(session_id="s", path="/x", content=""))
    )
    request = await wire.next_agent_request()
    await wire.respond(request["id"], answer)
    assert (await call).meta is None


@pytest.mark.parametrize(
    ("method", "answer"),
    [("read", None), ("read", {}), ("permission", None), ("permission", {})],
)
async def test_proxy_refuses_null_where_the_response_has_a_required_field(
    connection: tuple[WireClient, AcpServer], method: str, answer: object
) -> None:
    from acp_sidecar.protocol import RequestPermissionRequest, ToolCallUpdate

    wire, server = connection
    server.client_capabilities = ClientCapabilities(fs=FileSystemCapability(read_text_file=True))
    client = server.client
    pending = (
        client.read_text_file(ReadTextFileRequest(session_id="s", path="/x"))
        if method == "read"
        else client.request_permission(
            RequestPermissionRequest(
                session_id="s", tool_call=ToolCallUpdate(tool_call_id="c"), options=[]
            )
        )
    )
    call = asyncio.create_task(pending)
    request = await wire.next_agent_request()
    await wire.respond(request["id"], answer)
    with pytest.raises(AcpError, match="is invalid"):
        await call
