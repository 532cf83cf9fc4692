"""The ACP v2 types only ``schema.unstable.json`` defines, which a v2 connection serves behind
the same flag as v2 itself: Markdown plans and their removal, a turn's token usage, the child
sessions of ``task`` (subagents) and ``session/fork``.

Where v2's shape is v1's (``plan_removed``, ``subagent_update`` with a child's state snapshot,
``session_message``, ``session_message_chunk``, the usage object) the v1 class is reused, so
the core's value is the wire value; a v2 shape that differs has its own class here.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.subagents import SessionMessage, SessionMessageChunk, SubagentUpdate
from acp_sidecar.protocol.subagents import TokenUsage as Usage
from acp_sidecar.protocol.updates import PlanRemoved
from acp_sidecar.protocol.v2.options import Command, ConfigOption

__all__ = [
    "ForkSessionRequest",
    "ForkSessionResponse",
    "MarkdownPlanUpdate",
    "PlanMarkdown",
    "PlanRemoved",
    "SessionMessage",
    "SessionMessageChunk",
    "SubagentUpdate",
    "Usage",
]


@attrs.frozen(repr=False, eq=False)
class PlanMarkdown(WireType):
    """A Markdown plan: the whole document, replacing the plan with that id (v2 has no
    ``path``: v1's file location is not sent)."""

    type: Literal["markdown"] = attrs.field(default="markdown", kw_only=True)
    """The tag."""
    plan_id: str
    """The plan this replaces (session-scoped)."""
    content: str
    """The complete document."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class MarkdownPlanUpdate(WireType):
    """Session update ``plan_update`` carrying a Markdown plan."""

    session_update: Literal["plan_update"] = attrs.field(default="plan_update", kw_only=True)
    """The tag."""
    plan: PlanMarkdown
    """The plan's whole new content."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ForkSessionRequest(WireType):
    """Params of v2 ``session/fork``: a new session from a stored one's history."""

    session_id: str
    """The session to fork (left untouched)."""
    cwd: str
    """The fork's absolute working directory."""
    additional_directories: list[str] = attrs.Factory(list)
    """The fork's whole list of extra roots (empty: none)."""
    mcp_servers: list[dict[str, Any]] = attrs.Factory(list)
    """MCP servers to connect for the fork, each as sent."""
    system_prompt: dict[str, Any] | None = None
    """Only with ``session.systemPrompt``, which is not advertised: a fork naming one is
    refused."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""


@attrs.frozen(repr=False, eq=False)
class ForkSessionResponse(WireType):
    """Result of v2 ``session/fork``."""

    session_id: str
    """The fork's id."""
    config_options: list[ConfigOption] = attrs.Factory(list)
    """The fork's config options."""
    available_commands: list[Command] = attrs.Factory(list)
    """The commands the fork offers from the start (they follow in an update, as after
    ``session/new``)."""
    meta: dict[str, Any] | None = None
    """Extension metadata (``_meta``), passed through verbatim."""
