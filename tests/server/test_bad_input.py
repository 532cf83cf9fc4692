"""Issue 3 §3: each bad input gets its exact answer, and the server keeps serving."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_sidecar.protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND,
)
from acp_sidecar.server.app import AcpServer
from tests.server.wire import WireClient


async def assert_still_serving(wire: WireClient) -> None:
    """A following initialize (when none succeeded yet) and session/new both work."""
    if not wire.initialized:
        result = await wire.initialize()
        assert result["protocolVersion"] == 1
    assert await wire.new_session()


async def test_a_line_that_is_not_json_is_a_parse_error(wire: WireClient) -> None:
    await wire.send_line(b'{"jsonrpc": "2.0", "id": 1, "method": ')
    message = await wire.receive()
    assert message["id"] is None
    assert message["error"]["code"] == PARSE_ERROR
    await assert_still_serving(wire)


async def test_a_line_that_is_not_utf8_is_a_parse_error(wire: WireClient) -> None:
    await wire.send_line(b'{"jsonrpc":"2.0","id":1,"method":"initialize","x":"\xff\xfe"}')
    message = await wire.receive()
    assert message["id"] is None
    assert message["error"]["code"] == PARSE_ERROR
    assert "UTF-8" in message["error"]["message"]
    await assert_still_serving(wire)


@pytest.mark.parametrize(
    ("line", "answer_id"),
    [
        (b"[]", None),
        (b'[{"jsonrpc":"2.0","id":1,"method":"initialize"}]', None),
        (b"42", None),
        (b'"initialize"', None),
        (b'{"id": 7, "method": "initialize", "params": {"protocolVersion": 1}}', 7),
        (b'{"jsonrpc": "1.0", "id": 8, "method": "initialize"}', 8),
        (b'{"jsonrpc": "2.0", "id": 9, "method": 12}', 9),
        (b'{"jsonrpc": "2.0", "id": {"no": 1}, "method": "initialize"}', None),
        (b'{"jsonrpc": "2.0", "id": 10, "method": "initialize", "params": "x"}', 10),
        (b'{"jsonrpc": "2.0"}', None),
    ],
)
async def test_json_that_is_not_json_rpc_is_an_invalid_request(
    wire: WireClient, line: bytes, answer_id: int | None
) -> None:
    await wire.send_line(line)
    message = await wire.receive()
    assert message["id"] == answer_id
    assert message["error"]["code"] == INVALID_REQUEST
    await assert_still_serving(wire)


async def test_an_unknown_method_is_method_not_found(wire: WireClient) -> None:
    error = await wire.error("session/teleport", {"sessionId": "x"})
    assert error["code"] == METHOD_NOT_FOUND
    assert "session/teleport" in error["message"]
    await assert_still_serving(wire)


@pytest.mark.parametrize("method", ["session/load", "session/list"])
async def test_methods_not_implemented_yet_are_method_not_found(
    ready: WireClient, method: str
) -> None:
    error = await ready.error(method, {"sessionId": "x", "cwd": "/tmp", "mcpServers": []})
    assert error["code"] == METHOD_NOT_FOUND
    await assert_still_serving(ready)


async def test_an_unknown_notification_is_ignored(wire: WireClient) -> None:
    await wire.notify("_zed/something", {"anything": True})
    await wire.notify("session/teleport", {})
    # The next message on the wire is the answer to the next request: nothing came in between.
    await assert_still_serving(wire)
    assert [m["id"] for m in wire.received] == [1, 2]


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("initialize", {}, "protocolVersion"),
        ("initialize", {"protocolVersion": "one"}, "protocolVersion"),
        ("initialize", None, "protocolVersion"),
        ("initialize", [1], "params"),
        ("session/new", {"mcpServers": []}, "cwd"),
        ("session/new", {"cwd": 5, "mcpServers": []}, "cwd"),
        ("session/new", {"cwd": "relative/dir", "mcpServers": []}, "cwd"),
        ("session/prompt", {"sessionId": "s"}, "prompt"),
        ("session/prompt", {"sessionId": "s", "prompt": [{"type": "video"}]}, "prompt/0/type"),
        ("session/prompt", {"sessionId": "s", "prompt": [{"type": "text"}]}, "prompt/0/text"),
    ],
)
async def test_wrong_or_missing_params_are_invalid_params_naming_the_field(
    wire: WireClient, method: str, params: object, field: str
) -> None:
    if method != "initialize":
        await wire.initialize()
    error = await wire.error(method, params)
    assert error["code"] == INVALID_PARAMS
    assert field in error["message"]
    await assert_still_serving(wire)


async def test_an_unknown_session_is_resource_not_found_naming_it(ready: WireClient) -> None:
    error = await ready.error(
        "session/prompt",
        {"sessionId": "no-such-session", "prompt": [{"type": "text", "text": "hi"}]},
    )
    assert error["code"] == RESOURCE_NOT_FOUND
    assert "no-such-session" in error["message"]
    await ready.notify("session/cancel", {"sessionId": "no-such-session"})
    await assert_still_serving(ready)


async def test_a_second_prompt_while_one_runs_is_refused_and_the_first_is_unaffected(
    ready: WireClient,
) -> None:
    session = await ready.new_session()
    first = await ready.start_prompt(session, "wait")
    assert (await ready.next_update())["params"]["update"]["content"]["text"] == "started"
    error = await ready.error(
        "session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "echo x"}]}
    )
    assert error["code"] == INVALID_REQUEST
    assert session in error["message"]
    # The first turn is still running: it ends only when cancelled.
    await ready.notify("session/cancel", {"sessionId": session})
    response = await ready.next_response(first)
    assert response["result"] == {"stopReason": "cancelled"}
    assert ready.texts() == ["started"]
    await assert_still_serving(ready)


async def test_an_empty_line_is_ignored(wire: WireClient) -> None:
    await wire.send_line(b"")
    await wire.send_line(b"   \t")
    await wire.send_line(b"\r")
    await assert_still_serving(wire)
    assert [m["id"] for m in wire.received] == [1, 2]


async def test_a_handler_that_raises_is_an_internal_error(ready: WireClient) -> None:
    session = await ready.new_session()
    other = await ready.new_session()
    running = await ready.start_prompt(other, "wait")
    await ready.next_update()
    response = await ready.next_response(await ready.start_prompt(session, "raise"))
    assert response["error"]["code"] == INTERNAL_ERROR
    assert "driver exploded" in response["error"]["message"]
    # Nothing else affected: the session still works, and the other turn still runs.
    ok = await ready.next_response(await ready.start_prompt(session, "echo again"))
    assert ok["result"] == {"stopReason": "end_turn"}
    await ready.notify("session/cancel", {"sessionId": other})
    assert (await ready.next_response(running))["result"] == {"stopReason": "cancelled"}
    await assert_still_serving(ready)


async def test_requests_before_initialize_are_refused(wire: WireClient) -> None:
    error = await wire.error("session/new", {"cwd": "/tmp", "mcpServers": []})
    assert error["code"] == INVALID_REQUEST
    assert "initialize" in error["message"]
    await wire.notify("session/cancel", {"sessionId": "x"})
    await assert_still_serving(wire)


async def test_a_result_that_cannot_be_encoded_is_an_internal_error(
    connection: tuple[WireClient, AcpServer],
) -> None:
    wire, server = connection
    await wire.initialize()
    server.protocol.fm.features["_test/nan"] = _answer_nan
    response = await wire.request("_test/nan", {})
    assert response["error"]["code"] == INTERNAL_ERROR
    await assert_still_serving(wire)


async def _answer_nan(params: object) -> object:
    return {"value": float("nan")}


async def test_an_answer_over_16_mib_is_an_internal_error(
    connection: tuple[WireClient, AcpServer],
) -> None:
    """Issue 11 §6: what one response may carry is bounded."""
    wire, server = connection
    await wire.initialize()
    server.protocol.fm.features["_test/huge"] = _answer_huge
    response = await wire.request("_test/huge", {})
    assert response["error"]["code"] == INTERNAL_ERROR
    assert str(16 * 1024 * 1024) in response["error"]["message"]
    await assert_still_serving(wire)


async def _answer_huge(params: object) -> object:
    return {"blob": "x" * (17 * 1024 * 1024)}


async def test_string_request_ids_are_echoed(wire: WireClient) -> None:
    response = await wire.request("initialize", {"protocolVersion": 1}, msg_id="abc")
    assert response["id"] == "abc"


@pytest.mark.parametrize("method", ["session/new", "nope"])
async def test_a_request_with_a_null_id_is_an_invalid_request_and_is_not_run(
    connection: tuple[WireClient, AcpServer], tmp_path: Path, method: str
) -> None:
    """Issue 25 §6: it was run and answered with ``id: null`` — the id JSON-RPC gives the
    answer to a request whose id is unknown, so the client could not tell the two apart."""
    wire, server = connection
    await wire.initialize()
    params = {"cwd": str(tmp_path), "mcpServers": []}
    await wire.send_line(
        json.dumps({"jsonrpc": "2.0", "id": None, "method": method, "params": params}).encode()
    )
    message = await wire.receive()
    assert message == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": INVALID_REQUEST,
            "message": 'Invalid request: "id" must not be null (JSON-RPC answers a request whose '
            "id is unknown with a null id, so the answer could not be told from that); send a "
            "string or a number, or no id for a notification",
        },
    }
    assert server.sessions == {}
    await assert_still_serving(wire)
