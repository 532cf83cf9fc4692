"""Pacing input by output: the client's lines held back while it is behind on our output.

While our output backs up, the transport holds what would answer the client and hands on at once
what the client waits on (an answer to our request, a cancel): a client that never reads cannot
grow our memory, one that finishes a write before reading cannot deadlock us. Held lines run in
arrival order on a later loop turn; past :data:`HELD_INPUT_LIMIT` input is paused; the end of
input waits for them.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)

HELD_INPUT_LIMIT = 4 * 1024 * 1024
"""Bytes of input held back while the client is behind on our output (4 MiB) above which
input is no longer read."""
HELD_LINE_COST = 1024
"""What holding one line costs on top of its bytes (its place in the queue, and the error
a malformed line will be answered with)."""


class HeldInput:
    """The lines held while the client is behind on our output (see the module docstring)."""

    def __init__(
        self,
        handle_line: Callable[[bytes | bytearray], None],
        refuse_oversized: Callable[[], None],
    ) -> None:
        """``handle_line`` handles a held line; ``refuse_oversized`` answers a line that was
        too long to read (held as ``None``)."""
        self._handle_line = handle_line
        self._refuse_oversized = refuse_oversized
        self._backed_up = False
        self._held: collections.deque[bytes | bytearray | None] = collections.deque()
        """Lines held back (``None``: an oversized line, skipped, whose error answer is
        still owed)."""
        self._held_bytes = 0
        self._input_paused = False
        self._pause_input: Callable[[], None] = _nothing
        self._resume_input: Callable[[], None] = _nothing
        self._drain_scheduled = False
        self._after_held: Callable[[], None] | None = None

    def pace(self, pause: Callable[[], None], resume: Callable[[], None]) -> None:
        """How to stop and restart reading input once :data:`HELD_INPUT_LIMIT` is held."""
        self._pause_input = pause
        self._resume_input = resume

    def backed_up(self) -> None:
        """The client is behind on our output: hold what would answer it."""
        self._backed_up = True

    def caught_up(self) -> None:
        """The client caught up: handle what was held (soon, not inside the writer)."""
        self._backed_up = False
        if self._held and not self._drain_scheduled:
            self._drain_scheduled = True
            asyncio.get_running_loop().call_soon(self._drain)

    def after(self, then: Callable[[], None]) -> None:
        """Call ``then`` once every held line is handled (now, when none is)."""
        if self._held:
            self._after_held = then
        else:
            then()

    @property
    def held_bytes(self) -> int:
        """What the held lines cost now (see :data:`HELD_LINE_COST`)."""
        return self._held_bytes

    @property
    def holding(self) -> bool:
        """Whether a line arriving now must be held (unless it is urgent)."""
        # Once anything is held, later lines queue behind it: requests keep their order.
        return self._backed_up or bool(self._held)

    @property
    def has_held(self) -> bool:
        """Whether any line is held now."""
        return bool(self._held)

    def hold(self, line: bytes | bytearray | None) -> None:
        """Hold ``line`` (``None``: an oversized line) until the client catches up."""
        self._held.append(line)
        self._held_bytes += HELD_LINE_COST + (0 if line is None else len(line))
        if self._held_bytes >= HELD_INPUT_LIMIT and not self._input_paused:
            logger.debug("the client is not reading; input paused")
            self._input_paused = True
            self._pause_input()

    def _drain(self) -> None:
        self._drain_scheduled = False
        while self._held and not self._backed_up:
            line = self._held.popleft()
            self._held_bytes -= HELD_LINE_COST + (0 if line is None else len(line))
            if line is None:
                self._refuse_oversized()
            else:
                self._handle_line(line)
        if self._held:
            return
        if self._input_paused:
            self._input_paused = False
            self._resume_input()
        then, self._after_held = self._after_held, None
        if then is not None:
            then()


def _nothing() -> None:
    pass


__all__ = ["HELD_INPUT_LIMIT", "HELD_LINE_COST", "HeldInput"]
