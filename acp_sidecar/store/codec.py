"""Records ⇄ JSONL lines (the shapes: the comment above ``_record_json``).

:func:`encode_record` returns one line of compact ASCII JSON (lone surrogates survive) or raises
before anything is written; :func:`decode_line` returns the record encoded, or raises
:class:`RecordDecodeError` (damage) or :class:`NewerVersion` (refuse the log). Unknown keys are
ignored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final, assert_never, get_args

from acp_sidecar import jsonfast
from acp_sidecar.store.decoders import DECODERS, RecordDecodeError
from acp_sidecar.store.records import (
    SCHEMA_VERSION,
    AgentMessageRecord,
    AgentThoughtRecord,
    ChildRecord,
    ChildRecordable,
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
    format_timestamp,
    parse_timestamp,
    version_named,
)
from acp_sidecar.tools.result import result_to_json

__all__ = [
    "NewerVersion",
    "RecordDecodeError",
    "decode_line",
    "decode_record",
    "encode_record",
    "lines_in_doubt",
]


class NewerVersion(Exception):
    """A record whose ``"v"`` is newer than :data:`SCHEMA_VERSION`."""

    def __init__(self, found: float) -> None:
        self.found = found  # an int when it is whole (3.0 and 1e1 are 3 and 10)
        super().__init__(f"record version {found}")


# Record JSON shapes. Every object also carries its version "v", its "type" and, from
# version 2, its time "t" (ISO 8601 UTC, as records.format_timestamp writes it):
#
#     header         {"sessionId", "cwd", "created": ISO 8601 UTC, "mode"?: str,
#                     "additionalDirectories"?: [str, …]}
#     user_message   {"content": [ACP content block JSON, …], "id"?: str, "command"?: str}
#     agent_message  {"text": str, "id"?: str}
#     agent_thought  {"text": str, "id"?: str}
#     notice         {"text": str, "severity"?: str, "id"?: str,
#                     "content"?: [ACP content block JSON, …]}
# ("id": the message id, written when the record has one.)
#     gap            {"reason": str}
#     tool_call      {"callId", "name", "arguments": JSON, "title"?: str, "kind"?: str}
#     tool_result    {"result": result_to_json(result)}
#     mode_change    {"mode": str}
#     directories    {"additionalDirectories": [str, …]}
#     config_change  {"configId": str, "value": str}
#     turn_end       {"stopReason": str}
#     permission_asked       {"callId", "tool", "options": [str]}
#     permission_answer      {"callId", "tool", "answer": str}
#     permission_remembered  {"callId", "tool", "allowed": bool}
#     permission_rule        {"callId", "tool", "verdict": "allow"|"ask"|"deny", "rule", "source"}
#     session_rule   {"rule": str, "risk"?: [bool, bool], "removed"?: true}
#     usage          {"model", "promptTokens", "completionTokens", "cachedTokens"?,
#                     "contextWindow"?, "cost"?: number, "currency"?: str, "seconds"?: number}
#     compaction     {"summary": str, "turns": int}
def _record_json(record: Record) -> dict[str, Any]:
    match record:
        case HeaderRecord():
            data: dict[str, Any] = {
                "v": SCHEMA_VERSION,
                "type": "header",
                "sessionId": record.session_id,
                "cwd": record.cwd,
                "created": format_timestamp(record.created_at),
            }
            if record.mode is not None:
                data["mode"] = record.mode
            if record.additional_directories:
                data["additionalDirectories"] = list(record.additional_directories)
            if record.title is not None:
                data["title"] = record.title
            return data
        case UserMessageRecord():
            data = {"v": SCHEMA_VERSION, "type": "user_message", "content": record.content}
            if record.command is not None:
                data["command"] = record.command
            return _with_id(data, record.message_id)
        case AgentMessageRecord():
            data = {"v": SCHEMA_VERSION, "type": "agent_message", "text": record.text}
            return _with_id(data, record.message_id)
        case AgentThoughtRecord():
            data = {"v": SCHEMA_VERSION, "type": "agent_thought", "text": record.text}
            return _with_id(data, record.message_id)
        case NoticeRecord(severity=severity):
            told = {} if severity is None else {"severity": severity}
            data = {"v": SCHEMA_VERSION, "type": "notice", "text": record.text, **told}
            if record.content:
                data["content"] = record.content
            return _with_id(data, record.message_id)
        case GapRecord():
            return {"v": SCHEMA_VERSION, "type": "gap", "reason": record.reason}
        case ToolCallRecord(title=title, kind=kind):
            shown = {k: v for k, v in (("title", title), ("kind", kind)) if v is not None}
            return {
                "v": SCHEMA_VERSION,
                "type": "tool_call",
                "callId": record.call_id,
                "name": record.name,
                "arguments": record.arguments,
                **shown,
            }
        case ToolResultRecord():
            return {
                "v": SCHEMA_VERSION,
                "type": "tool_result",
                "result": result_to_json(record.result),
            }
        case ModeChangeRecord():
            return {"v": SCHEMA_VERSION, "type": "mode_change", "mode": record.mode}
        case DirectoriesChangeRecord():
            return {
                "v": SCHEMA_VERSION,
                "type": "directories",
                "additionalDirectories": list(record.additional_directories),
            }
        case ConfigChangeRecord():
            return {
                "v": SCHEMA_VERSION,
                "type": "config_change",
                "configId": record.config_id,
                "value": record.value,
            }
        case TurnEndRecord():
            return {"v": SCHEMA_VERSION, "type": "turn_end", "stopReason": record.stop_reason}
        case PermissionAskedRecord():
            return {
                "v": SCHEMA_VERSION,
                "type": "permission_asked",
                "callId": record.call_id,
                "tool": record.tool,
                "options": list(record.options),
            }
        case PermissionAnswerRecord():
            return {
                "v": SCHEMA_VERSION,
                "type": "permission_answer",
                "callId": record.call_id,
                "tool": record.tool,
                "answer": record.answer,
            }
        case PermissionRememberedRecord():
            return {
                "v": SCHEMA_VERSION,
                "type": "permission_remembered",
                "callId": record.call_id,
                "tool": record.tool,
                "allowed": record.allowed,
            }
        case PermissionRuleRecord():
            return {
                "v": SCHEMA_VERSION,
                "type": "permission_rule",
                "callId": record.call_id,
                "tool": record.tool,
                "verdict": record.verdict,
                "rule": record.rule,
                "source": record.source,
            }
        case SessionRuleRecord():
            kept: dict[str, Any] = {
                "v": SCHEMA_VERSION,
                "type": "session_rule",
                "rule": record.rule,
            }
            if record.risk is not None:
                kept["risk"] = list(record.risk)
            if record.removed:
                kept["removed"] = True
            return kept
        case UsageRecord():
            return _usage_json(record)
        case CompactionRecord():
            return {
                "v": SCHEMA_VERSION,
                "type": "compaction",
                "summary": record.summary,
                "turns": record.turns,
            }
        case FileChangeRecord():
            change: dict[str, Any] = {
                "v": SCHEMA_VERSION,
                "type": "file_change",
                "callId": record.call_id,
                "path": record.path,
                "before": record.before,
                "after": record.after,
            }
            if not record.kept:
                change["kept"] = False
            return change
        case UndoRecord():
            undo: dict[str, Any] = {
                "v": SCHEMA_VERSION,
                "type": "undo",
                "turns": list(record.turns),
            }
            if record.redo:
                undo["redo"] = True
            return undo
        case ChildRecord(session_id=child, record=inner):
            data = _record_json(inner)
            data["s"] = child
            return data
        case _:
            assert_never(record)


def _with_id(data: dict[str, Any], message_id: str | None) -> dict[str, Any]:
    if message_id is not None:
        data["id"] = message_id
    return data


def _usage_json(record: UsageRecord) -> dict[str, Any]:
    data: dict[str, Any] = {
        "v": SCHEMA_VERSION,
        "type": "usage",
        "model": record.model,
        "promptTokens": record.prompt_tokens,
        "completionTokens": record.completion_tokens,
    }
    optional = {
        "cachedTokens": record.cached_tokens,
        "contextWindow": record.context_window,
        "cost": record.cost,
        "currency": record.currency,
        "seconds": record.seconds,
    }
    data.update((key, value) for key, value in optional.items() if value is not None)
    return data


def encode_record(record: Record, *, at: datetime | str | None = None) -> bytes:
    """The record's line, newline included, with its time: ``record.at``, else ``at`` (the
    writer passes the time of writing, as :func:`~acp_sidecar.store.records.timestamp_now`
    formats it), else none.

    Raises:
        ValueError: a payload holds ``NaN``/``Infinity``, or is not JSON (``TypeError`` too),
            or the time is not timezone-aware.
    """
    data = _record_json(record)
    moment = record.at if record.at is not None else at
    if isinstance(moment, str):
        data["t"] = moment
    elif moment is not None:
        data["t"] = format_timestamp(moment)
    return jsonfast.dumps(data, ascii=True) + b"\n"


_fromisoformat: Final = datetime.fromisoformat


def _time(text: object) -> datetime:
    """The aware UTC time of a record's ``"t"`` (as :func:`parse_timestamp` reads it, with
    the common case -- the ``Z`` the writer puts -- taking no conversion)."""
    if type(text) is not str:
        raise RecordDecodeError("'t' must be a string")
    try:
        moment = _fromisoformat(text)
    except ValueError as exc:
        raise RecordDecodeError(f"'t' is not a timestamp: {exc}") from None
    if moment.tzinfo is UTC:
        return moment
    try:
        return parse_timestamp(text)
    except ValueError as exc:
        raise RecordDecodeError(f"'t' is not a timestamp: {exc}") from None


def decode_record(data: object) -> Record:
    """The record of one parsed line.

    Raises:
        NewerVersion: ``"v"`` is newer than :data:`SCHEMA_VERSION`.
        RecordDecodeError: anything else that is not a record of a version this one reads.
    """
    if type(data) is not dict:
        raise RecordDecodeError("a record must be a JSON object")
    version = data.get("v")
    if type(version) is not int:
        version = version_named(version)
    if version < 1:
        raise RecordDecodeError("'v' must be a positive integer")
    if version > SCHEMA_VERSION:
        raise NewerVersion(version)
    kind = data.get("type")
    decoder = DECODERS.get(kind) if type(kind) is str else None
    if decoder is None:
        raise RecordDecodeError(f"unknown record type {kind!r}")
    record = decoder(data)
    moment = data.get("t")
    if moment is not None:
        _set_at(record, "at", _time(moment))
    child = data.get("s")
    if child is None:
        return record
    if type(child) is not str or not child:
        raise RecordDecodeError("'s' must be a non-empty string")
    if not isinstance(record, get_args(ChildRecordable)):
        raise RecordDecodeError(f"a {kind} record cannot belong to a child session")
    return ChildRecord(child, record)


_set_at: Final = object.__setattr__
"""Sets the time on a record fresh from its type's decoder, before anyone else holds it: what
the frozen class's own ``__init__`` does for each field. ``attrs.evolve`` would build every
record a second time, once per line of a log that is loaded; this is one attribute store."""


def lines_in_doubt(block: bytes, end: int) -> tuple[int, list[tuple[int, bytes]]]:
    """How many whole lines ``block[:end]`` holds, and those whose version only
    :func:`decode_line` can tell (each with its index, from 0): every other line's ``"v"``,
    read without building the rest, is an integer this version reads."""
    read_version = jsonfast.member_reader("v")
    find = block.find
    view = memoryview(block)
    doubtful: list[tuple[int, bytes]] = []
    position = index = 0
    while position < end:
        newline = find(b"\n", position, end)
        try:
            version = read_version(view[position:newline])
        except ValueError:
            version = None
        if type(version) is not int or not 1 <= version <= SCHEMA_VERSION:
            doubtful.append((index, block[position:newline]))
        position = newline + 1
        index += 1
    return index, doubtful


def decode_line(line: bytes) -> Record:
    """The record of one line (its newline may be present).

    Raises:
        NewerVersion, RecordDecodeError: as :func:`decode_record`; invalid UTF-8 or JSON is a
            :class:`RecordDecodeError`.
    """
    try:
        data = jsonfast.loads(line)
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, NaN
        raise RecordDecodeError(f"not JSON: {exc}") from None
    except RecursionError:
        raise RecordDecodeError("not JSON: nested too deeply") from None
    return decode_record(data)
