"""The inbox of prompts steered into a running turn (see :mod:`acp_sidecar.server.steering`).

Invariant: a prompt offered with ``placed`` and not withdrawn has it called exactly once, with
the id it was logged under, whether the driver took it or the turn ended first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from acp_sidecar.protocol.content import ContentBlock
from acp_sidecar.values import Value

Prompt = tuple[ContentBlock, ...]

Placed = Callable[[str], None]
"""Told the message id a steered prompt was logged (and echoed) under."""


@attrs.frozen(repr=False, eq=False)
class Steered(Value):
    """One prompt steered into the turn."""

    prompt: Prompt
    """Its blocks, as the driver reads them."""
    placed: Placed | None = None
    """Who waits for the id it goes in under (v2's ``session/prompt``; v1 answers at once)."""

    def place(self, message_id: str) -> None:
        """Tell whoever waits the id the prompt was logged under."""
        if self.placed is not None:
            self.placed(message_id)


class SteeringInbox:
    """The prompts steered into one running turn, until its driver takes them."""

    __slots__ = ("_closed", "_prompts")

    def __init__(self) -> None:
        self._prompts: list[Steered] = []
        self._closed = False

    def offer(self, prompt: Sequence[ContentBlock], placed: Placed | None = None) -> bool:
        """Queue ``prompt`` for the turn (``placed`` told its id once it is logged);
        ``False``: the turn takes no more."""
        if self._closed:
            return False
        self._prompts.append(Steered(tuple(prompt), placed))
        return True

    def withdraw(self, placed: Placed) -> bool:
        """Take back the prompt offered with ``placed`` (its request was cancelled); whether
        it was still queued (not yet the driver's)."""
        for index, steered in enumerate(self._prompts):
            if steered.placed is placed:
                del self._prompts[index]
                return True
        return False

    def take(self, last: bool) -> tuple[Steered, ...]:
        """The prompts queued, in order, now the driver's; ``last`` (the driver would end the
        turn): with none queued the inbox closes, in the same step, so none can come after."""
        taken, self._prompts = tuple(self._prompts), []
        if last and not taken:
            self._closed = True
        return taken

    def close(self) -> tuple[Steered, ...]:
        """Close it (the turn ended); what the driver never took."""
        self._closed = True
        return self.take(last=False)
