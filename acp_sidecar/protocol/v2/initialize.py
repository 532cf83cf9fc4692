"""ACP v2 connection set-up: ``initialize`` and the ``auth/login`` / ``auth/logout`` pair.

v2 moved the capabilities under ``capabilities`` and the implementation under ``info`` (both
sides), and tags every auth method; an empty object (``{}``) present means "supported".
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.initialize import ElicitationCapabilities, Implementation

__all__ = [
    "AgentAuthCapabilities",
    "AgentCapabilities",
    "AuthMethod",
    "AuthMethodAgent",
    "AuthMethodTerminal",
    "ClientAuthCapabilities",
    "ClientCapabilities",
    "ElicitationCapabilities",
    "EnvVariable",
    "Implementation",
    "InitializeRequest",
    "InitializeResponse",
    "LoginAuthRequest",
    "LoginAuthResponse",
    "LogoutAuthRequest",
    "LogoutAuthResponse",
    "McpCapabilities",
    "PromptCapabilities",
    "SessionCapabilities",
]


@attrs.frozen(repr=False, eq=False)
class ClientAuthCapabilities(WireType):
    """Which opt-in auth method types the client runs (``agent`` always)."""

    terminal: dict[str, Any] | None = None
    """Present (``{}``): the client runs ``terminal`` methods; agents must not offer one
    otherwise."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ClientCapabilities(WireType):
    """What a v2 client supports. v2 has no client file system, terminals or notices flag:
    execution is the agent's and the baseline covers the rest."""

    auth: ClientAuthCapabilities | None = None
    """Auth method types beyond ``agent``; ``None``: none."""
    elicitation: ElicitationCapabilities | None = None
    """The ``elicitation/create`` modes the client handles; ``None``: none."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class PromptCapabilities(WireType):
    """Content a prompt may carry beyond text and resource links (present: accepted)."""

    image: dict[str, Any] | None = None
    """Present (``{}``): image blocks."""
    audio: dict[str, Any] | None = None
    """Present (``{}``): audio blocks."""
    embedded_context: dict[str, Any] | None = None
    """Present (``{}``): embedded resources."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class McpCapabilities(WireType):
    """The MCP transports the agent connects to (present: supported)."""

    stdio: dict[str, Any] | None = None
    """Present (``{}``): stdio servers."""
    http: dict[str, Any] | None = None
    """Present (``{}``): streamable HTTP servers."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionCapabilities(WireType):
    """Session features beyond the v2 baseline (which has new, list, resume, close)."""

    prompt: PromptCapabilities | None = None
    """Content accepted in prompts."""
    mcp: McpCapabilities | None = None
    """MCP transports supported."""
    delete: dict[str, Any] | None = None
    """Present (``{}``): the agent handles ``session/delete``."""
    fork: dict[str, Any] | None = None
    """Present (``{}``): the agent handles ``session/fork`` (unstable schema only)."""
    additional_directories: dict[str, Any] | None = None
    """Present (``{}``): the agent honours ``additionalDirectories``."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AgentAuthCapabilities(WireType):
    """The agent's auth capabilities (v2 has none beyond ``_meta``: logout is baseline)."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AgentCapabilities(WireType):
    """What the agent supports beyond the v2 baseline."""

    session: SessionCapabilities | None = None
    """Session features."""
    auth: AgentAuthCapabilities | None = None
    """Auth features."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class EnvVariable(WireType):
    """One environment variable (v2 lists them; v1 sent a map)."""

    name: str
    """The variable's name."""
    value: str
    """Its value."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AuthMethodAgent(WireType):
    """A method the agent runs itself when the client calls ``auth/login`` with its id."""

    type: Literal["agent"] = attrs.field(default="agent", kw_only=True)
    """The tag, always ``"agent"``."""
    method_id: str
    """The id sent back in ``auth/login``."""
    name: str
    """Human-readable name."""
    description: str | None = None
    """What the method does."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AuthMethodTerminal(WireType):
    """A method the client runs: the agent's command again with ``args`` and ``env`` added,
    in an interactive terminal. Offered only to clients with ``capabilities.auth.terminal``."""

    type: Literal["terminal"] = attrs.field(default="terminal", kw_only=True)
    """The tag, always ``"terminal"``."""
    method_id: str
    """Unique among the methods offered."""
    name: str
    """Human-readable name."""
    description: str | None = None
    """What the method does."""
    args: list[str] = attrs.Factory(list)
    """Arguments appended to the client's command line for the agent."""
    env: list[EnvVariable] = attrs.Factory(list)
    """Environment variables set on top of the configured ones."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


AuthMethod: TypeAlias = AuthMethodAgent | AuthMethodTerminal
"""An auth method offered in ``initialize`` (closed: one class per variant)."""


@attrs.frozen(repr=False, eq=False)
class InitializeRequest(WireType):
    """Params of v2 ``initialize``."""

    protocol_version: int
    """The latest protocol version the client supports."""
    info: Implementation
    """The client's name and version (required in v2)."""
    capabilities: ClientCapabilities = attrs.Factory(ClientCapabilities)
    """What the client supports."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class InitializeResponse(WireType):
    """Result of v2 ``initialize``."""

    protocol_version: int
    """The version chosen: 2."""
    info: Implementation
    """The agent's name and version (required in v2)."""
    capabilities: AgentCapabilities = attrs.Factory(AgentCapabilities)
    """What the agent supports beyond the baseline."""
    auth_methods: list[AuthMethod] = attrs.Factory(list)
    """Auth methods offered (empty: none needed)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class LoginAuthRequest(WireType):
    """Params of ``auth/login`` (v1's ``authenticate``)."""

    method_id: str
    """The id of the chosen :class:`AuthMethodAgent`."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class LoginAuthResponse(WireType):
    """Result of ``auth/login``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class LogoutAuthRequest(WireType):
    """Params of ``auth/logout`` (v1's ``logout``)."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class LogoutAuthResponse(WireType):
    """Result of ``auth/logout``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``): what was forgotten, said for the user."""
