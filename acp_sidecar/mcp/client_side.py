"""The client side of MCP as the session sees it (roots, elicitation), in plain values of ours.
Importing it does not import the SDK, so the server's session wiring can name these types.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

import attrs

ElicitationAction: TypeAlias = Literal["accept", "decline", "cancel"]
"""How the user answered: MCP's three actions (an editor's extension action maps to cancel)."""


@attrs.frozen
class FormElicitation:
    """A server asks the user to fill in a form."""

    message: str
    """What the server tells the user it needs."""
    requested_schema: Mapping[str, Any]
    """The form, as the JSON schema the server sent (a flat object of primitive fields) in
    the current form (legacy ``enumNames`` mapped to ``oneOf``)."""
    tool_call_id: str | None = None
    """The tool call it is asked during, when it is known."""


@attrs.frozen
class UrlElicitation:
    """A server asks the user to visit a URL (out-of-band interaction)."""

    message: str
    """Why the user should visit it."""
    elicitation_id: str | None
    """The server's id of this elicitation, if it gave one."""
    url: str
    """Where to send the user (an ``http``/``https`` URL)."""
    tool_call_id: str | None = None
    """The tool call it is asked during, when it is known."""


ElicitationRequest: TypeAlias = FormElicitation | UrlElicitation
"""What a server's ``elicitation/create`` asks for: a closed union, matched exhaustively."""


@attrs.frozen
class ElicitationAnswer:
    """The user's answer to an elicitation."""

    action: ElicitationAction
    content: Mapping[str, Any] | None = None
    """The form's values, with ``accept`` only (strings, numbers, booleans, lists of
    strings); a value a server cannot be sent makes the answer a decline."""


@attrs.frozen
class ClientSideHooks:
    """How a session answers its MCP servers' requests to the client."""

    roots: Callable[[], Sequence[str]]
    """The session's directories (absolute), answered as ``file://`` roots."""
    elicit: Callable[[ElicitationRequest], Awaitable[ElicitationAnswer]] | None = None
    """Asks the user (ACP ``elicitation/create``); None -> every elicitation is declined."""


__all__ = [
    "ClientSideHooks",
    "ElicitationAction",
    "ElicitationAnswer",
    "ElicitationRequest",
    "FormElicitation",
    "UrlElicitation",
]
