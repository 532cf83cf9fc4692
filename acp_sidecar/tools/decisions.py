"""The typed decisions of the interception waterfalls (closed unions). A pre-execute listener
cannot rewrite the input: what was audited and shown must be what runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias

import attrs

from acp_sidecar.tools.content import ContentBlock, TextContent
from acp_sidecar.tools.json_values import JsonValue

if TYPE_CHECKING:
    from acp_sidecar.tools.presentation import ToolCallView


def _blocks(value: str | Sequence[ContentBlock]) -> tuple[ContentBlock, ...]:
    if isinstance(value, str):
        return (TextContent(value),)
    return tuple(value)


def _optional_blocks(
    value: str | Sequence[ContentBlock] | None,
) -> tuple[ContentBlock, ...] | None:
    return None if value is None else _blocks(value)


@attrs.frozen
class Allow:
    """Let the call proceed (the default when every listener delegates)."""

    kind: Literal["allow"] = "allow"


@attrs.frozen
class Deny:
    """Skip dispatch; the call ends as an error result carrying ``reason``."""

    reason: str
    kind: Literal["deny"] = "deny"


@attrs.frozen
class Ask:
    """Ask the user (through the execution context's ``permissions``); without one, deny."""

    reason: str | None = None
    kind: Literal["ask"] = "ask"
    preview: ToolCallView | None = None
    """The card to ask with: what the call would change now. The registry sets it from the
    tool's ``preview_call`` before the session's ``permissions`` see the ``Ask``; ``None`` keeps
    the pending card."""


@attrs.frozen
class Accept:
    """Keep the result; ``content`` (when given) replaces the model-facing content."""

    content: tuple[ContentBlock, ...] | None = attrs.field(default=None, converter=_optional_blocks)
    additional_context: JsonValue = None
    kind: Literal["accept"] = "accept"


@attrs.frozen
class Block:
    """Turn the call into an error whose content is the corrective ``feedback``."""

    feedback: tuple[ContentBlock, ...] = attrs.field(converter=_blocks)
    additional_context: JsonValue = None
    kind: Literal["block"] = "block"


PreToolDecision: TypeAlias = Allow | Deny | Ask
"""What a ``tools/pre-execute`` listener returns."""

PermissionDecision: TypeAlias = Allow | Deny
"""What the session's ``permissions`` answer to an :class:`Ask`."""

PostToolDecision: TypeAlias = Accept | Block
"""What a ``tools/post-execute`` listener returns."""
