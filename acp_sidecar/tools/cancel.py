"""Cooperative cancellation: the signal a tool polls or awaits, a running tool's race with it,
and the calls running now, each under a signal of its own (:class:`RunningCalls`).

A signal is cancelled once, first reason wins; a child is cancelled with its parent, never the
reverse (a timeout or one call's cancel never cancels the turn). :func:`run_watched` never
leaves a task behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import threading
from collections.abc import Callable, Iterator

from acp_sidecar.tools.errors import ToolCancelledError, ToolTimeoutError
from acp_sidecar.tools.listeners import Listeners, hear

logger = logging.getLogger(__name__)

Callback = Callable[[str], object]
"""Called with the cancellation reason."""

CANCEL_GRACE_S = 2.0
"""How long a cancelled or timed-out tool may take to reach quiescence before it is abandoned."""


class CancelSignal:
    """A one-way cancellation flag with callbacks and an awaitable ``wait``."""

    __slots__ = ("_callbacks", "_lock", "_reason")

    def __init__(self) -> None:
        self._reason: str | None = None
        self._callbacks: list[Callback] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        state = f"cancelled: {self._reason!r}" if self.cancelled else "live"
        return f"<CancelSignal {state}>"

    @property
    def cancelled(self) -> bool:
        """Whether the signal has been cancelled."""
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        """Why it was cancelled (``None`` while live)."""
        return self._reason

    def cancel(self, reason: str = "cancelled") -> None:
        """Cancel the signal and run its callbacks; later calls do nothing."""
        with self._lock:
            if self._reason is not None:
                return
            self._reason = reason
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            _run_callback(callback, reason)

    def add_callback(self, callback: Callback) -> Callable[[], None]:
        """Run ``callback(reason)`` on cancellation (at once if already cancelled).

        Returns a function that removes the callback if it has not run yet.
        """
        with self._lock:
            reason = self._reason
            if reason is None:
                self._callbacks.append(callback)
        if reason is not None:
            _run_callback(callback, reason)
            return _nothing

        def remove() -> None:
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)

        return remove

    async def wait(self) -> str:
        """Wait until the signal is cancelled; returns the reason."""
        if self._reason is not None:
            return self._reason
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()

        def wake(reason: str) -> None:
            def settle() -> None:
                if not future.done():
                    future.set_result(reason)

            if loop.is_closed():
                return
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                settle()
            else:
                loop.call_soon_threadsafe(settle)

        remove = self.add_callback(wake)
        try:
            return await future
        finally:
            remove()

    def raise_if_cancelled(self) -> None:
        """Raise :class:`ToolCancelledError` if the signal is cancelled."""
        if self._reason is not None:
            raise ToolCancelledError(f"cancelled: {self._reason}")

    def child(self) -> CancelSignal:
        """A new signal that is cancelled (with the same reason) when this one is."""
        child = CancelSignal()
        remove = self.add_callback(child.cancel)
        child.add_callback(lambda _reason: remove())
        return child


class RunningCalls:
    """A session's tool calls while they run, each under a child of its turn's signal: one
    may be cancelled alone (v2's ``tool_call/cancel``) and the turn goes on. Listeners hear a
    call start and, just before its result card is drawn, that it is closing and whether it
    was cancelled alone."""

    def __init__(self) -> None:
        self._signals: dict[str, CancelSignal] = {}
        self._sessions: dict[str, str] = {}
        """The session each running call's card is drawn in (a child's, for a subagent's)."""
        self._ended: dict[str, bool] = {}
        self._listeners: Listeners[_CallListener] = Listeners()

    def __contains__(self, call_id: object) -> bool:
        return call_id in self._signals

    @contextlib.contextmanager
    def running(
        self, call_id: str, turn: CancelSignal, *, session_id: str = ""
    ) -> Iterator[CancelSignal]:
        """The signal ``call_id`` (drawn in ``session_id``) runs under, a child of ``turn``,
        while the block runs. The call stays cancellable until :meth:`closing`: a cancel that
        races its end is taken (and changes nothing), as its card still offers it."""
        signal = CancelSignal()
        detach = turn.add_callback(signal.cancel)  # removed at the end: a turn has many calls
        self._signals[call_id] = signal
        self._sessions[call_id] = session_id
        for on_started, _ in self._listeners:
            hear(on_started, call_id, what=_WHAT)
        try:
            yield signal
        except BaseException:
            self.forget(call_id)  # no result card follows
            raise
        else:
            self._ended[call_id] = signal.cancelled and not turn.cancelled
        finally:
            detach()

    def signal_of(self, call_id: str) -> CancelSignal | None:
        """The signal ``call_id`` runs under (``None``: not running)."""
        return self._signals.get(call_id)

    def session_of(self, call_id: str) -> str | None:
        """The session the running call ``call_id`` is drawn in (``None``: not running)."""
        return self._sessions.get(call_id) if call_id in self._signals else None

    def cancel(self, call_id: str, reason: str) -> bool:
        """Cancel the call ``call_id`` alone; whether it runs or is ending (and was not
        cancelled already)."""
        signal = self._signals.get(call_id)
        if signal is None or signal.cancelled:
            return False
        signal.cancel(reason)
        return True

    def closing(self, call_id: str) -> None:
        """The result card of ``call_id`` is drawn next (a call that never ran: nothing)."""
        alone = self._ended.pop(call_id, None)
        if alone is None:
            return
        self._signals.pop(call_id, None)
        self._sessions.pop(call_id, None)
        for _, on_closing in self._listeners:
            hear(on_closing, call_id, alone, what=_WHAT)

    def forget(self, call_id: str) -> None:
        """``call_id`` ended with no result card to come (it was torn down): no longer
        cancellable, and no listener hears it close."""
        self._signals.pop(call_id, None)
        self._sessions.pop(call_id, None)
        self._ended.pop(call_id, None)

    def listen(
        self, on_started: Callable[[str], None], on_closing: Callable[[str, bool], None]
    ) -> Callable[[], None]:
        """Hear each call start and close from now on; returns what stops it."""
        return self._listeners.add((on_started, on_closing))


_CallListener = tuple[Callable[[str], None], Callable[[str, bool], None]]
"""Hears a call start, then close (whether it was cancelled alone)."""
_WHAT = "a running-calls listener"


async def run_watched(
    start: Callable[[], object],
    signal: CancelSignal | None,
    *,
    name: str,
    timeout_ms: float | None = None,
) -> object:
    """Run ``start()`` (a tool's ``execute``) until it finishes or ``signal`` fires.

    With ``timeout_ms``, ``signal`` is the call's own deadline signal (a child of the turn's,
    so expiry never cancels the turn): a timer cancels it with the reason ``"timeout"``.
    ``start`` may return a plain value or an awaitable; without a signal it is simply awaited.

    Raises:
        ToolTimeoutError: the deadline expired.
        ToolCancelledError: the signal fired (before the start, or while the tool ran and the
            tool did not finish within the grace).
        Exception: whatever the tool raised.
    """
    assert timeout_ms is None or signal is not None, "a deadline needs its own signal"
    if signal is not None:
        signal.raise_if_cancelled()
    pending = start()
    if not inspect.isawaitable(pending):
        return pending
    if signal is None:
        return await pending
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(pending)
    timer = None
    timed_out: list[bool] = []
    if timeout_ms is not None:

        def expire() -> None:
            if not signal.cancelled:
                timed_out.append(True)
                signal.cancel("timeout")

        timer = loop.call_later(timeout_ms / 1000, expire)
    waiter = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if task not in done:
            # The signal fired: give the tool a grace period to reach quiescence.
            done, _ = await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
        if timed_out:
            raise ToolTimeoutError(f"{name} timed out after {timeout_ms:g} ms")
        if task in done and not task.cancelled():
            return task.result()  # the tool's own result or error wins
        raise ToolCancelledError(f"{name} was cancelled: {signal.reason}")
    finally:
        if timer is not None:
            timer.cancel()
        waiter.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def _nothing() -> None:
    return None


def _run_callback(callback: Callback, reason: str) -> None:
    try:
        callback(reason)
    except Exception:
        logger.exception("a cancellation callback raised")
