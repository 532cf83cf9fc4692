"""``drive``: a turn's driver in a task of its own, under the cancel watch."""

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


async def test_every_step_of_a_driver_runs_in_one_task_of_its_own() -> None:
    caller = asyncio.current_task()
    seen: list[object] = []

    async def run(turn: Turn) -> StopReason:
        seen.append(asyncio.current_task())
        SEEN.set("driver")
        await asyncio.sleep(0)
        seen.append(asyncio.current_task())
        return "end_turn"

    assert await drive(FnDriver(run), make_turn(), 1.0) == "end_turn"
    assert seen[0] is seen[1] and seen[0] is not caller
    assert SEEN.get() == "caller"  # the driver's context is a copy


async def test_a_driver_gets_what_it_awaits() -> None:
    loop = asyncio.get_running_loop()
    answers: list[object] = []

    async def run(turn: Turn) -> StopReason:
        SEEN.set("driver")
        future: asyncio.Future[int] = loop.create_future()
        loop.call_later(0.01, future.set_result, 42)
        answers.append(await future)
        await asyncio.sleep(0)  # a bare yield
        answers.append(SEEN.get())
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


async def test_a_driver_failing_fails_the_turn() -> None:
    async def run(turn: Turn) -> StopReason:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await drive(FnDriver(run), make_turn(), 1.0)


async def test_a_turn_cancelled_before_its_driver_ends_answers_cancelled() -> None:
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
    # The driver sleeps an hour: returning at all is the grace running out (the wait is a
    # hang guard).
    assert await asyncio.wait_for(drive(FnDriver(run), turn, 0.05), 30) == "cancelled"
    assert stopped == ["stopped"]


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


async def test_a_deadline_a_driver_enters_applies_to_the_driver() -> None:
    # asyncio.timeout and TaskGroup bind to the task current when they are entered: were
    # the driver's steps to move between tasks, its deadline would cancel another task.
    timed_out: list[bool] = []

    async def run(turn: Turn) -> StopReason:
        try:
            async with asyncio.timeout(0.02):
                await asyncio.sleep(3600)
        except TimeoutError:
            timed_out.append(True)
        return "end_turn"

    assert await asyncio.wait_for(drive(FnDriver(run), make_turn(), 1.0), 30) == "end_turn"
    assert timed_out == [True]


async def test_cancelling_the_caller_while_the_signalled_driver_winds_down_stops_it() -> None:
    # session/cancel, then $/cancel_request (or shutdown) for the prompt during the grace.
    stopped: list[bool] = []

    async def run(turn: Turn) -> StopReason:
        try:
            await asyncio.sleep(3600)  # ignores the signal
        finally:
            stopped.append(True)
        return "end_turn"

    turn = make_turn()
    # A grace of an hour: only the caller's cancel can end the wait inside the hang guard.
    task = asyncio.get_running_loop().create_task(drive(FnDriver(run), turn, 3600.0))
    await asyncio.sleep(0.01)
    turn.signal.cancel("user")
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 30)
    await asyncio.sleep(0.05)
    assert stopped == [True]


async def test_cancelling_the_caller_gives_the_driver_the_same_grace() -> None:
    ended: list[str] = []

    async def run(turn: Turn) -> StopReason:
        await turn.signal.wait()
        try:
            await asyncio.sleep(1.2)  # longer than the shutdown bound, within the grace
        except asyncio.CancelledError:
            ended.append("stopped")
            raise
        ended.append("wound down")
        return "cancelled"

    turn = make_turn()
    task = asyncio.get_running_loop().create_task(drive(FnDriver(run), turn, 3.0))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert ended == ["wound down"]


async def test_cancelling_the_caller_twice_stops_the_driver_at_once() -> None:
    # Shutdown cancels a request the client already cancelled: the grace ends there.
    ended: list[str] = []

    async def run(turn: Turn) -> StopReason:
        await turn.signal.wait()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            ended.append("stopped")
            raise
        return "cancelled"

    turn = make_turn()
    # A grace of an hour: "at once" is anything inside the hang guard.
    task = asyncio.get_running_loop().create_task(drive(FnDriver(run), turn, 3600.0))
    await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 30)
    await asyncio.sleep(0.01)
    assert ended == ["stopped"]
