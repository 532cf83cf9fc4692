"""The driver a connection serves with, and the drivers it replaced.

Invariant: a turn keeps the driver it started with; a replaced driver is closed once every
turn running when it was replaced has ended (or when the connection closes), never before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from acp_sidecar.agent.driver import Driver, DriverFactory

logger = logging.getLogger(__name__)

CLOSE_TIMEOUT = 0.5
"""Seconds a driver's ``aclose`` may take before it is given up on (logged)."""


class DriverSlot:
    """The current driver (made on first use) and the replaced ones not closed yet."""

    def __init__(self, factory: DriverFactory) -> None:
        self.factory = factory
        self._current: Driver | None = None
        self._retired: dict[int, Driver] = {}
        """Replaced drivers not closed yet, by ``id``."""

    @property
    def current(self) -> Driver:
        """The driver later turns and new sessions get, made on first use."""
        if self._current is None:
            self._current = self.factory()
        return self._current

    @property
    def made(self) -> bool:
        """Whether the current driver was made (a replacement has options to compare)."""
        return self._current is not None

    def replace(
        self,
        factory: DriverFactory,
        running: Sequence[asyncio.Event],
        spawn: Callable[[Coroutine[Any, Any, None]], None],
    ) -> None:
        """Serve with ``factory``'s driver from now on; the old one (if made) is closed with
        ``spawn`` once every event of ``running`` (the turns on it) is set."""
        old, self._current = self._current, None
        self.factory = factory
        if old is None:
            return
        self._retired[id(old)] = old

        async def close_when_idle() -> None:
            for idle in running:
                await idle.wait()
            catalog = old.catalog
            if catalog is not None and catalog.listing_started:
                # A request may be waiting on its listing (a model being chosen); it is
                # bounded by its own timeout, and closing would cancel it under them.
                with contextlib.suppress(Exception):
                    await catalog.list_models()
            if self._retired.pop(id(old), None) is not None:
                await close_driver(old)

        spawn(close_when_idle())

    async def aclose(self) -> None:
        """Close the current driver and every replaced one at once (the connection ends)."""
        retired, self._retired = list(self._retired.values()), {}
        await asyncio.gather(*(close_driver(d) for d in (self._current, *retired)))


async def close_driver(driver: Driver | None) -> None:
    """Close ``driver``'s connections (bounded; a failure is logged)."""
    if driver is None:
        return
    try:
        await asyncio.wait_for(driver.aclose(), CLOSE_TIMEOUT)
    except Exception:
        logger.exception("closing the driver failed")
