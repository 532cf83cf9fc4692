"""Records ⇄ JSONL lines.

Record JSON shapes (every object also carries its version ``"v"``, its ``"type"`` and, from
version 2, its time ``"t"``: ISO 8601 UTC as :func:`~acp_sidecar.store.records.format_timestamp`
writes it)::

    header         {"sessionId", "cwd", "created": ISO 8601 UTC, "mode"?: str,
                    "additionalDirectories"?: [str, …]}
    user_message   {"content": [ACP content block JSON, …]}
    agent_message  {"text": str}
    agent_thought  {"text": str}
    notice         {"text": str, "severity"?: str}
    gap            {"reason": str}
    tool_call      {"callId", "name", "arguments": JSON, "title"?: str, "kind"?: str}
    tool_result    {"result": result_to_json(result)}
    mode_change    {"mode": str}
    directories    {"additionalDirectories": [str, …]}
    config_change  {"configId": str, "value": str}
    turn_end       {"stopReason": str}
    permission_asked       {"callId", "tool", "options": [str]}
    permission_answer      {"callId", "tool", "answer": str}
    permission_remembered  {"callId", "tool", "allowed": bool}
    usage          {"model", "promptTokens", "completionTokens", "cachedTokens"?,
                    "contextWindow"?, "cost"?: number, "currency"?: str}
    compaction     {"summary": str, "turns": int}

Invariants:
- :func:`encode_record` returns exactly one line: compact ASCII JSON (``ensure_ascii``, so
  every Python string — lone surrogates included — survives the round trip) and one ``\\n``.
  It raises before anything is written when a payload is not JSON (``NaN`` included).
- :func:`decode_record` either returns a record equal to the one encoded or raises
  :class:`RecordDecodeError` (damage: the reader skips the line) or :class:`NewerVersion`
  (the reader refuses the log). Unknown keys of a known record type are ignored, so later
  additions within version 1 stay readable (a header without ``additionalDirectories`` has
  none); a reader older than a record *type* (``notice``, ``gap``, ``directories``,
  ``config_change``, ``usage`` and ``compaction`` came after the others) skips that line as
  damage and reads the rest of the log.
- The time is generic: :func:`encode_record` writes ``"t"`` for any record whose ``at`` is
  set (or the ``at`` it is given), :func:`decode_record` sets ``at`` from ``"t"`` on whatever
  record a type's decoder made; a record without ``"t"`` (version 1) decodes with ``at``
  ``None``, exactly as it decoded before.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from json.scanner import make_scanner
from typing import Any, Final, NoReturn, assert_never

from acp_sidecar.store.records import (
    PERMISSION_ANSWERS,
    SCHEMA_VERSION,
    AgentMessageRecord,
    AgentThoughtRecord,
    CompactionRecord,
    ConfigChangeRecord,
    DirectoriesChangeRecord,
    GapRecord,
    HeaderRecord,
    ModeChangeRecord,
    NoticeRecord,
    PermissionAnswerRecord,
    PermissionAskedRecord,
    PermissionRememberedRecord,
    Record,
    ToolCallRecord,
    ToolResultRecord,
    TurnEndRecord,
    UsageRecord,
    UserMessageRecord,
    format_timestamp,
    parse_timestamp,
    version_named,
)
from acp_sidecar.tools.json_values import FrozenDict, FrozenJson
from acp_sidecar.tools.result import result_from_json, result_to_json


class RecordDecodeError(ValueError):
    """A line that is not a record this version understands (damage, not a newer version)."""


class NewerVersion(Exception):
    """A record whose ``"v"`` is newer than :data:`SCHEMA_VERSION`."""

    def __init__(self, found: float) -> None:
        self.found = found  # an int when it is whole (3.0 and 1e1 are 3 and 10)
        super().__init__(f"record version {found}")


def _reject_constant(name: str) -> NoReturn:
    raise RecordDecodeError(f"{name} is not a JSON number")


_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)
_ENCODER: Final = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


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
            return data
        case UserMessageRecord():
            return {"v": SCHEMA_VERSION, "type": "user_message", "content": record.content}
        case AgentMessageRecord():
            return {"v": SCHEMA_VERSION, "type": "agent_message", "text": record.text}
        case AgentThoughtRecord():
            return {"v": SCHEMA_VERSION, "type": "agent_thought", "text": record.text}
        case NoticeRecord(severity=severity):
            told = {} if severity is None else {"severity": severity}
            return {"v": SCHEMA_VERSION, "type": "notice", "text": record.text, **told}
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
        case UsageRecord():
            return _usage_json(record)
        case CompactionRecord():
            return {
                "v": SCHEMA_VERSION,
                "type": "compaction",
                "summary": record.summary,
                "turns": record.turns,
            }
        case _:
            assert_never(record)


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
    }
    data.update((key, value) for key, value in optional.items() if value is not None)
    return data


def encode_record(record: Record, *, at: datetime | None = None) -> bytes:
    """The record's line, newline included, with its time: ``record.at``, else ``at`` (the
    writer passes the time of writing), else none.

    Raises:
        ValueError: a payload holds ``NaN``/``Infinity``, or is not JSON (``TypeError`` too),
            or the time is not timezone-aware.
    """
    data = _record_json(record)
    moment = record.at if record.at is not None else at
    if moment is not None:
        data["t"] = format_timestamp(moment)
    return (_ENCODER.encode(data) + "\n").encode("ascii")


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
                value = {key: freeze_parsed(item) for key, item in value.items()}
                break
        frozen = _new_frozen_dict(FrozenDict)
        _fill(frozen, value)  # a fresh json parse: lossless by construction
        return frozen
    if kind is list:
        return tuple([freeze_parsed(item) for item in value])
    return value  # type: ignore[no-any-return]


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
    )


def _user_message(data: dict[str, Any]) -> UserMessageRecord:
    content = data.get("content")
    if type(content) is not list or any(type(block) is not dict for block in content):
        raise RecordDecodeError("'content' must be a list of objects")
    return UserMessageRecord(content=freeze_parsed(content))  # type: ignore[arg-type]


def _tool_call(data: dict[str, Any]) -> ToolCallRecord:
    return ToolCallRecord(
        call_id=_str(data, "callId"),
        name=_str(data, "name"),
        arguments=freeze_parsed(data.get("arguments")),
        title=_optional(data, "title"),
        kind=_optional(data, "kind"),
    )


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


def _tool_result(data: dict[str, Any]) -> ToolResultRecord:
    result = data.get("result")
    if type(result) is not dict:
        raise RecordDecodeError("'result' must be an object")
    for key in ("meta", "additionalContext"):
        if key in result:  # freeze the cheap way, so the result does not walk it again
            result[key] = freeze_parsed(result[key])
    try:
        return ToolResultRecord(result=result_from_json(result))
    except ValueError as exc:  # includes JsonValueError from a bad meta
        raise RecordDecodeError(f"'result' is not a tool result: {exc}") from None


def _count(data: dict[str, Any], key: str, *, required: bool = True) -> int | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if type(value) is not int or value < 0:
        raise RecordDecodeError(f"{key!r} must be a whole number of at least 0")
    return value


def _usage(data: dict[str, Any]) -> UsageRecord:
    cost = data.get("cost")
    if cost is not None and (type(cost) not in (int, float) or cost < 0):
        raise RecordDecodeError("'cost' must be a number of at least 0")
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
        cost=None if cost is None else float(cost),
        currency=currency,
    )


def _compaction(data: dict[str, Any]) -> CompactionRecord:
    turns = _count(data, "turns")
    assert turns is not None  # required: raised otherwise
    return CompactionRecord(summary=_str(data, "summary"), turns=turns)


_DECODERS: Final[dict[str, Callable[[dict[str, Any]], Record]]] = {
    "header": _header,
    "user_message": _user_message,
    "agent_message": lambda data: AgentMessageRecord(text=_str(data, "text")),
    "agent_thought": lambda data: AgentThoughtRecord(text=_str(data, "text")),
    "notice": lambda data: NoticeRecord(
        text=_str(data, "text"), severity=_optional(data, "severity")
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
    "usage": _usage,
    "compaction": _compaction,
}


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
    decoder = _DECODERS.get(kind) if type(kind) is str else None
    if decoder is None:
        raise RecordDecodeError(f"unknown record type {kind!r}")
    record = decoder(data)
    moment = data.get("t")
    if moment is not None:
        _set_at(record, "at", _time(moment))
    return record


_set_at: Final = object.__setattr__
"""Sets the time on a record fresh from its type's decoder, before anyone else holds it: what
the frozen class's own ``__init__`` does for each field. ``attrs.evolve`` would build every
record a second time, once per line of a log that is loaded; this is one attribute store."""


_scan_once: Final = make_scanner(_DECODER)  # type: ignore[arg-type]  # any decoder is a context


def _parse(text: str) -> Any:
    """``text`` as one JSON value, exactly as ``_DECODER.decode`` reads it.

    A line as the store writes it (one value first, then only its newline) is read by the
    decoder's scanner directly, skipping ``decode``'s whitespace matching around the value;
    anything else — and every error, so its message is the decoder's own — takes ``decode``.
    """
    try:
        value, end = _scan_once(text, 0)
    except (StopIteration, ValueError, RecursionError):
        return _DECODER.decode(text)
    if end == len(text) or (end == len(text) - 1 and text[end] == "\n"):
        return value
    return _DECODER.decode(text)


def decode_line(line: bytes) -> Record:
    """The record of one line (its newline may be present).

    Raises:
        NewerVersion, RecordDecodeError: as :func:`decode_record`; invalid UTF-8 or JSON is a
            :class:`RecordDecodeError`.
    """
    try:
        data = _parse(line.decode("utf-8"))
    except RecordDecodeError:
        raise
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise RecordDecodeError(f"not JSON: {exc}") from None
    except RecursionError:
        raise RecordDecodeError("not JSON: nested too deeply") from None
    return decode_record(data)
