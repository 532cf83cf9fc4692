"""Issue 11 §6, §10-13: what an adversarial client broke over the raw wire, driven as found.

Each test speaks raw NDJSON to the server ``acp-sidecar serve`` builds, in process on a pair
of pipes (:func:`cli_served`); every line the sidecar writes is validated against the official
schema (:class:`WireClient`), and each test ends by checking that the server still serves.
"""

from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.protocol import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
)
from acp_sidecar.server.app import AcpServer
from tests.server.wire import WireClient, cli_served

KiB = 1024
Sidecar = AbstractAsyncContextManager[tuple[WireClient, AcpServer]]


def script_sidecar() -> Sidecar:
    """The sidecar with the test ``ScriptDriver`` (see ``tests/drivers.py``)."""
    return cli_served("--driver", "tests.drivers:ScriptDriver")


def encoded(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode()


def prompt(msg_id: Any, session: str, text: str) -> dict[str, Any]:
    """A ``session/prompt`` message; without an id when ``msg_id`` is ``None``."""
    params = {"sessionId": session, "prompt": [{"type": "text", "text": text}]}
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": "session/prompt", "params": params}
    if msg_id is not None:
        message["id"] = msg_id
    return message


async def still_serving(client: WireClient) -> None:
    """A new session is made and a prompt in it runs to its end."""
    session = await client.new_session()
    response = await client.next_response(await client.start_prompt(session, "echo ok"))
    assert response["result"] == {"stopReason": "end_turn"}


# ---- §6: session/new's cwd -------------------------------------------------------------------


async def test_session_new_refuses_a_cwd_that_is_no_usable_directory(tmp_path: Path) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("not a directory")
    cases = [
        ("/" + "d" * (256 * KiB), "4096"),  # as found: 256 KiB that do not exist
        (str(tmp_path / "missing"), "no such directory"),
        (str(a_file), "not a directory"),
        ("relative/dir", "absolute"),
        ("/tmp/\0nul", "NUL"),
        ("/tmp/\ud800", "not a valid file name"),
    ]
    async with script_sidecar() as (client, _server):
        await client.initialize()
        for cwd, reason in cases:
            error = await client.error("session/new", {"cwd": cwd, "mcpServers": []})
            assert error["code"] == INVALID_PARAMS, error
            assert error["message"].startswith("Invalid params: cwd: ")
            assert reason in error["message"], error
            assert len(error["message"]) < 300  # the path is quoted shortened, if at all
        # session/load checks the same, but existence: the stored session's cwd decides.
        load = {"sessionId": "x", "cwd": "/" + "d" * (256 * KiB), "mcpServers": []}
        error = await client.error("session/load", load)
        assert error["code"] == INVALID_PARAMS and "4096" in error["message"], error
        assert await client.new_session(str(tmp_path))
        await still_serving(client)


async def test_an_error_that_quotes_the_request_is_bounded() -> None:
    """The unknown method is named in the answer, but 100 KiB of it are not echoed."""
    method = "_x/" + "m" * (100 * KiB)
    async with script_sidecar() as (client, _server):
        await client.initialize()
        error = await client.error(method, {})
        assert error["code"] == METHOD_NOT_FOUND
        assert len(error["message"]) <= 1000
        assert len(json.dumps(error)) < 10 * KiB
        await still_serving(client)


# ---- §10: responses only ever reach our own requests -------------------------------------------


async def test_a_stray_response_with_a_running_requests_id_is_dropped() -> None:
    """As found: the stray response raised inside the reader, the next request was lost and
    the one after it corrupted. All three lines go in one write, as one read chunk."""
    async with script_sidecar() as (client, _server):
        await client.initialize()
        session = await client.new_session()
        running = await client.start_prompt(session, "wait")
        assert (await client.next_update())["params"]["update"]["content"]["text"] == "started"
        stray = {"jsonrpc": "2.0", "id": running, "result": {"stopReason": "end_turn"}}
        after = prompt("after", await client.new_session(), "echo after")
        client.sent_methods["after"] = "session/prompt"
        client.sent_methods["last"] = "session/new"
        last = {
            "jsonrpc": "2.0",
            "id": "last",
            "method": "session/new",
            "params": {"cwd": "/tmp", "mcpServers": []},
        }
        await client.send_line(b"\n".join([encoded(stray), encoded(after), encoded(last)]))
        answers: dict[Any, dict[str, Any]] = {}
        while len(answers) < 2:  # the two run concurrently: either may answer first
            message = await client.receive()
            if "method" not in message:
                answers[message["id"]] = message
        assert answers["after"]["result"] == {"stopReason": "end_turn"}
        assert "sessionId" in answers["last"]["result"]
        # The running prompt was not answered by the stray response: it still runs.
        await client.notify("session/cancel", {"sessionId": session})
        response = await client.next_response(running)
        assert response["result"] == {"stopReason": "cancelled"}
        await still_serving(client)


async def test_a_client_request_reusing_our_pending_requests_id_does_not_hang_the_turn() -> None:
    async with script_sidecar() as (client, _server):
        await client.initialize()
        session = await client.new_session()
        turn = await client.start_prompt(session, "permission")
        asked = await client.next_agent_request()
        assert asked["method"] == "session/request_permission"
        # The client's own request under the id of the agent's pending one.
        reused = await client.send_request(
            "session/new", {"cwd": "/tmp", "mcpServers": []}, msg_id=asked["id"]
        )
        assert "sessionId" in (await client.next_response(reused))["result"]
        outcome = {"outcome": {"outcome": "selected", "optionId": "allow"}}
        await client.respond(asked["id"], outcome)
        response = await client.next_response(turn)
        assert response["result"] == {"stopReason": "end_turn"}
        assert client.texts() == ["permission: selected allow"]
        await still_serving(client)


# ---- §11: strict JSON, clean errors for huge numbers ----------------------------------------------


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
async def test_nan_and_infinity_are_parse_errors(number: str) -> None:
    async with script_sidecar() as (client, _server):
        await client.initialize()
        session = await client.new_session()
        await client.next_update()  # the session's commands
        text = encoded(prompt(7, session, "echo stored")).replace(
            b'"params"', b'"x": %b, "params"' % number.encode()
        )
        await client.send_line(text)
        answer = await client.receive()
        assert answer["id"] is None
        assert answer["error"]["code"] == PARSE_ERROR
        assert len(client.updates) == 1  # the prompt did not run
        await still_serving(client)


async def error_for_an_id_of(client: WireClient, digits: int) -> dict[str, Any]:
    """The error answering a ``session/list`` whose id is ``digits`` nines (it has no id)."""
    await client.send_line(
        b'{"jsonrpc": "2.0", "id": %b, "method": "session/list"}' % (b"9" * digits)
    )
    answer = await client.receive()
    assert answer["id"] is None
    error: dict[str, Any] = answer["error"]
    return error


async def test_an_id_of_5000_digits_gets_a_clean_parse_error() -> None:
    async with script_sidecar() as (client, _server):
        await client.initialize()
        error = await error_for_an_id_of(client, 5000)
        assert error["code"] == PARSE_ERROR
        message = error["message"]
        assert "4300" in message and "5000" in message
        assert "sys." not in message and "int_max_str_digits" not in message
        await still_serving(client)


async def test_an_id_beyond_64_bits_is_an_invalid_request() -> None:
    async with script_sidecar() as (client, _server):
        await client.initialize()
        error = await error_for_an_id_of(client, 30)
        assert error["code"] == INVALID_REQUEST
        assert "64-bit" in error["message"]
        await still_serving(client)


# ---- §12: notifications and requests are what ACP says they are --------------------------------


async def test_a_request_method_sent_as_a_notification_is_not_run() -> None:
    """As found: ``session/prompt`` without an id ran (its update came, no answer could)."""
    async with script_sidecar() as (client, _server):
        await client.initialize()
        session = await client.new_session()
        await client.send(prompt(None, session, "echo leaked"))
        await client.send({"jsonrpc": "2.0", "method": "session/new", "params": {"cwd": "/tmp"}})
        response = await client.next_response(await client.start_prompt(session, "echo fine"))
        assert response["result"] == {"stopReason": "end_turn"}
        assert client.texts() == ["fine"]
        await still_serving(client)
        assert (
            len([m for m in client.received if "result" in m and "sessionId" in m["result"]]) == 2
        )


async def test_session_cancel_sent_as_a_request_cancels_and_is_answered_an_error() -> None:
    async with script_sidecar() as (client, _server):
        await client.initialize()
        session = await client.new_session()
        running = await client.start_prompt(session, "wait")
        await client.next_update()
        cancel = await client.send_request("session/cancel", {"sessionId": session})
        answers: dict[Any, dict[str, Any]] = {}
        while len(answers) < 2:
            message = await client.receive()
            if message.get("method") == "session/update":
                # The cancelled turn ends with its session info, before it is answered.
                assert message["params"]["update"]["sessionUpdate"] == "session_info_update"
                continue
            assert "method" not in message, message
            answers[message["id"]] = message
        assert answers[running]["result"] == {"stopReason": "cancelled"}
        error = answers[cancel]["error"]
        assert error["code"] == INVALID_REQUEST
        assert "session/cancel is a notification" in error["message"]
        await still_serving(client)


async def test_a_second_initialize_is_refused_and_the_first_capabilities_stay(
    tmp_path: Path,
) -> None:
    async with script_sidecar() as (client, _server):
        await client.initialize(fs={"readTextFile": True})
        again = await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert again["error"]["code"] == INVALID_REQUEST
        assert "already" in again["error"]["message"]
        session = await client.new_session()
        turn = await client.start_prompt(session, f"read {tmp_path / 'notes.txt'}")
        asked = await client.next_agent_request()  # fs.readTextFile is still advertised
        assert asked["method"] == "fs/read_text_file"
        await client.respond(asked["id"], {"content": "from the editor"})
        assert (await client.next_response(turn))["result"] == {"stopReason": "end_turn"}
        assert client.texts() == ["read: from the editor"]
        await still_serving(client)


# ---- §13: a malformed permission answer is a rejection, at once ---------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        {
            "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
            "error": {"code": -1, "message": "x"},
        },
        {"error": {"code": "bad", "message": 5}},
        {},
        {"result": {"outcome": {"outcome": "maybe"}}},
    ],
    ids=["result-and-error", "malformed-error", "neither", "undecodable-result"],
)
async def test_a_malformed_permission_answer_fails_the_call_at_once(
    tmp_path: Path, answer: dict[str, Any]
) -> None:
    async with cli_served("--store", str(tmp_path / "store")) as (client, _server):
        await client.initialize()
        session = await client.new_session(str(tmp_path))
        turn = await client.start_prompt(session, '/write {"path": "out.txt", "content": "x"}')
        asked = await client.next_agent_request()
        assert asked["method"] == "session/request_permission"
        await client.send({"jsonrpc": "2.0", "id": asked["id"], **answer})
        # Nothing but a cancel could end the wait it used to do: an answer is the fix.
        response = await client.next_response(turn, timeout=10)
        assert response["result"] == {"stopReason": "end_turn"}
        info, card = (u["params"]["update"] for u in client.updates[-1:-3:-1])
        assert info["sessionUpdate"] == "session_info_update"  # every turn ends with one
        assert card["status"] == "failed"
        text = card["content"][0]["content"]["text"]
        assert "session/request_permission" in text, text
        assert not (tmp_path / "out.txt").exists()
        # The sidecar did not answer the client's (malformed) answer: it is not a request.
        assert not [m for m in client.received if m.get("id") == asked["id"] and "method" not in m]
        await still_serving(client)
