"""A transcript of ``session/update`` notifications, drawn to a ``rich`` console as each block
becomes final (:class:`~.blocks.BlockFold`); nothing fed in makes it raise.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, assert_never

from rich.console import Console, RenderableType

from acp_sidecar.render.blocks import (
    Block,
    BlockFold,
    CardBlock,
    CommandsBlock,
    CompactionBlock,
    Event,
    EventBlock,
    MessageBlock,
    ModeBlock,
    ModeSwitched,
    NoticeBlock,
    OptionChanged,
    PermissionDecided,
    PlanBlock,
    TurnEnded,
)
from acp_sidecar.render.controls import visible_json, visible_update
from acp_sidecar.render.draw import (
    draw_agent_message,
    draw_card,
    draw_commands,
    draw_compaction,
    draw_markdown_plan,
    draw_mode,
    draw_notice,
    draw_plan,
    draw_thought,
    draw_user_message,
    note,
)
from acp_sidecar.text import harmless

logger = logging.getLogger(__name__)


class TranscriptRenderer:
    """Draws updates to ``console`` as they arrive (see the module invariants).

    ``cwd`` (the session's working directory) makes diff paths relative, as titles are.
    """

    def __init__(
        self,
        console: Console,
        *,
        cwd: str | None = None,
        on_block: Callable[[Block], None] | None = None,
    ) -> None:
        self.console = console
        self.cwd = cwd
        self.on_block = on_block
        """Hears each block once it is printed (a tally of them, for a heading)."""
        self._fold = BlockFold()
        self._printed_any = False

    def feed(self, params: Mapping[str, Any], at: datetime | None = None) -> None:
        """Take one ``session/update`` notification's params (or a bare update)."""
        self._print_all(self._fold.feed(visible_update(params), at))

    def event(self, event: Event, at: datetime | None = None) -> None:
        """Take an :data:`~acp_sidecar.render.blocks.Event` (what the stream does not carry)."""
        self._print_all(self._fold.event(visible_event(event), at))

    def user_prompt(self, content: Iterable[Mapping[str, Any]]) -> None:
        """Show a prompt the client itself sent (live, the agent does not echo it)."""
        self._print_all(self._fold.user_prompt(visible_json(list(content))))

    def end_turn(self, stop_reason: str | None = None) -> None:
        """A prompt turn ended: print everything, and the stop reason unless ``end_turn``."""
        if stop_reason is not None:
            self._print_all(self._fold.stop(stop_reason))
        self.finish()

    def finish(self) -> None:
        """Print every block still held, unfinished cards as they stand."""
        self._print_all(self._fold.finish())

    # -- internals -----------------------------------------------------------------------

    def _draw(self, block: Block) -> RenderableType:
        match block:
            case MessageBlock(role="user"):
                return draw_user_message(block.blocks)
            case MessageBlock(role="agent"):
                return draw_agent_message(block.blocks)
            case MessageBlock():
                return draw_thought(block.blocks)
            case CardBlock():
                return draw_card(block.card, self.cwd)
            case PlanBlock(markdown=str(document)):
                return draw_markdown_plan(document, block.path)
            case PlanBlock():
                return draw_plan(block.entries)
            case ModeBlock():
                return draw_mode(block.mode_id)
            case CommandsBlock():
                return draw_commands(block.names)
            case EventBlock():
                return _draw_event(block.event)
            case NoticeBlock():
                return draw_notice(block.severity, block.title, block.detail)
            case CompactionBlock():
                return draw_compaction(block.status, block.summary_text, block.error)
            case _:
                assert_never(block)

    def _print_all(self, blocks: list[Block]) -> None:
        for block in blocks:
            self._print(block)
            if self.on_block is not None:
                self.on_block(block)

    def _print(self, block: Block) -> None:
        if self._printed_any:
            self.console.print()
        self._printed_any = True
        try:
            self.console.print(self._draw(block))
        except Exception:
            logger.exception("transcript: could not draw %s", type(block).__name__)
            self.console.print(note(f"[could not draw this {type(block).__name__}]"))


def visible_event(event: Event) -> Event:
    """``event`` with its strings' control characters shown (see the module invariants)."""
    match event:
        case ModeSwitched(mode_id=mode):
            return ModeSwitched(harmless(mode))
        case OptionChanged(config_id=config_id, value=value):
            return OptionChanged(harmless(config_id), harmless(value))
        case PermissionDecided(call_id=call_id, tool=tool, answer=answer):
            rule = None if event.rule is None else harmless(event.rule)
            return PermissionDecided(
                harmless(call_id), harmless(tool), harmless(answer), event.remembered, rule
            )
        case TurnEnded(reason=reason):
            return TurnEnded(harmless(reason))
        case _:
            assert_never(event)


def _draw_event(event: Event) -> RenderableType:
    match event:
        case ModeSwitched():
            return note(f"Mode switched to {event.mode_id}")
        case OptionChanged(config_id="model"):
            return note(f"Model switched to {event.value}")
        case OptionChanged():
            return note(f"{event.config_id} set to {event.value}")
        case PermissionDecided():
            if event.rule is not None:
                return note(f"permission for {event.tool} ({event.answer}): {event.rule}")
            how = "remembered" if event.remembered else "answered"
            return note(f"permission for {event.tool} ({how}): {event.answer}")
        case TurnEnded():
            return note(f"(turn ended: {event.reason})")
        case _:
            assert_never(event)


def render_transcript(
    updates: Iterable[Mapping[str, Any]], console: Console, *, cwd: str | None = None
) -> None:
    """Draw a whole stream of ``session/update`` params to ``console``."""
    renderer = TranscriptRenderer(console, cwd=cwd)
    for params in updates:
        renderer.feed(params)
    renderer.finish()
