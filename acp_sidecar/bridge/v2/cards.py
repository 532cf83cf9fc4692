"""The v2 form of the core's tool cards: each v1 ``tool_call`` / ``tool_call_update`` the
card presenters draw (:mod:`acp_sidecar.bridge.cards`, from the tools' views) becomes one v2
``tool_call_update`` that creates or patches the card, diffs in v2's form, and a terminal card
becomes a v2 terminal: announced by ``terminal_update`` before the card names it, its output as
``terminal_output_chunk``, its exit status in a last ``terminal_update``.

Invariant: pure (a function of the v1 update alone), so live and replayed cards agree; the v1
card's fields go through as they are (omitted stays omitted: unchanged) but for a task card's
link to its child (v2 links it by ``subagent_update``: :mod:`.subagents`), and the terminal keys
of its ``_meta`` (:mod:`acp_sidecar.bridge.cards`'s ``terminal_*``) become v2's terminal updates
and are never sent as ``_meta``.
"""

from __future__ import annotations

import base64
from typing import Any, assert_never

from acp_sidecar.bridge.v2.diffs import diff_of
from acp_sidecar.bridge.v2.subagents import unlinked
from acp_sidecar.protocol._base import UNSET, Unset
from acp_sidecar.protocol.encoding import to_wire
from acp_sidecar.protocol.tool_call import (
    ToolCallContent,
    ToolCallContentBlock,
    ToolCallDiff,
    ToolCallProgress,
    ToolCallSession,
    ToolCallStart,
    ToolCallTerminal,
)
from acp_sidecar.protocol.v2 import tool_call as v2

TERMINAL_KEYS = frozenset({"terminal_info", "terminal_output", "terminal_exit"})
"""The ``_meta`` keys v1 carries a terminal in (``_meta.terminal_output`` clients)."""

Wire = tuple[dict[str, Any], ...]


class NoV2Form(TypeError):
    """Card content v2 has no form for (a ``session`` link, which a card update sheds first:
    :func:`~acp_sidecar.bridge.v2.subagents.unlinked`)."""


def _card(
    update: ToolCallStart | ToolCallProgress,
    meta: dict[str, Any],
    status: v2.V2ToolCallStatus | None,
    capabilities: v2.ToolCallCapabilities | None | Unset = UNSET,
) -> v2.ToolCallUpdate:
    """The card's own fields in v2 form (its terminal's keys left out of ``_meta``)."""
    return v2.ToolCallUpdate(
        tool_call_id=update.tool_call_id,
        name=update.name,
        title=update.title,
        kind=update.kind,
        status=status,
        capabilities=capabilities,
        content=card_content(unlinked(update.content)),  # v2 links a child otherwise
        locations=update.locations,
        raw_input=update.raw_input,
        raw_output=update.raw_output,
        meta=rest_of(meta),
    )


def card_opened(update: ToolCallStart) -> Wire:
    """A new card: its terminal first (if it has one), then the card."""
    meta = update.meta or {}
    info = meta.get("terminal_info")
    opened = _card(update, meta, update.status)
    if info is None:
        return (to_wire(opened),)
    terminal = v2.TerminalUpdate(terminal_id=info["terminal_id"], cwd=info.get("cwd"))
    return (to_wire(terminal), to_wire(opened))


def card_patched(
    update: ToolCallProgress,
    *,
    status: v2.V2ToolCallStatus | None = None,
    capabilities: v2.ToolCallCapabilities | None | Unset = UNSET,
) -> Wire:
    """A card patched: new terminal output, then the terminal's end, then the card's fields
    that changed (none: only its terminal moved, and no ``tool_call_update`` is sent).
    ``status`` and ``capabilities``: v2's own, in place of the v1 status and beside it."""
    meta = update.meta or {}
    sent: list[dict[str, Any]] = []
    output = meta.get("terminal_output")
    if output is not None and output["data"]:
        data = base64.b64encode(output["data"].encode("utf-8")).decode("ascii")
        chunk = v2.TerminalOutputChunk(terminal_id=output["terminal_id"], data=data)
        sent.append(to_wire(chunk))
    ended = meta.get("terminal_exit")
    if ended is not None:
        how = v2.TerminalExitStatus(exit_code=ended.get("exit_code"), signal=ended.get("signal"))
        sent.append(to_wire(v2.TerminalUpdate(terminal_id=ended["terminal_id"], exit_status=how)))
    elif update.status in ("completed", "failed"):
        sent.extend(_ended_unseen(update.content))
    patch = _card(update, meta, status or update.status, capabilities)
    wire = to_wire(patch)
    if len(wire) > 2 or not sent:  # more than its tag and id: a field changed
        sent.append(wire)
    return tuple(sent)


def _ended_unseen(content: list[ToolCallContent] | None) -> Wire:
    """A call ended with no result of its own (refused, or failed before or as it ran) keeps
    its terminal under the message: v2 marks it exited, how unknown, so no client shows it
    running on."""
    exited = v2.TerminalExitStatus()
    return tuple(
        to_wire(v2.TerminalUpdate(terminal_id=item.terminal_id, exit_status=exited))
        for item in content or ()
        if isinstance(item, ToolCallTerminal)
    )


def rest_of(meta: dict[str, Any]) -> dict[str, Any] | None:
    """``meta`` without the terminal keys (``None``: nothing is left)."""
    rest = {key: value for key, value in meta.items() if key not in TERMINAL_KEYS}
    return rest or None


def card_content(content: list[ToolCallContent] | None) -> list[v2.ToolCallContent] | None:
    """A card's content in v2's form (``None`` stays omitted)."""
    if content is None:
        return None
    return [_item(item) for item in content]


def _item(item: ToolCallContent) -> v2.ToolCallContent:
    match item:
        case ToolCallContentBlock() | ToolCallTerminal():
            return item  # the same shape in v2
        case ToolCallDiff():
            return diff_of(item)
        case ToolCallSession():
            raise NoV2Form("session content has no v2 form")
        case _:
            assert_never(item)
