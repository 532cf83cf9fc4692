"""Prompt turns: updates, stop reasons, session/cancel, $/cancel_request."""

from __future__ import annotations

import json

from acp_sidecar.server.app import AcpServer
from tests.server.wire import WireClient


async def test_a_turn_streams_updates_then_answers_its_stop_reason(ready: WireClient) -> None:
    session = await ready.new_session()
    response = await ready.next_response(await ready.start_prompt(session, "echo hello there"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert ready.texts() == ["hello there"]
    commands, echo, update = (u["params"] for u in ready.updates[:3])
    assert commands["update"]["sessionUpdate"] == "available_commands_update"
    assert echo["sessionId"] == update["sessionId"] == session
    prompt_id, reply_id = echo["update"]["messageId"], update["update"]["messageId"]
    assert echo["update"] == {
        "sessionUpdate": "user_message_chunk",
        "content": {"type": "text", "text": "echo hello there"},
        "messageId": prompt_id,
    }
    assert update["update"] == {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "hello there"},
        "messageId": reply_id,
    }
    assert prompt_id != reply_id


async def test_many_updates_all_arrive_in_order_before_the_answer(ready: WireClient) -> None:
    # About 3 MB: more than the writer buffers, so the driver is held back by the client.
    session = await ready.new_session()
    response = await ready.next_response(await ready.start_prompt(session, "flood 30000"))
    assert response["result"] == {"stopReason": "end_turn"}
    assert ready.texts() == ["chunk"] * 30000


async def test_session_cancel_ends_the_turn_cancelled(ready: WireClient) -> None:
    session = await ready.new_session()
    prompt = await ready.start_prompt(session, "wait")
    await ready.next_update()
    await ready.notify("session/cancel", {"sessionId": session})
    response = await ready.next_response(prompt)
    assert response["result"] == {"stopReason": "cancelled"}
    # The session takes the next prompt.
    again = await ready.next_response(await ready.start_prompt(session, "echo next"))
    assert again["result"] == {"stopReason": "end_turn"}


async def test_a_driver_that_ignores_cancellation_is_stopped_after_the_grace(
    ready: WireClient,
) -> None:
    session = await ready.new_session()
    prompt = await ready.start_prompt(session, "ignore-cancel")
    await ready.next_update()
    await ready.notify("session/cancel", {"sessionId": session})
    # The driver sleeps an hour: any answer at all (the read's timeout is a hang guard) is
    # the grace (0.3 s) running out.
    response = await ready.next_response(prompt)
    assert response["result"] == {"stopReason": "cancelled"}
    again = await ready.next_response(await ready.start_prompt(session, "echo next"))
    assert again["result"] == {"stopReason": "end_turn"}


async def test_session_cancel_touches_only_its_own_session(ready: WireClient) -> None:
    first, second = await ready.new_session(), await ready.new_session()
    one = await ready.start_prompt(first, "wait")
    await ready.next_update()
    two = await ready.start_prompt(second, "wait")
    await ready.next_update()
    await ready.notify("session/cancel", {"sessionId": second})
    assert (await ready.next_response(two))["result"] == {"stopReason": "cancelled"}
    await ready.notify("session/cancel", {"sessionId": first})
    assert (await ready.next_response(one))["result"] == {"stopReason": "cancelled"}


async def test_session_cancel_without_a_running_turn_does_nothing(ready: WireClient) -> None:
    session = await ready.new_session()
    await ready.notify("session/cancel", {"sessionId": session})
    response = await ready.next_response(await ready.start_prompt(session, "echo still fine"))
    assert response["result"] == {"stopReason": "end_turn"}


async def test_cancel_request_cancels_an_in_flight_prompt(ready: WireClient) -> None:
    session = await ready.new_session()
    prompt = await ready.start_prompt(session, "wait")
    await ready.next_update()
    await ready.notify("$/cancel_request", {"requestId": prompt})
    response = await ready.next_response(prompt)
    # Answered as session/cancel answers: the cancellation marker, not -32800.
    assert response["result"] == {"stopReason": "cancelled"}
    # The session is free again.
    again = await ready.next_response(await ready.start_prompt(session, "echo after"))
    assert again["result"] == {"stopReason": "end_turn"}


async def test_cancel_request_for_an_unknown_id_is_ignored(ready: WireClient) -> None:
    await ready.notify("$/cancel_request", {"requestId": 999})
    await ready.notify("$/cancel_request", {"nothing": True})
    assert await ready.new_session()


async def test_end_of_input_cancels_running_turns_and_answers_them(
    connection: tuple[WireClient, AcpServer],
) -> None:
    wire, server = connection
    await wire.initialize()
    session = await wire.new_session()
    prompt = await wire.start_prompt(session, "wait")
    await wire.next_update()
    wire.close()  # end of file for the server: the fixture checks it exits with 0
    response = await wire.next_response(prompt)
    assert response["result"] == {"stopReason": "cancelled"}
    assert server.sessions[session].running is None


async def test_concurrent_turns_never_interleave_bytes(ready: WireClient) -> None:
    first, second = await ready.new_session(), await ready.new_session()
    one = await ready.start_prompt(first, "flood 10000")
    two = await ready.start_prompt(second, "flood 10000")
    # Every line read parses as one whole message (``receive`` checks), and all arrive.
    await ready.next_response(one)
    await ready.next_response(two)
    by_session = [u["params"]["sessionId"] for u in ready.updates]
    # Each session's prompt echoed, its flood, then the session info its turn ends with.
    # each session's commands, then each turn's echo, 10000 chunks and its info
    assert by_session.count(first) == by_session.count(second) == 10003


async def test_a_driver_streaming_without_pause_still_hears_session_cancel(
    ready: WireClient,
) -> None:
    session = await ready.new_session()
    prompt = await ready.start_prompt(session, "flood 100000000")
    await ready.next_update()
    await ready.notify("session/cancel", {"sessionId": session})
    response = await ready.next_response(prompt, timeout=10)
    assert response["result"] == {"stopReason": "cancelled"}


async def test_session_cancel_right_behind_its_prompt_still_cancels_it(ready: WireClient) -> None:
    session = await ready.new_session()
    prompt = {
        "jsonrpc": "2.0",
        "id": "p",
        "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "wait"}]},
    }
    cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}
    ready.sent_methods["p"] = "session/prompt"
    # One write: the server reads both messages before the prompt's turn has started.
    await ready.send_line(json.dumps(prompt).encode() + b"\n" + json.dumps(cancel).encode())
    response = await ready.next_response("p")
    assert response["result"] == {"stopReason": "cancelled"}
