"""ACP v2 method names and the params and result type of each method a v2 connection serves
(:data:`METHOD_TO_TYPES`); the tests check both against the v2 schema.

A method missing here is not served over v2 (``-32601``), whatever v1 does with its name.
"""

from collections.abc import Mapping
from typing import Final

from acp_sidecar.protocol.methods import (
    INITIALIZE,
    SESSION_CANCEL,
    SESSION_CLOSE,
    SESSION_DELETE,
    SESSION_FORK,
    SESSION_LIST,
    SESSION_NEW,
    SESSION_PROMPT,
    SESSION_RESUME,
    SESSION_SET_CONFIG_OPTION,
    SESSION_UPDATE,
    MethodTypes,
)
from acp_sidecar.protocol.v2 import cancel, initialize, prompt, session, unstable

__all__ = [
    "AUTH_LOGIN",
    "AUTH_LOGOUT",
    "INITIALIZE",
    "METHOD_TO_TYPES",
    "SESSION_CANCEL",
    "SESSION_CLOSE",
    "SESSION_DELETE",
    "SESSION_FORK",
    "SESSION_LIST",
    "SESSION_NEW",
    "SESSION_PROMPT",
    "SESSION_RESUME",
    "SESSION_SET_CONFIG_OPTION",
    "SESSION_UPDATE",
    "TERMINAL_CANCEL",
    "TOOL_CALL_CANCEL",
]

AUTH_LOGIN: Final = "auth/login"
"""Log in with one of the methods advertised in ``initialize`` (v1's ``authenticate``)."""
AUTH_LOGOUT: Final = "auth/logout"
"""End the authenticated state (v1's ``logout``); served whenever auth methods are offered."""

TOOL_CALL_CANCEL: Final = "tool_call/cancel"
"""Stop one running tool call; the turn goes on."""
TERMINAL_CANCEL: Final = "terminal/cancel"
"""Stop the process of one background terminal."""

METHOD_TO_TYPES: Final[Mapping[str, MethodTypes]] = {
    INITIALIZE: MethodTypes(initialize.InitializeRequest, initialize.InitializeResponse),
    AUTH_LOGIN: MethodTypes(initialize.LoginAuthRequest, initialize.LoginAuthResponse),
    AUTH_LOGOUT: MethodTypes(initialize.LogoutAuthRequest, initialize.LogoutAuthResponse),
    SESSION_NEW: MethodTypes(session.NewSessionRequest, session.NewSessionResponse),
    SESSION_LIST: MethodTypes(session.ListSessionsRequest, session.ListSessionsResponse),
    SESSION_CLOSE: MethodTypes(session.CloseSessionRequest, session.CloseSessionResponse),
    SESSION_DELETE: MethodTypes(session.DeleteSessionRequest, session.DeleteSessionResponse),
    SESSION_SET_CONFIG_OPTION: MethodTypes(
        session.SetSessionConfigOptionRequest, session.SetSessionConfigOptionResponse
    ),
    SESSION_PROMPT: MethodTypes(prompt.PromptRequest, prompt.PromptResponse),
    SESSION_CANCEL: MethodTypes(prompt.CancelNotification, None),
    SESSION_RESUME: MethodTypes(session.ResumeSessionRequest, session.ResumeSessionResponse),
    SESSION_FORK: MethodTypes(unstable.ForkSessionRequest, unstable.ForkSessionResponse),
    TOOL_CALL_CANCEL: MethodTypes(cancel.CancelToolCallRequest, cancel.CancelToolCallResponse),
    TERMINAL_CANCEL: MethodTypes(cancel.CancelTerminalRequest, cancel.CancelTerminalResponse),
}
"""The client → agent methods a v2 connection serves, with their types."""
