"""Which turns a model's history leaves out after undos, and where it is told instead: an
undone turn leaves it, unless a compaction was written after it started (the summary's count
of turns holds it), and then the model is told of the undo where it happened."""

from __future__ import annotations

from acp_sidecar.store import History
from acp_sidecar.store.records import (
    AgentMessageRecord,
    CompactionRecord,
    Record,
    TurnEndRecord,
    UndoRecord,
    UserMessageRecord,
)
from acp_sidecar.store.rewinds import history_rewinds, read_rewinds
from acp_sidecar.tools.json_values import FrozenDict


def prompt(text: str, command: str | None = None) -> UserMessageRecord:
    return UserMessageRecord(content=(FrozenDict({"type": "text", "text": text}),), command=command)


def turn(text: str, reply: str) -> list[Record]:
    return [prompt(text), AgentMessageRecord(text=reply), TurnEndRecord(stop_reason="end_turn")]


def command_turn(text: str, *records: Record) -> list[Record]:
    return [prompt(text, command="undo"), *records, TurnEndRecord(stop_reason="end_turn")]


def texts(records: list[Record]) -> list[str]:
    shown = []
    for item in History(records):
        if isinstance(item, UserMessageRecord):
            shown.append(str(item.content[0]["text"]))
        elif isinstance(item, AgentMessageRecord):
            shown.append(item.text)
    return shown


def test_an_undone_turn_leaves_the_history_and_a_redo_brings_it_back() -> None:
    records = [*turn("one", "1"), *turn("two", "2"), *command_turn("/undo", UndoRecord(turns=(2,)))]
    assert texts(records) == ["one", "1"]
    assert read_rewinds(records).undone == {2}
    records += command_turn("/redo", UndoRecord(turns=(2,), redo=True))
    assert texts(records) == ["one", "1", "two", "2"]
    assert read_rewinds(records).undone == frozenset()


def test_a_summarised_turn_stays_and_the_model_is_told_it_was_undone() -> None:
    records = [
        *turn("one", "1"),
        *turn("two", "2"),
        CompactionRecord(summary="one and two", turns=2),
        *turn("three", "3"),
        *command_turn("/undo 2", UndoRecord(turns=(2, 3))),
    ]
    rewinds = history_rewinds(records)
    assert rewinds.hidden == {3}  # turn 2 is in the summary's count; turn 3 is not
    shown = texts(records)
    assert shown[:4] == ["one", "1", "two", "2"]
    assert "three" not in shown
    assert shown[-1].startswith('[The user undid earlier turns with /undo (the prompts: "two"')
    assert records[-1] is not None and len(shown) == 5


def test_a_compaction_after_the_undo_counts_without_the_undone_turn() -> None:
    records = [
        *turn("one", "1"),
        *turn("two", "2"),
        *command_turn("/undo", UndoRecord(turns=(2,))),
        CompactionRecord(summary="one", turns=1),
        *command_turn("/redo", UndoRecord(turns=(2,), redo=True)),
    ]
    rewinds = history_rewinds(records)
    assert rewinds.hidden == {2}  # the summary was made without it: it stays out
    assert texts(records)[-1].startswith("[The user redid earlier turns with /redo")
