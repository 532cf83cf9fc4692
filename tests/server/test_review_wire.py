"""Issue 11 review: what the hardened wire still got wrong, driven as the reviewer found it.

- A malformed response carrying the id of the client's own request in flight was answered
  with that id: the client's pending ``session/prompt`` got extra responses.
- A JSON-RPC library that sends ``"error": null`` beside a result had its answers failed.
- Input that gets no answer (a huge method name sent as a notification) became log lines as
  long as the input, as often as it was sent.
"""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar import throttle
from acp_sidecar.server.app import AcpServer
from acp_sidecar.throttle import Throttle
from tests.server.wire import WireClient, cli_served, served

MiB = 1024 * 1024


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":5,"result":null,"error":{"code":1,"message":"x"}}',
        b'{"jsonrpc":"1.0","id":5,"result":null}',
        b'{"jsonrpc":"2.0","id":5}',
        b'{"id":5,"error":"x"}',
    ],
    ids=["result-and-error", "jsonrpc-1.0", "neither", "no-jsonrpc"],
)
async def test_a_malformed_response_with_the_clients_own_id_is_not_answered(line: bytes) -> None:
    async with cli_served("--driver", "tests.drivers:ScriptDriver") as (client, _server):
        await client.initialize()
        session = await client.new_session()
        await client.send_request(
            "session/prompt",
            {"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]},
            msg_id=5,
        )
        await client.next_echo(session, "wait")
        assert (await client.next_update())["params"]["update"]["content"]["text"] == "started"
        await client.send_line(line)
        # The server is still reading: a request after the line gets its answer, and by then
        # any answer to the line would have been written.
        await client.new_session()
        await client.notify("session/cancel", {"sessionId": session})
        response = await client.next_response(5)
        assert response["result"] == {"stopReason": "cancelled"}
        await client.new_session()
        answers = [m for m in client.received if m.get("id") == 5 and "method" not in m]
        assert answers == [response]


@pytest.mark.parametrize(
    "answer",
    [
        {"result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}, "error": None},
        {"error": None, "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}},
    ],
    ids=["result-then-null-error", "null-error-then-result"],
)
async def test_a_null_error_beside_a_result_is_a_result(
    tmp_path: Path, answer: dict[str, Any]
) -> None:
    async with cli_served("--store", str(tmp_path / "store")) as (client, _server):
        await client.initialize()
        session = await client.new_session(str(tmp_path))
        turn = await client.start_prompt(session, '/write {"path": "out.txt", "content": "x"}')
        asked = await client.next_agent_request()
        assert asked["method"] == "session/request_permission"
        await client.send({"jsonrpc": "2.0", "id": asked["id"], **answer})
        response = await client.next_response(turn, timeout=10)
        assert response["result"] == {"stopReason": "end_turn"}
        assert (tmp_path / "out.txt").read_text() == "x"


async def test_a_null_result_beside_an_error_is_the_clients_error(tmp_path: Path) -> None:
    async with cli_served("--store", str(tmp_path / "store")) as (client, _server):
        await client.initialize()
        session = await client.new_session(str(tmp_path))
        turn = await client.start_prompt(session, '/write {"path": "out.txt", "content": "x"}')
        asked = await client.next_agent_request()
        error = {"code": -32000, "message": "the user closed the dialog"}
        await client.send({"jsonrpc": "2.0", "id": asked["id"], "result": None, "error": error})
        response = await client.next_response(turn, timeout=10)
        assert response["result"] == {"stopReason": "end_turn"}
        info, card = (u["params"]["update"] for u in client.updates[-1:-3:-1])
        assert info["sessionUpdate"] == "session_info_update"  # every turn ends with one
        assert card["status"] == "failed"
        assert "the user closed the dialog" in card["content"][0]["content"]["text"]
        assert not (tmp_path / "out.txt").exists()


async def test_unanswered_input_makes_short_and_few_log_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """As found: a 64 MiB method name sent as a notification was logged in full, each time."""
    huge = json.dumps({"jsonrpc": "2.0", "method": "A" * MiB}).encode()
    cancel = json.dumps(
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "S" * MiB}}
    ).encode()
    stray = json.dumps({"jsonrpc": "2.0", "id": "I" * MiB, "result": None}).encode()
    rounds = throttle.BURST * 3
    with caplog.at_level(logging.INFO):
        async with served() as (client, _server):
            await client.initialize()
            for _ in range(rounds):
                await client.send_line(huge)
                await client.send_line(cancel)
                await client.send_line(stray)
            await client.new_session()  # everything before it was read
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("acp_sidecar")]
    assert max(map(len, lines)) < 1000
    assert len(lines) < 3 * throttle.BURST + 10, len(lines)


def test_the_throttle_lets_a_burst_through_then_counts_until_the_window_ends(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    limiter = Throttle(lambda: now[0])
    logger = logging.getLogger("acp_sidecar.test_throttle")
    with caplog.at_level(logging.WARNING, logger=logger.name):
        for i in range(throttle.BURST + 5):
            limiter.log(logger, logging.WARNING, "kind", "line %d", i)
        limiter.log(logger, logging.WARNING, "other", "another kind")
        now[0] = throttle.WINDOW
        limiter.log(logger, logging.WARNING, "kind", "after the window")
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        *(f"line {i}" for i in range(throttle.BURST)),
        "another kind",
        "5 more lines like this were not logged: kind",
        "after the window",
    ]


def test_nothing_is_counted_at_a_level_not_logged() -> None:
    limiter = Throttle(lambda: 0.0)
    logger = logging.getLogger("acp_sidecar.test_throttle_quiet")
    logger.setLevel(logging.ERROR)
    for _ in range(throttle.BURST * 2):
        limiter.log(logger, logging.WARNING, "kind", "quiet")
    assert not limiter._kinds


# ---- the client's answers are read while our output is backed up -------------------------------


async def back_up_output(client: WireClient, server: AcpServer, session: str) -> Any:
    """Stop reading, start a flood in ``session`` and wait until over 1 MiB of the sidecar's
    output waits for the client; the flood's request id."""
    client.reader._transport.pause_reading()  # type: ignore[attr-defined]
    flood_turn = await client.start_prompt(session, "flood 200000", echoed=False)
    wire = server.protocol.wire
    assert wire is not None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60  # a hang guard
    while wire._transport.get_write_buffer_size() < 1024 * 1024:
        assert loop.time() < deadline, "the flood never backed up"
        await asyncio.sleep(0.01)
    return flood_turn


async def test_an_answer_written_while_output_is_backed_up_is_read() -> None:
    """As found: a client that finishes writing a 2 MiB ``fs/read_text_file`` answer before
    it reads on, while another session streams, deadlocked — our output passed 1 MiB, input
    paused, the client's write stalled, neither side moved."""
    async with served() as (client, server):
        await client.initialize(fs={"readTextFile": True, "writeTextFile": False})
        reading = await client.new_session()
        streaming = await client.new_session()
        read_turn = await client.start_prompt(reading, "read /tmp/big.txt")
        asked = await client.next_agent_request()
        assert asked["method"] == "fs/read_text_file"
        flood_turn = await back_up_output(client, server, streaming)
        content = "x" * (2 * MiB)
        answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"content": content}}
        client.writer.write(json.dumps(answer).encode() + b"\n")
        await asyncio.wait_for(client.writer.drain(), 5)  # it deadlocked here
        # Reading on, the client gets both turns' ends; the read saw the whole answer.
        client.reader._transport.resume_reading()  # type: ignore[attr-defined]
        await client.notify("session/cancel", {"sessionId": streaming})
        assert (await client.next_response(read_turn, timeout=30))["result"] == {
            "stopReason": "end_turn"
        }
        assert (await client.next_response(flood_turn, timeout=30))["result"]["stopReason"] in {
            "cancelled",
            "end_turn",
        }
        assert f"read: {content}" in client.texts()


async def test_requests_sent_while_output_is_backed_up_are_held_then_answered_in_order() -> None:
    async with served() as (client, server):
        await client.initialize()
        streaming = await client.new_session()
        flood_turn = await back_up_output(client, server, streaming)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60  # a hang guard
        ids = [
            await client.send_request("session/new", {"cwd": "/tmp", "mcpServers": []})
            for _ in range(5)
        ]
        await client.notify("session/cancel", {"sessionId": streaming})
        while server.protocol.held.held_bytes < 5 * 1024:
            assert loop.time() < deadline, "the requests were not held"
            await asyncio.sleep(0.01)
        client.reader._transport.resume_reading()  # type: ignore[attr-defined]
        answers: dict[Any, dict[str, Any]] = {}
        while len(answers) < len(ids) + 1:
            message = await client.receive(30)
            if "method" not in message:
                answers[message["id"]] = message
        assert answers[flood_turn]["result"] == {"stopReason": "cancelled"}
        assert all("sessionId" in answers[msg_id]["result"] for msg_id in ids)
        answered = [m["id"] for m in client.received if m.get("id") in ids and "method" not in m]
        assert answered == ids
        assert server.protocol.held.held_bytes == 0
