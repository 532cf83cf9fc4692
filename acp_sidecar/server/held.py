"""The session logs this process holds open: a bounded set, least recently used released first.

A held log costs a descriptor (its writer's lock lives on it), so at most :attr:`HeldLogs.bound`
(:func:`default_bound`) are held, idle ones released first; a released session keeps its claim
and re-opens its log on its next use. :meth:`HeldLogs.touch` runs on the event loop's thread and
never releases the log it was called for. Loads are bounded (:meth:`HeldLogs.replaying`) and take
turns per session id (:meth:`HeldLogs.loading`).
"""

from __future__ import annotations

import asyncio
import resource
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final, Protocol

MAX_HELD: Final = 256
"""The most logs held open, whatever the descriptor limit."""

MIN_HELD: Final = 8
"""The fewest logs held open, however low the descriptor limit."""


def default_bound() -> int:
    """How many logs to hold open: a quarter of the soft descriptor limit, leaving the rest to
    commands, MCP servers, reads and the wire."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_HELD
    return max(MIN_HELD, min(MAX_HELD, soft // 4))


class HeldLog(Protocol):
    """A session's log that can be released (closed and unlocked) and opened again later."""

    @property
    def busy(self) -> bool:
        """Whether a turn is writing to the log now (released last)."""

    def release(self) -> None:
        """Write what is pending, unlock and close the log; the next use opens it again."""


class HeldLogs:
    """The logs held open, in order of use (see the module docstring)."""

    def __init__(self, bound: int | None = None) -> None:
        self.bound: Final = default_bound() if bound is None else bound
        """The most logs held open at once."""
        if self.bound < 1:
            raise ValueError("at least one log must be holdable")
        self._held: OrderedDict[HeldLog, None] = OrderedDict()
        self._loads: dict[str, tuple[asyncio.Lock, int]] = {}
        self._replays = asyncio.Semaphore(max(1, self.bound // 2))

    def __len__(self) -> int:
        return len(self._held)

    def touch(self, log: HeldLog) -> None:
        """``log`` was just used (and is open): beyond the bound, release the least recently
        used with no turn running, else the least recently used — never ``log`` itself."""
        self._held[log] = None
        self._held.move_to_end(log)
        while len(self._held) > self.bound:
            others = [held for held in self._held if held is not log]
            # Idle logs first: a streaming turn's log released would cut its message into one
            # record per release and re-open for every batch of text.
            victim = next((held for held in others if not held.busy), others[0])
            del self._held[victim]
            victim.release()

    def forget(self, log: HeldLog) -> None:
        """``log`` was closed by its owner."""
        self._held.pop(log, None)

    @asynccontextmanager
    async def replaying(self) -> AsyncIterator[None]:
        """Held while a log is replayed (its two descriptors open); at most half :attr:`bound`
        at once (at least one), so many loads at once queue instead of exhausting descriptors."""
        async with self._replays:
            yield

    @asynccontextmanager
    async def loading(self, session_id: str) -> AsyncIterator[None]:
        """Held while ``session_id`` is being loaded; a second load waits for the first."""
        lock, users = self._loads.get(session_id, (asyncio.Lock(), 0))
        self._loads[session_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._loads[session_id]
            if users == 1:
                del self._loads[session_id]
            else:
                self._loads[session_id] = (lock, users - 1)
