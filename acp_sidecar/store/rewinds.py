"""A session's turns as undo sees them, read from its records: what each changed, and which
are undone now. Pure: the same records always give the same :class:`Rewinds`.

A turn runs from a prompt to its turn's end; session commands' turns are not numbered (turns
count from 1 among the others). An undo's own file changes are those written in its command's
turn before its :class:`UndoRecord`; a redo gives back what the last undo not yet redone took.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import attrs

from acp_sidecar.store.records import (
    FileChangeRecord,
    Record,
    ToolCallRecord,
    TurnEndRecord,
    UndoRecord,
    UserMessageRecord,
)


@attrs.frozen
class LoggedTurn:
    """One numbered turn."""

    number: int
    at: datetime | None
    """When its prompt was written."""
    prompt: str
    """The text of its prompt (its text blocks joined)."""
    changes: tuple[FileChangeRecord, ...]
    """What its declared calls did to files, in order."""
    tools: tuple[str, ...]
    """The names of the tools it called, in order, each once."""


@attrs.frozen
class UndoAction:
    """One ``/undo`` (or the turns ``/rewind`` took back) and what it did to files."""

    turns: tuple[int, ...]
    changes: tuple[FileChangeRecord, ...]
    """The reverts, as the records the command wrote."""


@attrs.frozen
class Rewinds:
    """Every numbered turn, the undos that still stand (oldest first), and each file's last
    recorded hash (what it must still be for an undo to touch it)."""

    turns: tuple[LoggedTurn, ...]
    standing: tuple[UndoAction, ...]
    last_hash: dict[str, str | None]

    @property
    def undone(self) -> frozenset[int]:
        """The turns taken back by the standing undos."""
        return frozenset(number for action in self.standing for number in action.turns)

    def active(self) -> tuple[LoggedTurn, ...]:
        """The turns not undone, oldest first."""
        undone = self.undone
        return tuple(turn for turn in self.turns if turn.number not in undone)


def _text(record: UserMessageRecord) -> str:
    texts = (block.get("text") for block in record.content if block.get("type") == "text")
    return " ".join(text for text in texts if isinstance(text, str))


def read_rewinds(records: Iterable[Record]) -> Rewinds:
    """The :class:`Rewinds` of a session's records (its header may be among them)."""
    turns: list[LoggedTurn] = []
    standing: list[UndoAction] = []
    last_hash: dict[str, str | None] = {}
    opened: UserMessageRecord | None = None
    in_command = False
    changes: list[FileChangeRecord] = []
    tools: list[str] = []

    def close() -> None:
        nonlocal opened
        if opened is not None and not in_command:
            turns.append(
                LoggedTurn(len(turns) + 1, opened.at, _text(opened), tuple(changes), tuple(tools))
            )
        opened = None
        changes.clear()
        tools.clear()

    for record in records:
        match record:
            case UserMessageRecord() if opened is None:
                opened, in_command = record, record.command is not None
            case TurnEndRecord():
                close()
            case FileChangeRecord():
                last_hash[record.path] = record.after
                changes.append(record)
            case ToolCallRecord(name=name) if name not in tools:
                tools.append(name)
            case UndoRecord(redo=False, turns=numbers):
                standing.append(UndoAction(numbers, tuple(changes)))
                changes.clear()
            case UndoRecord(redo=True):
                if standing:
                    standing.pop()
                changes.clear()
            case _:
                pass
    close()
    return Rewinds(tuple(turns), tuple(standing), last_hash)
