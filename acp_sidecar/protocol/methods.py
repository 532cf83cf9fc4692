"""ACP v1 method names, exactly as they appear in the ``method`` field on the wire.

Invariant: every constant equals an ``x-method`` value of the official v1 schema (the test
suite checks this against the vendored copy).
"""

from typing import Final

# Client → agent requests (the agent answers them).
INITIALIZE: Final = "initialize"
"""Negotiate the protocol version and exchange capabilities."""
AUTHENTICATE: Final = "authenticate"
"""Authenticate with one of the methods advertised in ``initialize``."""
SESSION_NEW: Final = "session/new"
"""Create a session."""
SESSION_LOAD: Final = "session/load"
"""Resume a stored session; the agent replays its history as ``session/update``."""
SESSION_LIST: Final = "session/list"
"""List stored sessions."""
SESSION_PROMPT: Final = "session/prompt"
"""Run one prompt turn."""
SESSION_SET_MODE: Final = "session/set_mode"
"""Switch the session's mode."""

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

# Either direction, protocol level.
CANCEL_REQUEST: Final = "$/cancel_request"
"""Cancel an outstanding request by id (the receiver may ignore it)."""

CLIENT_NOTIFICATIONS: Final = frozenset({SESSION_CANCEL, CANCEL_REQUEST})
"""What the client may send the agent as a notification (no ``id``); every other method the
client sends is a request, and a request without an ``id`` is not run."""
