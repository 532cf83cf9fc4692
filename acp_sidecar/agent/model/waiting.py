"""Telling the user, while a request has not begun to answer, how long it has waited (live
only: never logged, never sent to a model). No tell follows :meth:`WaitTicker.stop`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Final

logger = logging.getLogger(__name__)

WAIT_TICK_S: Final = 10.0
"""Seconds between two tells of one wait."""

Sleep = Callable[[float], Awaitable[None]]
"""Waits that many seconds (``asyncio.sleep``; a test's clock)."""


def waited_text(seconds: float) -> str:
    """What a tell of a wait that has lasted ``seconds`` says."""
    return f"Waiting for the model… {seconds:g} s"


class WaitTicker:
    """The tells of one wait: started with the request, stopped by its first chunk."""

    def __init__(self, tell: Callable[[str, bool], None] | None, sleep: Sleep) -> None:
        self._tell = tell
        self._sleep = sleep
        self._task: asyncio.Task[None] | None = None
        self.waiting = False
        """Whether the wait is being told (a plain field: it is read for every chunk)."""

    def start(self) -> None:
        """Begin the wait (nothing is told when nobody is to be told)."""
        if self._tell is not None and self._task is None:
            self.waiting = True
            self._task = asyncio.get_running_loop().create_task(
                self._ticks(self._tell), name="tell the wait for the model"
            )

    def stop(self) -> None:
        """End the wait: the model answered, failed, or the turn was cancelled."""
        task, self._task = self._task, None
        self.waiting = False
        if task is not None:
            task.cancel()

    async def _ticks(self, tell: Callable[[str, bool], None]) -> None:
        ticks = 0
        while True:
            await self._sleep(WAIT_TICK_S)
            ticks += 1
            try:
                tell(waited_text(ticks * WAIT_TICK_S), ticks == 1)
            except Exception:
                logger.exception("telling the wait for the model failed")


@asynccontextmanager
async def told_wait(
    tell: Callable[[str, bool], None] | None, sleep: Sleep
) -> AsyncIterator[WaitTicker]:
    """A wait told from entry until its first chunk (:meth:`WaitTicker.stop`) or the exit:
    every model request, the turn's and a summary's, waits in one."""
    wait = WaitTicker(tell, sleep)
    wait.start()
    try:
        yield wait
    finally:
        wait.stop()
