"""The inbox of prompts steered into a running turn (see :mod:`acp_sidecar.server.steering`)."""

from __future__ import annotations

from collections.abc import Sequence

from acp_sidecar.protocol.content import ContentBlock

Prompt = tuple[ContentBlock, ...]


class SteeringInbox:
    """The prompts steered into one running turn, until its driver takes them."""

    __slots__ = ("_closed", "_prompts")

    def __init__(self) -> None:
        self._prompts: list[Prompt] = []
        self._closed = False

    def offer(self, prompt: Sequence[ContentBlock]) -> bool:
        """Queue ``prompt`` for the turn; ``False``: the turn takes no more."""
        if self._closed:
            return False
        self._prompts.append(tuple(prompt))
        return True

    def take(self, last: bool) -> tuple[Prompt, ...]:
        """The prompts queued, in order, now the driver's; ``last`` (the driver would end the
        turn): with none queued the inbox closes, in the same step, so none can come after."""
        taken, self._prompts = tuple(self._prompts), []
        if last and not taken:
            self._closed = True
        return taken

    def close(self) -> tuple[Prompt, ...]:
        """Close it (the turn ended); what the driver never took."""
        self._closed = True
        return self.take(last=False)
