"""``drive``: a turn's driver under the cancel watch, its first step run at once."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any, cast

import pytest

from acp_sidecar.agent.driver import Turn
from acp_sidecar.protocol.initialize import PromptCapabilities
from acp_sidecar.protocol.session import StopReason
from acp_sidecar.server.session import drive
from acp_sidecar.tools.cancel import CancelSignal

SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("SEEN", default="caller")


class FnDriver:
    """A driver whose turn is the given coroutine function."""

    prompt_capabilities = PromptCapabilities()

    def __init__(self, run: Callable[[Turn], Awaitable[StopReason]]) -> None:
        self._run = run

    async def run_turn(self, turn: Turn) -> StopReason:
        return await self._run(turn)


def make_turn(signal: CancelSignal | None = None) -> Turn:
    async def send(_update: object) -> None:
        return None

    return Turn(
        session_id="s",
        cwd="/",
        prompt=(),
        signal=CancelSignal() if signal is None else signal,
        send=send,
        client=cast(Any, None),
        scope=cast(Any, None),
    )


async def test_a_turn_that_never_suspends_runs_in_the_calling_task() -> None:
    caller = asyncio.current_task()
    seen: list[object] = []

    async def run(turn: Turn) -> StopReason:
        seen.append(asyncio.current_task())
        SEEN.set("driver")
        return "end_turn"

    assert await drive(FnDriver(run), make_turn(), 1.0) == "end_turn"
    assert seen == [caller]  # no task of its own
    assert SEEN.get() == "caller"  # but its own context, as a task would have


async def test_a_turn_that_suspends_goes_on_where_it_stopped() -> None:
    loop = asyncio.get_running_loop()
    answers: list[object] = []

    async def run(turn: Turn) -> StopReason:
        SEEN.set("driver")
        future: asyncio.Future[int] = loop.create_future()
        loop.call_later(0.01, future.set_result, 42)
        answers.append(await future)  # the first step stops here
        await asyncio.sleep(0)  # a bare yield
        answers.append(SEEN.get())  # the same context after the first step
        failing: asyncio.Future[int] = loop.create_future()
        loop.call_soon(failing.set_exception, KeyError("k"))
        try:
            await failing
        except KeyError as exc:
            answers.append(exc.args[0])
        return "max_tokens"

    assert await drive(FnDriver(run), make_turn(), 1.0) == "max_tokens"
    assert answers == [42, "driver", "k"]
    assert SEEN.get() == "caller"


async def test_a_driver_failing_in_its_first_step_fails_the_turn() -> None:
    async def run(turn: Turn) -> StopReason:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await drive(FnDriver(run), make_turn(), 1.0)


async def test_a_turn_cancelled_in_its_first_step_answers_cancelled() -> None:
    async def returns(turn: Turn) -> StopReason:
        turn.signal.cancel("stop")
        return "end_turn"

    async def raises(turn: Turn) -> StopReason:
        turn.signal.cancel("stop")
        raise RuntimeError("stopped")

    async def raises_cancelled(turn: Turn) -> StopReason:
        turn.signal.cancel("stop")
        raise asyncio.CancelledError

    for run in (returns, raises, raises_cancelled):
        assert await drive(FnDriver(run), make_turn(), 1.0) == "cancelled"


async def test_a_driver_raising_cancelled_error_by_itself_is_a_bug_not_a_cancel() -> None:
    async def run(turn: Turn) -> StopReason:
        raise asyncio.CancelledError

    with pytest.raises(RuntimeError, match="cancelled, but the turn was not"):
        await drive(FnDriver(run), make_turn(), 1.0)


async def test_a_suspended_driver_ignoring_the_signal_is_stopped_after_the_grace() -> None:
    stopped: list[str] = []

    async def run(turn: Turn) -> StopReason:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            stopped.append("stopped")
            raise
        return "end_turn"

    turn = make_turn()
    asyncio.get_running_loop().call_later(0.01, turn.signal.cancel, "user")
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await drive(FnDriver(run), turn, 0.05) == "cancelled"
    assert stopped == ["stopped"]
    assert loop.time() - started < 1.0


async def test_a_suspended_driver_that_catches_the_stop_still_answers_cancelled() -> None:
    async def run(turn: Turn) -> StopReason:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            return "end_turn"  # swallowed: the turn was cancelled all the same
        return "refusal"

    turn = make_turn()
    asyncio.get_running_loop().call_later(0.01, turn.signal.cancel, "user")
    assert await drive(FnDriver(run), turn, 0.05) == "cancelled"


async def test_cancelling_the_caller_signals_a_suspended_driver_and_waits_for_it() -> None:
    ended: list[str] = []

    async def run(turn: Turn) -> StopReason:
        await turn.signal.wait()
        ended.append(turn.signal.reason or "")
        return "cancelled"

    turn = make_turn()
    task = asyncio.get_running_loop().create_task(drive(FnDriver(run), turn, 1.0))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert ended == ["the prompt request was cancelled"]
