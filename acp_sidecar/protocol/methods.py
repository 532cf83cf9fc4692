"""ACP v1 method names as on the wire, and each method's params and result type
(:data:`METHOD_TO_TYPES`, after lsprotocol's table; the tests check both against the schema).
"""

from collections.abc import Mapping
from typing import Final

import attrs

from acp_sidecar.protocol import steering
from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.client import (
    CreateElicitationRequest,
    CreateElicitationResponse,
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionRequest,
    RequestPermissionResponse,
    WriteTextFileRequest,
    WriteTextFileResponse,
)
from acp_sidecar.protocol.initialize import (
    AuthenticateRequest,
    AuthenticateResponse,
    InitializeRequest,
    InitializeResponse,
    LogoutRequest,
    LogoutResponse,
)
from acp_sidecar.protocol.session import (
    CancelNotification,
    CancelRequestNotification,
    CloseSessionRequest,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    ForkSessionRequest,
    ForkSessionResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    LoadSessionResponse,
    NewSessionRequest,
    NewSessionResponse,
    PromptRequest,
    PromptResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
    SetSessionModeRequest,
    SetSessionModeResponse,
)
from acp_sidecar.protocol.updates import SessionNotification

# Client → agent requests (the agent answers them).
INITIALIZE: Final = "initialize"
"""Negotiate the protocol version and exchange capabilities."""
AUTHENTICATE: Final = "authenticate"
"""Authenticate with one of the methods advertised in ``initialize``."""
LOGOUT: Final = "logout"
"""End the current authenticated state (advertised as ``agentCapabilities.auth.logout``)."""
SESSION_NEW: Final = "session/new"
"""Create a session."""
SESSION_LOAD: Final = "session/load"
"""Resume a stored session; the agent replays its history as ``session/update``."""
SESSION_LIST: Final = "session/list"
"""List stored sessions."""
SESSION_RESUME: Final = "session/resume"
"""Reattach to a stored session without replaying its history."""
SESSION_CLOSE: Final = "session/close"
"""Cancel a session's work and free what it holds (it stays stored)."""
SESSION_DELETE: Final = "session/delete"
"""Remove a stored session (it leaves ``session/list``)."""
SESSION_FORK: Final = "session/fork"
"""Start a new session from a stored one's history (unstable schema)."""
SESSION_PROMPT: Final = "session/prompt"
"""Run one prompt turn."""
SESSION_SET_MODE: Final = "session/set_mode"
"""Switch the session's mode."""
SESSION_SET_CONFIG_OPTION: Final = "session/set_config_option"
"""Set one of the session's config options; the answer carries all of them."""

# Client → agent notifications.
SESSION_CANCEL: Final = "session/cancel"
"""Cancel the running prompt turn of a session."""

# Agent → client notifications.
SESSION_UPDATE: Final = "session/update"
"""Stream message chunks, tool calls, plans and mode changes to the client."""

# Agent → client requests.
SESSION_REQUEST_PERMISSION: Final = "session/request_permission"
"""Ask the user to allow or reject a tool call."""
FS_READ_TEXT_FILE: Final = "fs/read_text_file"
"""Read a text file through the client (sees unsaved editor buffers)."""
FS_WRITE_TEXT_FILE: Final = "fs/write_text_file"
"""Write a text file through the client."""
ELICITATION_CREATE: Final = "elicitation/create"
"""Ask the user for structured input (a form, or a page at a URL)."""

# Either direction, protocol level.
CANCEL_REQUEST: Final = "$/cancel_request"
"""Cancel an outstanding request by id (the receiver may ignore it)."""

CLIENT_NOTIFICATIONS: Final = frozenset({SESSION_CANCEL, CANCEL_REQUEST})
"""What the client may send the agent as a notification (no ``id``); every other method the
client sends is a request, and a request without an ``id`` is not run."""

UNSTABLE_METHODS: Final = frozenset({SESSION_FORK})
"""Methods the stable v1 schema does not define yet; the unstable schema does."""


@attrs.frozen
class MethodTypes:
    """The wire types of one method: what its params decode to, what its answer encodes."""

    params: type[WireType]
    result: type[WireType] | None
    """``None`` for a notification (it has no answer)."""


METHOD_TO_TYPES: Final[Mapping[str, MethodTypes]] = {
    # Client → agent requests.
    INITIALIZE: MethodTypes(InitializeRequest, InitializeResponse),
    AUTHENTICATE: MethodTypes(AuthenticateRequest, AuthenticateResponse),
    LOGOUT: MethodTypes(LogoutRequest, LogoutResponse),
    SESSION_NEW: MethodTypes(NewSessionRequest, NewSessionResponse),
    SESSION_LOAD: MethodTypes(LoadSessionRequest, LoadSessionResponse),
    SESSION_LIST: MethodTypes(ListSessionsRequest, ListSessionsResponse),
    SESSION_RESUME: MethodTypes(ResumeSessionRequest, ResumeSessionResponse),
    SESSION_CLOSE: MethodTypes(CloseSessionRequest, CloseSessionResponse),
    SESSION_DELETE: MethodTypes(DeleteSessionRequest, DeleteSessionResponse),
    SESSION_FORK: MethodTypes(ForkSessionRequest, ForkSessionResponse),
    SESSION_PROMPT: MethodTypes(PromptRequest, PromptResponse),
    SESSION_SET_MODE: MethodTypes(SetSessionModeRequest, SetSessionModeResponse),
    SESSION_SET_CONFIG_OPTION: MethodTypes(
        SetSessionConfigOptionRequest, SetSessionConfigOptionResponse
    ),
    # Client → agent notifications.
    SESSION_CANCEL: MethodTypes(CancelNotification, None),
    # Agent → client notifications.
    SESSION_UPDATE: MethodTypes(SessionNotification, None),
    # Agent → client requests.
    SESSION_REQUEST_PERMISSION: MethodTypes(RequestPermissionRequest, RequestPermissionResponse),
    FS_READ_TEXT_FILE: MethodTypes(ReadTextFileRequest, ReadTextFileResponse),
    FS_WRITE_TEXT_FILE: MethodTypes(WriteTextFileRequest, WriteTextFileResponse),
    ELICITATION_CREATE: MethodTypes(CreateElicitationRequest, CreateElicitationResponse),
    # Either direction, protocol level.
    CANCEL_REQUEST: MethodTypes(CancelRequestNotification, None),
}
"""The params and result type of every ACP method this package speaks, by method name."""


EXTENSION_TYPES: Final[Mapping[str, MethodTypes]] = {
    steering.SESSION_STEERING: MethodTypes(
        steering.SessionSteeringRequest, steering.SessionSteeringResponse
    ),
}
"""The extension methods (``_``-prefixed, not in the schema) the agent serves, and their
types: kept apart from :data:`METHOD_TO_TYPES`, which is exactly the schema's."""
