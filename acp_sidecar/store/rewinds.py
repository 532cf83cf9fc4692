"""A session's turns as undo sees them, read from its records: what each changed, and which
are undone now. Pure: the same records always give the same :class:`Rewinds`.

A turn runs from a prompt to its turn's end; session commands' turns are not numbered (turns
count from 1 among the others). An undo's own file changes are those written in its command's
turn before its :class:`UndoRecord`; a redo gives back what the last undo not yet redone took.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime

import attrs

from acp_sidecar.store.records import (
    CompactionRecord,
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


def numbered(records: Iterable[Record]) -> Iterator[tuple[Record, int | None]]:
    """Each record with the number of the turn it is part of (``None``: a session command's
    turn, or outside any turn)."""
    count = 0
    current: int | None = None
    opened = False
    for record in records:
        if isinstance(record, UserMessageRecord) and not opened:
            opened = True
            if record.command is None:
                count += 1
                current = count
        yield record, current
        if isinstance(record, TurnEndRecord):
            opened, current = False, None


def read_rewinds(records: Iterable[Record]) -> Rewinds:
    """The :class:`Rewinds` of a session's records (its header may be among them)."""
    turns: list[LoggedTurn] = []
    standing: list[UndoAction] = []
    last_hash: dict[str, str | None] = {}
    opened: tuple[int, UserMessageRecord] | None = None
    changes: list[FileChangeRecord] = []
    tools: list[str] = []

    def close() -> None:
        nonlocal opened
        if opened is not None:
            number, prompt = opened
            turns.append(LoggedTurn(number, prompt.at, _text(prompt), tuple(changes), tuple(tools)))
        opened = None
        changes.clear()
        tools.clear()

    for record, number in numbered(records):
        if number is not None and (opened is None or opened[0] != number):
            close()
            assert isinstance(record, UserMessageRecord)
            opened = (number, record)
        match record:
            case TurnEndRecord():
                close()
                changes.clear()
            case FileChangeRecord():
                last_hash[record.path] = record.after
                changes.append(record)
            case ToolCallRecord(name=name) if name not in tools:
                tools.append(name)
            case UndoRecord(redo=False, turns=taken):
                standing.append(UndoAction(taken, tuple(changes)))
                changes.clear()
            case UndoRecord(redo=True):
                if standing:
                    standing.pop()
                changes.clear()
            case _:
                pass
    close()
    return Rewinds(tuple(turns), tuple(standing), last_hash)


@attrs.frozen
class HistoryRewinds:
    """What undos change in the history a model is sent (see :func:`history_rewinds`)."""

    hidden: frozenset[int]
    """The turns left out of it."""
    notes: dict[int, str]
    """Where (a record's index) the model is told of an undo it cannot be shown by leaving
    turns out, and what."""


def history_rewinds(records: Sequence[Record]) -> HistoryRewinds:
    """Which turns a model's history leaves out, and where it is told of undos instead.

    An undone turn leaves the history, unless a compaction was written after it started: a
    summary's count of turns was taken with the turn in, so from that compaction on the
    turn stays as it was then (kept, or summarised), and an undo or redo of it afterwards is
    told to the model where it happened. Each decision rests on the records before it, so
    the history of a log only ever grows at its end.
    """
    undone: dict[int, bool] = {}
    frozen: dict[int, bool] = {}
    prompts: dict[int, str] = {}
    stack: list[tuple[int, ...]] = []
    notes: dict[int, str] = {}
    for index, (record, number) in enumerate(numbered(records)):
        if number is not None and number not in undone:
            undone[number] = False
            if isinstance(record, UserMessageRecord):
                prompts[number] = _text(record)
        match record:
            case CompactionRecord():
                for turn, state in undone.items():
                    frozen.setdefault(turn, state)
            case UndoRecord(redo=redo, turns=taken):
                if redo:
                    if not stack:
                        continue
                    taken = stack.pop()
                else:
                    stack.append(taken)
                for turn in taken:
                    undone[turn] = not redo
                told = [turn for turn in taken if turn in frozen]
                if told:
                    notes[index] = _note(told, prompts, redo)
            case _:
                pass
    hidden = frozenset(turn for turn, state in undone.items() if frozen.get(turn, state))
    return HistoryRewinds(hidden, notes)


def _note(turns: Sequence[int], prompts: dict[int, str], redo: bool) -> str:
    asked = "; ".join(f'"{" ".join(prompts.get(turn, "").split())[:200]}"' for turn in turns)
    if redo:
        return (
            f"[The user redid earlier turns with /redo (the prompts: {asked}): the file "
            "changes made in them are back in the workspace.]"
        )
    return (
        f"[The user undid earlier turns with /undo (the prompts: {asked}): the file changes "
        "made in them were reverted, so treat what they did as not done, even where a "
        "summary of the conversation mentions it.]"
    )
