"""A read stream that calls ``on_end`` once when it ends: how a connection learns its server is
gone (the SDK's dispatcher tells no one).
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import Any, Self

import anyio
from mcp.client._transport import ReadStream
from mcp.shared.message import SessionMessage

Item = SessionMessage | Exception


class WatchedReadStream:
    """Forwards to ``inner``; ``on_end()`` runs once when it ends or is closed under a read."""

    def __init__(self, inner: ReadStream[Item], on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end: Callable[[], None] | None = on_end

    @property
    def last_context(self) -> Any:
        """The sender's context, for the dispatcher (only some streams carry one)."""
        return getattr(self._inner, "last_context", None)

    def _ended(self) -> None:
        on_end, self._on_end = self._on_end, None
        if on_end is not None:
            on_end()

    async def receive(self) -> Item:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._ended()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Item:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None
