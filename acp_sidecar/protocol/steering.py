"""The ``_session/steering`` extension (input while a turn runs), as the leading agents speak
it: codex-acp's ``src/AcpExtensions.ts`` shapes the request ``{sessionId, prompt}`` and the
answer ``{outcome}``; clients add ``_meta.steering.idleBehavior: "promptRequired"`` to the
request to keep idle sessions' turns to themselves. Not in the ACP schema: its shapes are
pinned by the tests.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.content import ContentBlock

SESSION_STEERING: Final = "_session/steering"
"""The extension request's method (ACP extension methods start with ``_``)."""

STEERING_META_KEY: Final = "steering"
"""Where ``InitializeResponse._meta`` advertises it (``{"supported": true}``) and where a
request's ``_meta`` carries its options."""

PROMPT_REQUIRED: Final = "promptRequired"
"""The ``idleBehavior`` that asks an idle session not to start a turn."""

SteeringOutcome: TypeAlias = Literal["injected", "startedNewTurn", "promptRequired", "failed"]
"""What became of the steered prompt: it joined the running turn; it started a turn of its
own; the session was idle and the client asked to prompt it itself; it was lost."""


@attrs.frozen(repr=False, eq=False)
class SessionSteeringRequest(WireType):
    """Params of ``_session/steering``: a prompt for a session whatever it is doing."""

    session_id: str
    """The session to steer."""
    prompt: list[ContentBlock]
    """The user's message, as ``session/prompt`` takes it."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``); ``steering.idleBehavior`` is read."""

    @property
    def prompt_required(self) -> bool:
        """Whether the client asked for ``promptRequired`` when the session is idle."""
        steering = (self.meta or {}).get(STEERING_META_KEY)
        return isinstance(steering, dict) and steering.get("idleBehavior") == PROMPT_REQUIRED


@attrs.frozen(repr=False, eq=False)
class SessionSteeringResponse(WireType):
    """Result of ``_session/steering``."""

    outcome: SteeringOutcome
    """What became of the prompt."""


STEERING_ADVERTISED: Final = {STEERING_META_KEY: {"supported": True}}
"""``InitializeResponse._meta`` as the leading agents advertise the extension."""
