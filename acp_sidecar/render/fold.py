"""Folding ``tool_call`` / ``tool_call_update`` wire JSON into a card's state, as an editor does.

A present field replaces (``content`` and ``locations`` whole); ``terminal_output`` appends. A
field of the wrong type is ignored. Output is kept as chunks (no quadratic copying).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import attrs

FINAL_STATUSES: Final = frozenset({"completed", "failed"})
"""Statuses after which a card no longer changes."""


def as_mapping(value: object) -> Mapping[str, Any] | None:
    """``value`` if it is a JSON object, else ``None``."""
    return value if isinstance(value, Mapping) else None


def as_str(value: object) -> str | None:
    """``value`` if it is a string, else ``None``."""
    return value if isinstance(value, str) else None


@attrs.define
class TerminalState:
    """One terminal as the client holds it (opened by ``_meta.terminal_info``)."""

    terminal_id: str
    cwd: str | None = None
    chunks: list[str] = attrs.Factory(list)
    exit_code: int | None = None
    signal: str | None = None

    @property
    def output(self) -> str:
        """Everything the terminal printed so far."""
        if len(self.chunks) > 1:
            self.chunks[:] = ["".join(self.chunks)]
        return self.chunks[0] if self.chunks else ""

    @property
    def exited(self) -> bool:
        """Whether an exit code or signal arrived."""
        return self.exit_code is not None or self.signal is not None


@attrs.define
class CardState:
    """One tool-call card, folded from its ``tool_call`` and ``tool_call_update``s."""

    tool_call_id: str
    title: str = ""
    kind: str | None = None
    status: str = "pending"
    content: list[Mapping[str, Any]] = attrs.Factory(list)
    locations: list[Mapping[str, Any]] = attrs.Factory(list)
    raw_input: Any = None
    raw_output: Any = None
    terminals: dict[str, TerminalState] = attrs.Factory(dict)
    """The terminals opened on this card, by terminal id."""
    emptied: bool = False
    """The last update that set ``content`` set it empty: the card has nothing to expand."""
    shows_plan: bool = False
    """A ``plan`` update came right after the card was completed with no content: the card
    stands for that plan, which is drawn beside it (set by the block fold)."""

    @property
    def finished(self) -> bool:
        """Whether the card reached ``completed`` or ``failed``."""
        return self.status in FINAL_STATUSES

    def terminal(self, terminal_id: str) -> TerminalState:
        """The card's terminal ``terminal_id`` (opened on first mention)."""
        state = self.terminals.get(terminal_id)
        if state is None:
            state = self.terminals[terminal_id] = TerminalState(terminal_id)
        return state


def _objects(value: object) -> list[Mapping[str, Any]] | None:
    if not isinstance(value, list):
        return None
    return [item for item in value if isinstance(item, Mapping)]


def apply_tool_update(card: CardState, update: Mapping[str, Any]) -> CardState:
    """Fold one ``tool_call`` or ``tool_call_update`` (its ``update`` object) into ``card``.

    Mutates and returns ``card``.
    """
    if (title := as_str(update.get("title"))) is not None:
        card.title = title
    if (kind := as_str(update.get("kind"))) is not None:
        card.kind = kind
    if (status := as_str(update.get("status"))) is not None:
        card.status = status
    if (content := _objects(update.get("content"))) is not None:
        card.content = content
        card.emptied = not content
    if (locations := _objects(update.get("locations"))) is not None:
        card.locations = locations
    if update.get("rawInput") is not None:
        card.raw_input = update["rawInput"]
    if update.get("rawOutput") is not None:
        card.raw_output = update["rawOutput"]
    meta = as_mapping(update.get("_meta"))
    if meta is not None:
        _apply_terminal_meta(card, meta)
    return card


def _terminal_entry(
    card: CardState, meta: Mapping[str, Any], key: str
) -> tuple[TerminalState, Mapping[str, Any]] | None:
    entry = as_mapping(meta.get(key))
    terminal_id = None if entry is None else as_str(entry.get("terminal_id"))
    if entry is None or terminal_id is None:
        return None
    return card.terminal(terminal_id), entry


def _apply_terminal_meta(card: CardState, meta: Mapping[str, Any]) -> None:
    if found := _terminal_entry(card, meta, "terminal_info"):
        terminal, info = found
        if (cwd := as_str(info.get("cwd"))) is not None:
            terminal.cwd = cwd
    if found := _terminal_entry(card, meta, "terminal_output"):
        terminal, output = found
        if data := as_str(output.get("data")):
            terminal.chunks.append(data)
    if found := _terminal_entry(card, meta, "terminal_exit"):
        terminal, exit_ = found
        code = exit_.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool):
            terminal.exit_code = code
        if (signal := as_str(exit_.get("signal"))) is not None:
            terminal.signal = signal
