"""A session's history as a model sees it: prompts, replies, tool calls and their results.

Log order, without the sidecar's notices, gaps and permission decisions, and without the turns
of session commands (from a prompt that ran one to its turn's end: the model never sees them);
thoughts (a provider may require them back), usage and compaction records are kept. Every tool
call is answered by exactly one result before the next user message: a call left without one
gets :func:`interrupted_result`. Undone turns leave it, or the model is told of the undo
(:func:`~acp_sidecar.store.rewinds.history_rewinds`), so the records are read twice.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import Final, TypeAlias, assert_never

from acp_sidecar.store.records import (
    AgentMessageRecord,
    AgentThoughtRecord,
    ChildRecord,
    CompactionRecord,
    ConfigChangeRecord,
    DirectoriesChangeRecord,
    FileChangeRecord,
    GapRecord,
    HeaderRecord,
    ModeChangeRecord,
    NoticeRecord,
    PermissionAnswerRecord,
    PermissionAskedRecord,
    PermissionRememberedRecord,
    PermissionRuleRecord,
    Record,
    SessionRuleRecord,
    ToolCallRecord,
    ToolResultRecord,
    TurnEndRecord,
    UndoRecord,
    UsageRecord,
    UserMessageRecord,
)
from acp_sidecar.store.rewinds import history_rewinds, numbered
from acp_sidecar.tools.content import TextContent
from acp_sidecar.tools.json_values import FrozenDict
from acp_sidecar.tools.result import ToolErrorInfo, ToolExecutionResult

logger = logging.getLogger(__name__)

HistoryItem: TypeAlias = (
    UserMessageRecord
    | AgentMessageRecord
    | AgentThoughtRecord
    | ToolCallRecord
    | ToolResultRecord
    | UsageRecord
    | CompactionRecord
)
"""What :class:`History` yields (a closed union; match it exhaustively)."""

INTERRUPTED: Final = ToolErrorInfo(name="ToolInterruptedError", code="INTERRUPTED")
"""The error of a result made up for a call that never returned one."""


def interrupted_result(call_id: str) -> ToolExecutionResult:
    """The error result standing in for a call that was stopped before it returned."""
    return ToolExecutionResult(
        call_id=call_id,
        content=[TextContent("The tool call was interrupted before it returned a result.")],
        is_error=True,
        error=INTERRUPTED,
    )


class History:
    """An iterable of :data:`HistoryItem` over a session's records (see the invariants).

    ``records`` may be a :class:`~acp_sidecar.store.reader.SessionLog` (the header is already
    taken off it) or any iterable of records; it is read into memory once.
    """

    def __init__(self, records: Iterable[Record]) -> None:
        self._records: Sequence[Record] = (
            records if isinstance(records, Sequence) else tuple(records)
        )

    def __iter__(self) -> Iterator[HistoryItem]:
        open_calls: dict[str, ToolCallRecord] = {}
        in_command = False
        """Inside a session command's turn: nothing of it is the model's."""

        def close_open() -> Iterator[ToolResultRecord]:
            for call_id in list(open_calls):
                del open_calls[call_id]
                yield ToolResultRecord(result=interrupted_result(call_id))

        rewinds = history_rewinds(self._records)
        hidden, notes = rewinds.hidden, rewinds.notes
        for index, (record, number) in enumerate(numbered(self._records)):
            note = notes.get(index)
            if note is not None:
                yield from close_open()
                yield UserMessageRecord(content=(FrozenDict({"type": "text", "text": note}),))
                continue
            if number in hidden:
                if isinstance(record, TurnEndRecord):
                    yield from close_open()
                continue
            if in_command:
                if isinstance(record, TurnEndRecord):
                    in_command = False
                    continue
                if not isinstance(record, UserMessageRecord) or record.command is not None:
                    continue
                in_command = False  # a torn log: the command's turn never ended
            match record:
                case UserMessageRecord(command=command) if command is not None:
                    yield from close_open()
                    in_command = True
                case UserMessageRecord():
                    yield from close_open()
                    yield record
                case (
                    AgentMessageRecord() | AgentThoughtRecord() | UsageRecord() | CompactionRecord()
                ):
                    yield record
                case ToolCallRecord():
                    if record.call_id in open_calls:
                        del open_calls[record.call_id]
                        yield ToolResultRecord(result=interrupted_result(record.call_id))
                    open_calls[record.call_id] = record
                    yield record
                case ToolResultRecord():
                    if open_calls.pop(record.call_id, None) is None:
                        logger.warning(
                            "history: dropped a result for call %r, which is not open",
                            record.call_id,
                        )
                        continue
                    yield record
                case TurnEndRecord():
                    yield from close_open()
                case (
                    HeaderRecord()
                    | ModeChangeRecord()
                    | DirectoriesChangeRecord()
                    | ConfigChangeRecord()
                    | SessionRuleRecord()
                    | NoticeRecord()
                    | GapRecord()
                ):
                    pass
                case (
                    PermissionAskedRecord()
                    | PermissionAnswerRecord()
                    | PermissionRememberedRecord()
                    | PermissionRuleRecord()
                ):
                    pass  # the user's decisions, for later views; never the model's history
                case FileChangeRecord() | UndoRecord():
                    pass  # what the files went through; the model is told of undos apart
                case ChildRecord():
                    pass  # a child's own conversation: the parent's model read its answer
                case _:
                    assert_never(record)
        yield from close_open()
