"""The session logs this process holds open: a bounded set, least recently used released first.

A log held open costs a file descriptor, and its writer's lock lives on that descriptor. A
sidecar serving thousands of sessions must not hold thousands of descriptors (past the
process's limit, new logs and the commands tools run fail with ``EMFILE``), so at most
:attr:`HeldLogs.bound` logs are held; using one more releases the one used least recently among
those with no turn running (or, when every one is mid-turn, the least recently used) — its
pending text written, synced, unlocked and closed — and that session re-opens and re-locks its
log on its next use. The session's claim (:mod:`acp_sidecar.store.claims`) is not released
with its log, so no other acp-sidecar takes the session meanwhile (re-opening fails clearly if
something else locked the log itself). Preferring
idle logs keeps a streaming turn's log open, so its message is not cut into one record per
release, nor re-opened for every batch of text.

Invariants:
- :meth:`HeldLogs.touch` is called on the event loop's thread only; it never releases the
  log it was called for, so a session being written to is never closed under its writer.
- :meth:`HeldLogs.replaying` bounds the ``session/load`` replays running at once to half the
  bound (at least one): each holds a writer's and a reader's descriptor outside the held set
  until it ends, so held logs and replays together stay within half the descriptor limit.
- The bound is :func:`default_bound`: a quarter of the soft ``RLIMIT_NOFILE`` (at least 8, at
  most 256), leaving the rest to commands, MCP servers, reads and the wire.
- :meth:`HeldLogs.loading` serialises ``session/load`` of one session id, so a second load
  of the same session waits for the first and then replays from the session it loaded.
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
    """How many logs to hold open under this process's soft descriptor limit."""
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
    """The logs held open, in order of use (see the module invariants)."""

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
