"""Warnings the client can cause, logged at a bounded rate (:data:`BURST` per :data:`WINDOW`).

A loop of them would fill stderr and, when the editor does not drain the pipe, block the
event loop on the write. Callers pass values already cut short.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

BURST = 20
"""Lines of one kind logged per window."""
WINDOW = 60.0
"""Seconds in a window."""


class Throttle:
    """Rate-limits log lines by kind (a short, fixed string chosen by the caller)."""

    __slots__ = ("_clock", "_kinds")

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._kinds: dict[str, tuple[float, int, int]] = {}
        """kind → (window start, lines logged in it, lines left out of it)."""

    def log(
        self, logger: logging.Logger, level: int, kind: str, message: str, *args: object
    ) -> None:
        """Log ``message % args`` unless ``kind`` is over its rate."""
        if not logger.isEnabledFor(level):
            return
        now = self._clock()
        start, logged, dropped = self._kinds.get(kind, (now, 0, 0))
        if now - start >= WINDOW:
            if dropped:
                logger.log(level, "%d more lines like this were not logged: %s", dropped, kind)
            start, logged, dropped = now, 0, 0
        if logged < BURST:
            logger.log(level, message, *args)
            self._kinds[kind] = (start, logged + 1, dropped)
        else:
            self._kinds[kind] = (start, logged, dropped + 1)
