"""The permission dialog over v2: the policy's (v1-shaped) request asked as v2's, with its
subject (a ``bash`` card's command, else the card), and the foreground state
``requires_action`` while a dialog, or an MCP server's question during a call, is open.

Invariants: the state is reported for the session whose foreground is blocked: a child's
(subagent's) dialog blocks its root parent's ``task`` call, so it is reported there, never
under the child's id (the child's own state goes out as ``subagent_update``).
``requires_action`` is sent when a session's first open dialog opens; when its last one
closes, ``running`` is sent if the session's turn goes on (not cancelled, not ended) and it
was a dialog answered with a choice or a question (answered, or abandoned with its call
cancelled alone: a question is asked under its call's signal);
otherwise (a cancelled dialog cancels the turn) its ``idle`` follows, or went out already.
So every ``requires_action`` is followed by ``running`` or ``idle``. A dialog open while
another call of the turn runs still reports ``requires_action`` (our calls that ask are asked
before they run, one dialog at a time per call).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acp_sidecar.bridge.v2.cards import card_content, rest_of
from acp_sidecar.protocol.client import (
    CreateElicitationRequest,
    CreateElicitationResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    SelectedPermissionOutcome,
)
from acp_sidecar.protocol.methods import SESSION_REQUEST_PERMISSION
from acp_sidecar.protocol.v2 import permissions as v2
from acp_sidecar.protocol.v2.prompt import RequiresActionState, RunningState, StateUpdate
from acp_sidecar.server.children import root_of
from acp_sidecar.tools.errors import ToolCancelledError

if TYPE_CHECKING:
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.tools.cancel import CancelSignal


class V2PermissionAsker:
    """Asks the client's v2 dialog for the policy (:class:`~acp_sidecar.bridge.policy.
    PermissionAsker`) and MCP servers' questions (:class:`~acp_sidecar.server.client.
    Elicitor`), reporting each session's state around them through ``send_state``."""

    def __init__(self, server: Connection, send_state: Callable[[str, StateUpdate], None]) -> None:
        self._server = server
        self._client = server.client
        self._send_state = send_state
        self._open: Counter[str] = Counter()

    async def request_permission(
        self, request: RequestPermissionRequest, *, signal: CancelSignal | None = None
    ) -> RequestPermissionResponse:
        """``session/request_permission`` in v2's form; the answer has v1's shape."""
        session_id = self._blocked(request.session_id)
        asked = v2_request(request)
        self._opened(session_id)
        answered = False
        try:
            response = await self._client.call(
                SESSION_REQUEST_PERMISSION, asked, RequestPermissionResponse, signal
            )
            answered = isinstance(response.outcome, SelectedPermissionOutcome)
            return response
        finally:
            self._closed(session_id, resumed=answered)

    async def create_elicitation(
        self, request: CreateElicitationRequest, *, signal: CancelSignal | None = None
    ) -> CreateElicitationResponse:
        """``elicitation/create`` (v1's shape is v2's). One asked during a tool call blocks
        the turn as a dialog does; one outside any call is background and changes no state."""
        if request.tool_call_id is None:
            return await self._client.create_elicitation(request, signal=signal)
        session_id = self._blocked(request.session_id)
        if signal is None:  # abandoned with the call that asked (alone, or with its turn)
            signal = self._call_signal(session_id, request.tool_call_id)
        self._opened(session_id)
        try:
            return await self._client.create_elicitation(request, signal=signal)
        except ToolCancelledError:
            return CreateElicitationResponse(action="cancel")  # the server's call is over
        finally:
            # Answered or abandoned, the turn goes on unless it was cancelled (then idle).
            self._closed(session_id, resumed=True)

    def _call_signal(self, session_id: str, call_id: str) -> CancelSignal | None:
        session = self._server.sessions.get(session_id)
        return None if session is None else session.calls.signal_of(call_id)

    def _blocked(self, session_id: str) -> str:
        """The session whose foreground a dialog under ``session_id`` blocks: a child's
        root parent, else itself."""
        return root_of(self._server.children, session_id)

    def _goes_on(self, session_id: str) -> bool:
        session = self._server.sessions.get(session_id)
        turn = None if session is None else session.running
        return turn is not None and not turn.cancelled

    def _opened(self, session_id: str) -> None:
        self._open[session_id] += 1
        if self._open[session_id] == 1:
            self._send_state(session_id, RequiresActionState())

    def _closed(self, session_id: str, *, resumed: bool) -> None:
        self._open[session_id] -= 1
        if not self._open[session_id]:
            del self._open[session_id]
            if resumed and self._goes_on(session_id):  # not after the turn's idle
                self._send_state(session_id, RunningState())


def v2_request(request: RequestPermissionRequest) -> v2.RequestPermissionRequest:
    """The v2 dialog of the policy's request: the same options, the card's title as the
    question, a terminal card's command as its subject (else the card itself)."""
    card = request.tool_call
    title = card.title or "Allow this tool call?"
    return v2.RequestPermissionRequest(
        session_id=request.session_id,
        title=title,
        options=list(request.options),
        subject=_command(card.raw_input, card.meta, card.tool_call_id) or _card(request),
        meta=request.meta,
    )


def _command(raw_input: Any, meta: dict[str, Any] | None, call_id: str) -> v2.CommandSubject | None:
    """A terminal card's command (its terminal and the call's ``command`` argument)."""
    info = (meta or {}).get("terminal_info")
    command = raw_input.get("command") if isinstance(raw_input, dict) else None
    if info is None or not isinstance(command, str) or not info.get("cwd"):
        return None
    return v2.CommandSubject(
        command=command, cwd=info["cwd"], tool_call_id=call_id, terminal_id=info["terminal_id"]
    )


def _card(request: RequestPermissionRequest) -> v2.ToolCallSubject:
    card = request.tool_call
    return v2.ToolCallSubject(
        tool_call=v2.ToolCallCard(
            tool_call_id=card.tool_call_id,
            title=card.title,
            kind=card.kind,
            status=card.status,
            content=card_content(card.content),
            locations=card.locations,
            raw_input=card.raw_input,
            meta=rest_of(card.meta or {}),
        )
    )
