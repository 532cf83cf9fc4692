"""A transcript of ``session/update`` notifications, drawn to a ``rich`` console.

Invariants:
- The input is the wire JSON a client receives — ``session/update`` params
  (``{"sessionId", "update": {"sessionUpdate": …}}``) or bare ``update`` objects — and nothing
  in it can make the renderer raise: malformed updates are skipped (logged at debug level),
  and a part that cannot be drawn becomes a one-line note.
- Blocks appear in the order their first update arrived, as in the editor: a card sits where
  its ``tool_call`` came, drawn in its final state. Incrementally, a block is printed once it
  can no longer change — a message when another block follows it, a card when it is
  ``completed`` or ``failed`` — and everything after an unfinished card waits for it, so
  memory holds only the blocks since the oldest running card. :meth:`TranscriptRenderer.finish`
  prints the rest as it stands.
- Consecutive chunks of one role and one ``messageId`` (or none) form one message.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, Literal, TypeAlias, assert_never

import attrs
from rich.console import Console, RenderableType

from acp_sidecar.render.draw import (
    draw_agent_message,
    draw_card,
    draw_commands,
    draw_mode,
    draw_plan,
    draw_thought,
    draw_user_message,
    note,
)
from acp_sidecar.render.fold import CardState, apply_tool_update, as_mapping, as_str

logger = logging.getLogger(__name__)

Role: TypeAlias = Literal["user", "agent", "thought"]

_CHUNK_ROLES: dict[str, Role] = {
    "user_message_chunk": "user",
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
}


@attrs.define
class MessageBlock:
    """Consecutive message chunks of one role."""

    role: Role
    message_id: str | None
    blocks: list[Mapping[str, Any]] = attrs.Factory(list)


@attrs.define
class CardBlock:
    """A tool-call card being folded."""

    card: CardState


@attrs.define
class PlanBlock:
    """The agent's plan (consecutive plan updates replace it)."""

    entries: list[Mapping[str, Any]]


@attrs.frozen
class NoteBlock:
    """Something already drawn (a mode switch, the command list, a stop reason)."""

    renderable: RenderableType


Block: TypeAlias = MessageBlock | CardBlock | PlanBlock | NoteBlock
"""The closed union of transcript blocks."""


def update_of(params: object) -> Mapping[str, Any] | None:
    """The ``update`` object of ``session/update`` params, or a bare update; else ``None``."""
    mapping = as_mapping(params)
    if mapping is None:
        return None
    inner = as_mapping(mapping.get("update"))
    if inner is not None:
        return inner
    return mapping if "sessionUpdate" in mapping else None


class TranscriptRenderer:
    """Draws updates to ``console`` as they arrive (see the module invariants).

    ``cwd`` (the session's working directory) makes diff paths relative, as titles are.
    """

    def __init__(self, console: Console, *, cwd: str | None = None) -> None:
        self.console = console
        self.cwd = cwd
        self._queue: deque[Block] = deque()
        self._open_cards: dict[str, CardBlock] = {}
        self._printed_cards: set[str] = set()
        self._printed_any = False

    def feed(self, params: Mapping[str, Any]) -> None:
        """Take one ``session/update`` notification's params (or a bare update)."""
        update = update_of(params)
        tag = None if update is None else as_str(update.get("sessionUpdate"))
        if update is None or tag is None:
            logger.debug("transcript: skipped a malformed update %r", params)
            return
        if (role := _CHUNK_ROLES.get(tag)) is not None:
            content = as_mapping(update.get("content"))
            if content is not None:
                self._chunk(role, as_str(update.get("messageId")), content)
        elif tag in ("tool_call", "tool_call_update"):
            self._tool(tag, update)
        elif tag == "plan":
            entries = update.get("entries")
            items = (
                [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []
            )
            tail = self._queue[-1] if self._queue else None
            if isinstance(tail, PlanBlock):
                tail.entries = items
            else:
                self._queue.append(PlanBlock(items))
        elif tag == "available_commands_update":
            commands = update.get("availableCommands")
            listed = commands if isinstance(commands, list) else []
            self._queue.append(
                NoteBlock(draw_commands(c for c in listed if isinstance(c, Mapping)))
            )
        elif tag == "current_mode_update":
            mode = as_str(update.get("currentModeId"))
            if mode is not None:
                self._queue.append(NoteBlock(draw_mode(mode)))
        else:
            logger.debug("transcript: skipped an update it does not draw: %s", tag)
        self._print_ready()

    def user_prompt(self, content: Iterable[Mapping[str, Any]]) -> None:
        """Show a prompt the client itself sent (live, the agent does not echo it)."""
        self._queue.append(
            MessageBlock("user", None, [b for b in content if isinstance(b, Mapping)])
        )
        self._print_ready()

    def end_turn(self, stop_reason: str | None = None) -> None:
        """A prompt turn ended: print everything, and the stop reason unless ``end_turn``."""
        if stop_reason is not None and stop_reason != "end_turn":
            self._queue.append(NoteBlock(note(f"(turn ended: {stop_reason})")))
        self.finish()

    def finish(self) -> None:
        """Print every block still held, unfinished cards as they stand."""
        while self._queue:
            self._print(self._queue.popleft())

    # -- internals -----------------------------------------------------------------------

    def _chunk(self, role: Role, message_id: str | None, content: Mapping[str, Any]) -> None:
        tail = self._queue[-1] if self._queue else None
        if isinstance(tail, MessageBlock) and tail.role == role and tail.message_id == message_id:
            tail.blocks.append(content)
        else:
            self._queue.append(MessageBlock(role, message_id, [content]))

    def _tool(self, tag: str, update: Mapping[str, Any]) -> None:
        call_id = as_str(update.get("toolCallId"))
        if call_id is None:
            logger.debug("transcript: skipped a %s without a toolCallId", tag)
            return
        block = self._open_cards.get(call_id)
        if block is None:
            if tag == "tool_call_update" and call_id in self._printed_cards:
                logger.debug("transcript: card %s changed after it was printed", call_id)
                return
            block = self._open_cards[call_id] = CardBlock(CardState(call_id))
            self._queue.append(block)
        apply_tool_update(block.card, update)

    def _ready(self, block: Block, is_tail: bool) -> bool:
        match block:
            case MessageBlock() | PlanBlock():
                return not is_tail
            case CardBlock():
                return block.card.finished
            case NoteBlock():
                return True
            case _:
                assert_never(block)

    def _print_ready(self) -> None:
        while self._queue and self._ready(self._queue[0], len(self._queue) == 1):
            self._print(self._queue.popleft())

    def _draw(self, block: Block) -> RenderableType:
        match block:
            case MessageBlock(role="user"):
                return draw_user_message(block.blocks)
            case MessageBlock(role="agent"):
                return draw_agent_message(block.blocks)
            case MessageBlock():
                return draw_thought(block.blocks)
            case CardBlock():
                call_id = block.card.tool_call_id
                self._open_cards.pop(call_id, None)
                self._printed_cards.add(call_id)
                return draw_card(block.card, self.cwd)
            case PlanBlock():
                return draw_plan(block.entries)
            case NoteBlock():
                return block.renderable
            case _:
                assert_never(block)

    def _print(self, block: Block) -> None:
        if self._printed_any:
            self.console.print()
        self._printed_any = True
        try:
            self.console.print(self._draw(block))
        except Exception:
            logger.exception("transcript: could not draw %s", type(block).__name__)
            self.console.print(note(f"[could not draw this {type(block).__name__}]"))


def render_transcript(
    updates: Iterable[Mapping[str, Any]], console: Console, *, cwd: str | None = None
) -> None:
    """Draw a whole stream of ``session/update`` params to ``console``."""
    renderer = TranscriptRenderer(console, cwd=cwd)
    for params in updates:
        renderer.feed(params)
    renderer.finish()
