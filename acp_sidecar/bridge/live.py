"""The live emitter: a running call's progress streamed as ``tool_call_update`` notifications.

Coalesced to about once per ``interval``, never dropped: every byte of terminal output reaches
a capable client once, in order; pending output is bounded (the writer waits). After
:meth:`LiveCall.close` nothing more is sent, so the result update follows the last progress.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from acp_sidecar.bridge.cards import output_progress, snapshot_progress, text_progress
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.protocol import ToolCallProgress
from acp_sidecar.tools.presentation import TerminalCallView, ToolCallView

logger = logging.getLogger(__name__)

Send = Callable[[ToolCallProgress], Awaitable[None]]
"""Sends one update to the client (as a ``session/update`` notification)."""

DEFAULT_INTERVAL_S = 0.05
DEFAULT_MAX_PENDING = 4 * 1024 * 1024
DEFAULT_SNAPSHOT_CHARS = 64 * 1024


class LiveCall:
    """The progress sink of one running call (see the module invariants)."""

    def __init__(
        self,
        call_id: str,
        call_view: ToolCallView,
        ctx: CardContext,
        send: Send,
        *,
        interval: float = DEFAULT_INTERVAL_S,
        max_pending: int = DEFAULT_MAX_PENDING,
        snapshot_chars: int = DEFAULT_SNAPSHOT_CHARS,
    ) -> None:
        self._call_id = call_id
        self._view = call_view
        self._ctx = ctx
        self._send = send
        self._interval = interval
        self._max_pending = max_pending
        self._snapshot_chars = snapshot_chars
        self._streams_terminal = ctx.terminal_output and isinstance(call_view, TerminalCallView)
        self._text: str | None = None
        self._chunks: list[str] = []
        self._pending = 0
        self._tail = ""
        self._omitted = 0
        self._snapshot_dirty = False
        self._streamed = 0
        self._last_send = -1e9
        self._lock = asyncio.Lock()
        self._timer: asyncio.TimerHandle | None = None
        self._timed_flush: asyncio.Task[None] | None = None
        self._closed = False
        self.updates_sent = 0
        """How many progress updates this call sent (for benchmarks and tests)."""

    @property
    def streamed(self) -> int:
        """Characters of terminal output already sent as live ``terminal_output``."""
        return self._streamed

    async def text(self, text: str) -> None:
        """Show ``text`` as the call's progress (the latest message wins)."""
        if self._closed:
            return
        self._text = text
        await self._soon()

    async def output(self, data: str) -> None:
        """Append terminal output."""
        if self._closed or not data:
            return
        if self._streams_terminal:
            self._chunks.append(data)
            self._pending += len(data)
            if self._pending >= self._max_pending:
                await self._wait_for_slot()
                await self._flush()
                return
        else:
            tail = self._tail + data
            if len(tail) > self._snapshot_chars:
                cut = len(tail) - self._snapshot_chars
                self._omitted += cut
                tail = tail[cut:]
            self._tail = tail
            self._snapshot_dirty = True
        await self._soon()

    async def close(self) -> int:
        """Send what is pending and stop; returns :attr:`streamed`."""
        if self._closed:
            return self._streamed
        self._cancel_timer()
        if self._timed_flush is not None and self._timed_flush is not asyncio.current_task():
            await asyncio.gather(self._timed_flush, return_exceptions=True)
        await self._flush()
        self._closed = True
        return self._streamed

    async def _soon(self) -> None:
        loop = asyncio.get_running_loop()
        wait = self._last_send + self._interval - loop.time()
        if wait <= 0:
            await self._flush()
        elif self._timer is None:
            self._timer = loop.call_later(wait, self._on_timer)

    async def _wait_for_slot(self) -> None:
        wait = self._last_send + self._interval - asyncio.get_running_loop().time()
        if wait > 0:
            await asyncio.sleep(wait)

    def _on_timer(self) -> None:
        self._timer = None
        if not self._closed:
            self._timed_flush = asyncio.ensure_future(self._flush_logged())

    async def _flush_logged(self) -> None:
        loop = asyncio.get_running_loop()
        wait = self._last_send + self._interval - loop.time()
        if wait > 0 and not self._closed:
            # A write flushed directly between the timer firing and this task running (a busy
            # loop runs them late): this flush waits for its own slot instead of following
            # that one at once.
            if self._timer is None:
                self._timer = loop.call_later(wait, self._on_timer)
            return
        try:
            await self._flush()
        except Exception:
            logger.exception("sending progress for call %s failed", self._call_id)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def _flush(self) -> None:
        async with self._lock:
            self._cancel_timer()
            updates: list[ToolCallProgress] = []
            if self._chunks:
                data = "".join(self._chunks)
                self._chunks.clear()
                self._pending = 0
                self._streamed += len(data)
                updates.append(output_progress(self._call_id, data))
            if self._snapshot_dirty:
                # Content replaces the card's content: the progress text rides in the same update.
                self._snapshot_dirty = False
                updates.append(
                    snapshot_progress(
                        self._call_id, self._view, self._tail, self._omitted, text=self._text
                    )
                )
                self._text = None
            if self._text is not None:
                updates.append(text_progress(self._call_id, self._view, self._text, self._ctx))
                self._text = None
            if not updates:
                return
            self._last_send = asyncio.get_running_loop().time()
            for update in updates:
                await self._send(update)
                self.updates_sent += 1
