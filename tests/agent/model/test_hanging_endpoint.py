"""An endpoint that accepts the request and does not answer: each attempt is given up after
the first-byte timeout (not the request timeout between two parts of an answer), retried,
and explained; a cancel ends the wait at once. Timeouts are injected short; the hang guards
(``asyncio.timeout``) only stop a test that would otherwise wait for minutes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import attrs

from acp_sidecar.agent.model import ModelDriver
from acp_sidecar.tools.cancel import CancelSignal
from tests.agent.model.fake_openai import Pause, Reply, ScriptedOpenAI, answer
from tests.agent.model.harness import Clock, make_turn
from tests.fakes import Editor

MakeDriver = Callable[..., ModelDriver]


def silent() -> Reply:
    """A reply that never begins: the request is read, no status line is ever sent."""
    return Reply(before=Pause())


async def test_a_request_without_an_answer_is_given_up_after_the_first_byte_timeout(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    driver = make_driver(first_byte_timeout=0.2, request_timeout=600.0, max_retries=1)
    endpoint.script(silent(), silent())
    told: list[str] = []
    turn = attrs.evolve(make_turn(editor), inform=told.append)

    async with asyncio.timeout(10):  # a hang guard: the request timeout is ten minutes
        assert await driver.run_turn(turn) == "end_turn"

    assert len(endpoint.requests) == 2  # retried once, as any timeout
    assert told == [
        "The model request failed; retrying (1 of 1).\n\n"
        f"The model endpoint {endpoint.base_url} did not start answering within 0.2 seconds; "
        "the request is sent again."
    ]
    assert editor.text() == (
        f"The model endpoint {endpoint.base_url} did not start answering within 0.2 seconds "
        "(tried 2 times). A local server that loads the model on first use may need longer: "
        "--first-byte-timeout, $ACP_SIDECAR_FIRST_BYTE_TIMEOUT or first_byte_timeout in the "
        "config file."
    )


async def test_an_answer_that_began_may_take_longer_than_the_first_byte_timeout(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    driver = make_driver(first_byte_timeout=0.2, max_retries=0)
    pause = Pause()
    endpoint.script(Reply([*answer("Hel").events[:1], pause, *answer("lo").events]))
    turn = asyncio.ensure_future(driver.run_turn(make_turn(editor)))
    await pause.reached.wait()
    # Longer than the first-byte timeout (told by the server's clock, not by a sleep): the
    # answer has begun, so only the request timeout between two chunks applies.
    await asyncio.sleep(0.4)
    pause.release.set()

    async with asyncio.timeout(10):
        assert await turn == "end_turn"
    assert editor.text() == "Hello"


async def test_a_cancel_ends_the_wait_for_a_silent_endpoint_at_once(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    driver = make_driver(first_byte_timeout=600.0, max_retries=2)
    reply = silent()
    endpoint.script(reply)
    signal = CancelSignal()
    turn = asyncio.ensure_future(driver.run_turn(make_turn(editor, signal=signal)))
    assert reply.before is not None
    await reply.before.reached.wait()

    signal.cancel("session/cancel")

    async with asyncio.timeout(10):
        assert await turn == "cancelled"
        await reply.before.left.wait()  # the request was closed: the server saw the client go
    assert len(endpoint.requests) == 1  # not retried
    assert editor.text() == ""


async def test_the_wait_is_told_every_tick_until_a_cancel(
    make_driver: MakeDriver, endpoint: ScriptedOpenAI, editor: Editor
) -> None:
    driver = make_driver(first_byte_timeout=600.0, max_retries=0)
    clock = Clock()
    driver.wait_sleep = clock.sleep
    reply = silent()
    endpoint.script(reply)
    signal = CancelSignal()
    told: list[tuple[str, bool]] = []
    waiting = attrs.evolve(
        make_turn(editor, signal=signal), waiting=lambda text, first: told.append((text, first))
    )
    turn = asyncio.ensure_future(driver.run_turn(waiting))
    for _ in range(3):
        await clock.asleep.get()
        clock.tick()
    await clock.asleep.get()  # asleep before its fourth tell

    signal.cancel("session/cancel")

    async with asyncio.timeout(10):
        assert await turn == "cancelled"
        await clock.stopped.wait()
    assert told == [
        ("Waiting for the model… 10 s", True),
        ("Waiting for the model… 20 s", False),
        ("Waiting for the model… 30 s", False),
    ]
    assert editor.updates == []  # the wait is told apart from the conversation
