"""Record JSON objects → records: one decoder per record type (shapes in
:mod:`acp_sidecar.store.codec`). Invariant: what is not a record of its type raises
:class:`RecordDecodeError`, never anything else; payloads come out deep-frozen.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from itertools import chain, repeat
from typing import Any, Final

from acp_sidecar.store.records import (
    PERMISSION_ANSWERS,
    AgentMessageRecord,
    AgentThoughtRecord,
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
    parse_timestamp,
)
from acp_sidecar.tools.json_values import FrozenDict, FrozenJson
from acp_sidecar.tools.result import result_from_json
from acp_sidecar.tools.slots import field_setters


class RecordDecodeError(ValueError):
    """A line that is not a record this version understands (damage, not a newer version)."""


_new_frozen_dict: Final = FrozenDict.__new__
_fill: Final = dict.update


def freeze_parsed(value: Any) -> FrozenJson:
    """A deep-frozen copy of a value fresh from :mod:`json` (already lossless JSON).

    Cheaper than :func:`~acp_sidecar.tools.json_values.freeze_json`, which must first check
    arbitrary Python values; objects with only scalar members are frozen in one copy, made
    the way :meth:`~acp_sidecar.tools.json_values.FrozenDict.from_frozen` makes it (inlined:
    this runs for every object of a log that is loaded).
    """
    kind = type(value)
    if kind is dict:
        for item in value.values():
            if type(item) is dict or type(item) is list:
                value = {
                    key: freeze_parsed(item) if type(item) in _CONTAINERS else item
                    for key, item in value.items()
                }
                break
        frozen = _new_frozen_dict(FrozenDict)
        _fill(frozen, value)  # a fresh json parse: lossless by construction
        return frozen
    if kind is list:
        if (
            len(value) >= _BATCHED_FROM
            and _DICTS.issuperset(map(type, value))
            and _CONTAINERS.isdisjoint(map(type, _members(map(_values, value))))
        ):
            # Objects of scalars alone (a grep's matches, a listing's entries): each copied
            # as below, but by C loops rather than one turn of this loop per object.
            copies = list(map(_new_frozen_dict, repeat(FrozenDict, len(value))))
            deque(map(_fill, copies, value), maxlen=0)  # runs the fills, keeping nothing
            return tuple(copies)
        items: list[FrozenJson] = []
        keep = items.append
        for item in value:
            kind = type(item)
            if kind is dict:
                # An object of scalars (a list's usual item: matches, entries) frozen here,
                # without a call: as the dict case above makes it.
                for member in item.values():
                    if type(member) is dict or type(member) is list:
                        keep(freeze_parsed(item))
                        break
                else:
                    frozen = _new_frozen_dict(FrozenDict)
                    _fill(frozen, item)
                    keep(frozen)
            elif kind is list:
                keep(freeze_parsed(item))
            else:
                keep(item)
        return tuple(items)
    return value  # type: ignore[no-any-return]


_CONTAINERS: Final = frozenset({dict, list})
"""What :func:`freeze_parsed` copies; anything else a parse makes is a scalar, kept as it is
(tested inline: a call per scalar costs more than the test)."""
_DICTS: Final = frozenset({dict})
_BATCHED_FROM: Final = 4
"""The shortest list of objects :func:`freeze_parsed` copies in C loops: for fewer (a prompt's
one block), building the loops costs more than they save."""
_values: Final = dict.values
_members: Final = chain.from_iterable


def _str(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if type(value) is not str:
        raise RecordDecodeError(f"{key!r} must be a string")
    return value


def _optional(data: dict[str, Any], key: str) -> str | None:
    return None if data.get(key) is None else _str(data, key)


def _directories(data: dict[str, Any], *, required: bool) -> tuple[str, ...]:
    value = data.get("additionalDirectories")
    if value is None and not required:
        return ()  # a log written before sessions had extra roots
    if type(value) is not list or any(type(item) is not str for item in value):
        raise RecordDecodeError("'additionalDirectories' must be a list of strings")
    return tuple(value)


def _header(data: dict[str, Any]) -> HeaderRecord:
    mode = data.get("mode")
    if mode is not None and type(mode) is not str:
        raise RecordDecodeError("'mode' must be a string")
    try:
        created = parse_timestamp(_str(data, "created"))
    except ValueError as exc:
        raise RecordDecodeError(f"'created' is not a timestamp: {exc}") from None
    return HeaderRecord(
        session_id=_str(data, "sessionId"),
        cwd=_str(data, "cwd"),
        created_at=created,
        mode=mode,
        additional_directories=_directories(data, required=False),
        title=_optional(data, "title"),
    )


def _blocks(data: dict[str, Any], *, required: bool = True) -> tuple[FrozenDict, ...]:
    content = data.get("content")
    if content is None and not required:
        return ()
    if type(content) is not list or any(type(block) is not dict for block in content):
        raise RecordDecodeError("'content' must be a list of objects")
    return freeze_parsed(content)  # type: ignore[return-value]


def _user_message(data: dict[str, Any]) -> UserMessageRecord:
    return UserMessageRecord(
        content=_blocks(data),
        message_id=_optional(data, "id"),
        command=_optional(data, "command"),
    )


_new_call: Final = ToolCallRecord.__new__
_set_call_id, _set_name, _set_arguments, _set_title, _set_kind, _set_time = field_setters(
    ToolCallRecord
)


def _tool_call(data: dict[str, Any]) -> ToolCallRecord:
    # _str and _optional inlined, and the record built by field_setters: every call of a log
    # that is loaded passes here.
    call_id, name = data.get("callId"), data.get("name")
    if type(call_id) is not str:
        raise RecordDecodeError("'callId' must be a string")
    if type(name) is not str:
        raise RecordDecodeError("'name' must be a string")
    arguments = freeze_parsed(data.get("arguments"))
    title, kind = data.get("title"), data.get("kind")
    if title is not None and type(title) is not str:
        raise RecordDecodeError("'title' must be a string")
    if kind is not None and type(kind) is not str:
        raise RecordDecodeError("'kind' must be a string")
    record = _new_call(ToolCallRecord)
    _set_call_id(record, call_id)
    _set_name(record, name)
    _set_arguments(record, arguments)
    _set_title(record, title)
    _set_kind(record, kind)
    _set_time(record, None)  # the codec sets the line's time
    return record


def _permission_asked(data: dict[str, Any]) -> PermissionAskedRecord:
    options = data.get("options")
    if type(options) is not list or any(type(option) is not str for option in options):
        raise RecordDecodeError("'options' must be a list of strings")
    return PermissionAskedRecord(
        call_id=_str(data, "callId"), tool=_str(data, "tool"), options=tuple(options)
    )


def _permission_answer(data: dict[str, Any]) -> PermissionAnswerRecord:
    answer = data.get("answer")
    for known in PERMISSION_ANSWERS:  # narrowed to the literal it is
        if answer == known and type(answer) is str:
            return PermissionAnswerRecord(
                call_id=_str(data, "callId"), tool=_str(data, "tool"), answer=known
            )
    raise RecordDecodeError(f"'answer' must be one of {', '.join(PERMISSION_ANSWERS)}")


def _permission_remembered(data: dict[str, Any]) -> PermissionRememberedRecord:
    allowed = data.get("allowed")
    if type(allowed) is not bool:
        raise RecordDecodeError("'allowed' must be a boolean")
    return PermissionRememberedRecord(
        call_id=_str(data, "callId"), tool=_str(data, "tool"), allowed=allowed
    )


def _permission_rule(data: dict[str, Any]) -> PermissionRuleRecord:
    verdict = data.get("verdict")
    for known in ("allow", "ask", "deny"):  # narrowed to the literal it is
        if verdict == known and type(verdict) is str:
            return PermissionRuleRecord(
                call_id=_str(data, "callId"),
                tool=_str(data, "tool"),
                verdict=known,
                rule=_str(data, "rule"),
                source=_str(data, "source"),
            )
    raise RecordDecodeError("'verdict' must be one of allow, ask, deny")


def _session_rule(data: dict[str, Any]) -> SessionRuleRecord:
    risk = data.get("risk")
    if risk is not None and (
        type(risk) is not list or len(risk) != 2 or any(type(b) is not bool for b in risk)
    ):
        raise RecordDecodeError("'risk' must be two booleans, or absent")
    removed = data.get("removed", False)
    if type(removed) is not bool:
        raise RecordDecodeError("'removed' must be a boolean")
    declared = None if risk is None else (bool(risk[0]), bool(risk[1]))
    return SessionRuleRecord(rule=_str(data, "rule"), risk=declared, removed=removed)


def _tool_result(data: dict[str, Any]) -> ToolResultRecord:
    result = data.get("result")
    if type(result) is not dict:
        raise RecordDecodeError("'result' must be an object")
    for key in ("meta", "additionalContext"):
        if key in result:  # freeze the cheap way, so the result does not walk it again
            result[key] = freeze_parsed(result[key])
    try:
        stored = result_from_json(result)
    except ValueError as exc:  # includes JsonValueError from a bad meta
        raise RecordDecodeError(f"'result' is not a tool result: {exc}") from None
    record = _new_result_record(ToolResultRecord)
    _set_result_time(record, None)  # the codec sets the line's time
    _set_result(record, stored)
    return record


_new_result_record: Final = ToolResultRecord.__new__
_set_result_time, _set_result = field_setters(ToolResultRecord)


def _count(data: dict[str, Any], key: str, *, required: bool = True) -> int | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if type(value) is not int or value < 0:
        raise RecordDecodeError(f"{key!r} must be a whole number of at least 0")
    return value


def _amount(data: dict[str, Any], key: str) -> float | None:
    value = data.get(key)
    if value is not None and (type(value) not in (int, float) or not 0 <= value < math.inf):
        raise RecordDecodeError(f"{key!r} must be a number of at least 0")
    return None if value is None else float(value)


def _usage(data: dict[str, Any]) -> UsageRecord:
    cost = _amount(data, "cost")
    currency = data.get("currency")
    if currency is not None and type(currency) is not str:
        raise RecordDecodeError("'currency' must be a string")
    prompt = _count(data, "promptTokens")
    completion = _count(data, "completionTokens")
    assert prompt is not None and completion is not None  # required: raised otherwise
    return UsageRecord(
        model=_str(data, "model"),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=_count(data, "cachedTokens", required=False),
        context_window=_count(data, "contextWindow", required=False),
        cost=cost,
        currency=currency,
        seconds=_amount(data, "seconds"),
    )


def _compaction(data: dict[str, Any]) -> CompactionRecord:
    turns = _count(data, "turns")
    assert turns is not None  # required: raised otherwise
    return CompactionRecord(summary=_str(data, "summary"), turns=turns)


def _hash(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if type(value) is not str or len(value) != 64 or value.strip("0123456789abcdef"):
        raise RecordDecodeError(f"{key!r} must be a SHA-256 in hex, or null")
    return value


def _file_change(data: dict[str, Any]) -> FileChangeRecord:
    kept = data.get("kept", True)
    if type(kept) is not bool:
        raise RecordDecodeError("'kept' must be a boolean")
    return FileChangeRecord(
        call_id=_str(data, "callId"),
        path=_str(data, "path"),
        before=_hash(data, "before"),
        after=_hash(data, "after"),
        kept=kept,
    )


def _undo(data: dict[str, Any]) -> UndoRecord:
    turns = data.get("turns")
    if type(turns) is not list or any(type(t) is not int or t < 1 for t in turns):
        raise RecordDecodeError("'turns' must be a list of whole numbers of at least 1")
    redo = data.get("redo", False)
    if type(redo) is not bool:
        raise RecordDecodeError("'redo' must be a boolean")
    return UndoRecord(turns=tuple(turns), redo=redo)


DECODERS: Final[dict[str, Callable[[dict[str, Any]], Record]]] = {
    "header": _header,
    "user_message": _user_message,
    "agent_message": lambda data: AgentMessageRecord(
        text=_str(data, "text"), message_id=_optional(data, "id")
    ),
    "agent_thought": lambda data: AgentThoughtRecord(
        text=_str(data, "text"), message_id=_optional(data, "id")
    ),
    "notice": lambda data: NoticeRecord(
        text=_str(data, "text"),
        severity=_optional(data, "severity"),
        message_id=_optional(data, "id"),
        content=_blocks(data, required=False),
    ),
    "gap": lambda data: GapRecord(reason=_str(data, "reason")),
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "mode_change": lambda data: ModeChangeRecord(mode=_str(data, "mode")),
    "directories": lambda data: DirectoriesChangeRecord(_directories(data, required=True)),
    "config_change": lambda data: ConfigChangeRecord(
        config_id=_str(data, "configId"), value=_str(data, "value")
    ),
    "turn_end": lambda data: TurnEndRecord(stop_reason=_str(data, "stopReason")),
    "permission_asked": _permission_asked,
    "permission_answer": _permission_answer,
    "permission_remembered": _permission_remembered,
    "permission_rule": _permission_rule,
    "session_rule": _session_rule,
    "usage": _usage,
    "compaction": _compaction,
    "file_change": _file_change,
    "undo": _undo,
}
