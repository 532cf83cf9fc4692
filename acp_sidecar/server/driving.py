"""Driving one turn: the driver runs in a task of its own, and the turn's signal bounds it.

Invariant: once the turn's signal fires the answer is ``cancelled``, whatever the driver does;
a driver still running ``grace`` seconds later is stopped (:data:`SHUTDOWN_WIND_DOWN` at
shutdown), so no driver outlives its turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from acp_sidecar.agent.driver import Turn, TurnDriver
from acp_sidecar.protocol.session import StopReason

logger = logging.getLogger(__name__)

SHUTDOWN = "shutdown"
"""The cancellation reason when the sidecar itself is stopping."""

SHUTDOWN_WIND_DOWN = 0.8
"""At shutdown a driver gets only this long (the process must exit within 2 s); a stopped
tool task still ends its process group (``bash`` kills it in its ``finally``)."""


async def drive(driver: TurnDriver, turn: Turn, grace: float) -> StopReason:
    """Run ``driver`` on ``turn``, honouring the turn's signal as the module docstring says.

    The driver runs in a task of its own, every step of it: ``asyncio.timeout`` and
    ``TaskGroup`` bind to the task current when they are entered, so a driver's steps must
    not move from one task to another. The caller waits on one future, which the signal and
    the driver's own last step settle (not a done callback, nor ``asyncio.wait``: each costs
    the turn a trip round the event loop, and an empty turn is mostly such trips).
    """
    loop = asyncio.get_running_loop()
    woken: asyncio.Future[None] = loop.create_future()
    task = loop.create_task(_waking(driver.run_turn(turn), woken), name=f"turn {turn.session_id}")

    def on_cancel(_reason: str) -> None:
        loop.call_soon_threadsafe(_settle, woken)

    remove = turn.signal.add_callback(on_cancel)
    try:
        await woken
    except asyncio.CancelledError:
        if turn.signal.reason == SHUTDOWN:  # signalled in the same loop step as cancelled
            grace = min(grace, SHUTDOWN_WIND_DOWN)
        turn.signal.cancel("the prompt request was cancelled")
        await _wind_down(task, grace)
        raise
    finally:
        remove()
        woken.cancel()
    if not task.done() or turn.signal.cancelled:
        if turn.signal.reason == SHUTDOWN:
            grace = min(grace, SHUTDOWN_WIND_DOWN)
        await _wind_down(task, grace)
        return "cancelled"
    if task.cancelled():
        raise RuntimeError("the driver's task was cancelled, but the turn was not")
    return task.result()


async def _waking(run: Coroutine[Any, Any, StopReason], woken: asyncio.Future[None]) -> StopReason:
    """``run``, then settle ``woken`` from its last step (the driver task is done by the
    time its waiter runs)."""
    try:
        return await run
    finally:
        _settle(woken)


def _settle(woken: asyncio.Future[None]) -> None:
    if not woken.done() and not woken.get_loop().is_closed():
        woken.set_result(None)


async def _wind_down(task: asyncio.Task[StopReason], grace: float) -> None:
    """Give a signalled driver ``grace`` seconds, then stop it; its outcome is only logged.

    Cancelled meanwhile (the prompt request cancelled, or shutdown), it stops the driver at
    once and lets the cancellation go on: a driver ignoring the signal never outlives its
    turn."""
    task.add_done_callback(_log_outcome)
    try:
        if not task.done():
            await asyncio.wait((task,), timeout=grace)
        if not task.done():
            logger.warning("the driver ignored cancellation for %.1f s; stopping it", grace)
            task.cancel()
            await asyncio.wait((task,), timeout=0.2)
    except asyncio.CancelledError:
        task.cancel()
        raise


def _log_outcome(task: asyncio.Task[StopReason]) -> None:
    """Log how a signalled driver ended (and retrieve its exception, so asyncio does not)."""
    if not task.cancelled() and task.exception() is not None:
        logger.debug("the cancelled driver ended with %r", task.exception())
