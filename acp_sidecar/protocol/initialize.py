"""ACP connection set-up: ``initialize`` (version and capabilities) and ``authenticate``.

Omitted capabilities decode to the schema's defaults (nothing optional), never ``None``.
"""

from __future__ import annotations

from typing import Any, Final, Literal, TypeAlias

import attrs

from acp_sidecar.protocol._base import WireType

PROTOCOL_VERSION: Final = 1
"""The ACP major version this agent speaks."""


@attrs.frozen(repr=False, eq=False)
class FileSystemCapability(WireType):
    """Which ``fs/*`` methods the client offers (the schema's ``FileSystemCapabilities``)."""

    read_text_file: bool = False
    """The client handles ``fs/read_text_file``."""
    write_text_file: bool = False
    """The client handles ``fs/write_text_file``."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ElicitationCapabilities(WireType):
    """Which ``elicitation/create`` modes the client handles (presence of a field: yes)."""

    form: dict[str, Any] | None = None
    """Set (``{}``) when the client draws form elicitations."""
    url: dict[str, Any] | None = None
    """Set (``{}``) when the client sends the user to a URL."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ClientSessionCapabilities(WireType):
    """Session extensions the client supports: each present (``{}``) when it does."""

    compaction: dict[str, Any] | None = None
    """The client shows ``compaction_update`` / ``compaction_summary_chunk``."""
    config_options: dict[str, Any] | None = None
    """Config option extensions (``boolean`` options)."""
    notices: dict[str, Any] | None = None
    """The client shows ``notice`` updates."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AuthCapabilities(WireType):
    """Which opt-in authentication method types the client can run (``agent`` always)."""

    terminal: bool = False
    """The client can run ``terminal`` methods: it starts the agent's own command again, with
    the method's ``args`` and ``env`` added, in an interactive terminal. Agents must not
    advertise a terminal method to a client that did not set this."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ClientCapabilities(WireType):
    """What the client supports."""

    fs: FileSystemCapability = attrs.Factory(FileSystemCapability)
    """File-system methods the client offers."""
    terminal: bool = False
    """The client handles the ``terminal/*`` methods."""
    elicitation: ElicitationCapabilities | None = None
    """The client handles ``elicitation/create`` (in the modes it names); ``None``: it does not."""
    session: ClientSessionCapabilities | None = None
    """Session extensions the client supports (notices, compaction, …); ``None``: none."""
    auth: AuthCapabilities = attrs.Factory(AuthCapabilities)
    """Which authentication method types the agent may offer beyond ``agent``."""
    plan: dict[str, Any] | None = None
    """Present (``{}``): the client takes ``plan_update`` / ``plan_removed`` instead of the
    legacy ``plan``; ``None``: it does not."""
    subagents: dict[str, Any] | None = None
    """Present (``{}``): the client takes child sessions (``subagent_update``,
    ``session_message``, ``session`` card content); ``None``: it does not."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), e.g. ``{"terminal_output": true}``; verbatim."""

    @property
    def takes_plan_operations(self) -> bool:
        """Whether the client advertised ``plan`` (``{}``)."""
        return self.plan is not None

    @property
    def takes_subagents(self) -> bool:
        """Whether the client advertised ``subagents`` (``{}``)."""
        return self.subagents is not None

    @property
    def shows_compaction(self) -> bool:
        """Whether the client advertised ``session.compaction``."""
        return self.session is not None and self.session.compaction is not None


@attrs.frozen(repr=False, eq=False)
class PromptCapabilities(WireType):
    """Which content a prompt may carry beyond text and resource links."""

    image: bool = False
    """Prompts may contain image blocks."""
    audio: bool = False
    """Prompts may contain audio blocks."""
    embedded_context: bool = False
    """Prompts may contain embedded resources."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class McpCapabilities(WireType):
    """Which MCP transports the agent can connect to (stdio is always supported)."""

    http: bool = False
    """HTTP MCP servers."""
    sse: bool = False
    """SSE MCP servers."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionListCapabilities(WireType):
    """Presence means the agent handles ``session/list``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionResumeCapabilities(WireType):
    """Presence means the agent handles ``session/resume``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionForkCapabilities(WireType):
    """Presence means the agent handles ``session/fork`` (unstable)."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionCloseCapabilities(WireType):
    """Presence means the agent handles ``session/close``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionDeleteCapabilities(WireType):
    """Presence means the agent handles ``session/delete``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionAdditionalDirectoriesCapabilities(WireType):
    """Presence means the agent honours ``additionalDirectories`` on session requests."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class SessionCapabilities(WireType):
    """Optional session methods the agent handles."""

    list: SessionListCapabilities | None = None
    """Set when the agent handles ``session/list``."""
    resume: SessionResumeCapabilities | None = None
    """Set when the agent handles ``session/resume``."""
    close: SessionCloseCapabilities | None = None
    """Set when the agent handles ``session/close``."""
    delete: SessionDeleteCapabilities | None = None
    """Set when the agent handles ``session/delete``."""
    additional_directories: SessionAdditionalDirectoriesCapabilities | None = None
    """Set when the agent honours ``additionalDirectories``."""
    fork: SessionForkCapabilities | None = None
    """Set when the agent handles ``session/fork`` (unstable schema)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class LogoutCapabilities(WireType):
    """Presence means the agent handles ``logout``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AgentAuthCapabilities(WireType):
    """The agent's authentication-related capabilities."""

    logout: LogoutCapabilities | None = None
    """Set when the agent handles ``logout`` (omitted: clients must not call it)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AgentCapabilities(WireType):
    """What the agent supports."""

    load_session: bool = False
    """The agent handles ``session/load``."""
    prompt_capabilities: PromptCapabilities = attrs.Factory(PromptCapabilities)
    """Content types accepted in prompts."""
    mcp_capabilities: McpCapabilities = attrs.Factory(McpCapabilities)
    """MCP transports supported."""
    session_capabilities: SessionCapabilities = attrs.Factory(SessionCapabilities)
    """Optional session methods supported."""
    auth: AgentAuthCapabilities = attrs.Factory(AgentAuthCapabilities)
    """Authentication-related capabilities (``logout``)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class Implementation(WireType):
    """Name and version of a client or agent implementation."""

    name: str
    """Programmatic name."""
    version: str
    """Version string."""
    title: str | None = None
    """Human-readable name for display."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AuthMethodAgent(WireType):
    """An authentication method the agent handles itself when the client calls
    ``authenticate`` with its id (the schema's default variant: no ``type`` on the wire)."""

    id: str
    """The id sent back in ``authenticate``."""
    name: str
    """Human-readable name."""
    description: str | None = None
    """What the method does."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AuthMethodTerminal(WireType):
    """An authentication method the client runs itself: the agent's own command again, with
    ``args`` appended and ``env`` added, in an interactive terminal; exit status 0 means it
    worked. Offered only to clients that set ``clientCapabilities.auth.terminal``; never
    passed to ``authenticate``."""

    type: Literal["terminal"] = attrs.field(default="terminal", kw_only=True)
    """The tag, always ``"terminal"``."""
    id: str
    """Unique among the methods offered."""
    name: str
    """Human-readable name."""
    description: str | None = None
    """What the method does."""
    args: list[str] = attrs.Factory(list)
    """Arguments appended to the client's configured command line for the agent."""
    env: dict[str, str] | None = None
    """Environment variables set on top of the configured ones; ``None``: none."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


AuthMethod: TypeAlias = AuthMethodAgent | AuthMethodTerminal
"""An authentication method offered in ``initialize`` (closed: one class per variant)."""


@attrs.frozen(repr=False, eq=False)
class InitializeRequest(WireType):
    """Params of ``initialize``."""

    protocol_version: int
    """The latest protocol version the client supports."""
    client_capabilities: ClientCapabilities = attrs.Factory(ClientCapabilities)
    """What the client supports."""
    client_info: Implementation | None = None
    """The client's name and version."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class InitializeResponse(WireType):
    """Result of ``initialize``."""

    protocol_version: int
    """The protocol version chosen (:data:`PROTOCOL_VERSION`)."""
    agent_capabilities: AgentCapabilities = attrs.Factory(AgentCapabilities)
    """What the agent supports."""
    auth_methods: list[AuthMethod] = attrs.Factory(list)
    """Authentication methods offered (empty: none needed)."""
    agent_info: Implementation | None = None
    """The agent's name and version."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AuthenticateRequest(WireType):
    """Params of ``authenticate``."""

    method_id: str
    """The id of the chosen method (an :class:`AuthMethodAgent`'s)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class AuthenticateResponse(WireType):
    """Result of ``authenticate``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class LogoutRequest(WireType):
    """Params of ``logout``: end the current authenticated state."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class LogoutResponse(WireType):
    """Result of ``logout``."""

    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``): what was forgotten, said for the user."""
