"""What one tool call ends with, and the shaping of what a tool returns (or raises) into it.
Shaping never raises on a bad result: it names it in an error result.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import attrs

from acp_sidecar.tools.content import (
    CONTENT_BLOCK_TYPES,
    ContentBlock,
    TextContent,
    ToolOutput,
    content_from_json,
    content_problems,
    content_to_json,
)
from acp_sidecar.tools.errors import ToolError, ToolExecutionError, ToolResultError
from acp_sidecar.tools.json_values import (
    FrozenDict,
    FrozenJson,
    JsonValue,
    JsonValueError,
    freeze_json,
    json_violations,
    thaw,
)
from acp_sidecar.tools.slots import field_setters


@attrs.frozen
class ToolErrorInfo:
    """Machine-routable structure of a failed call: the error's name and stable code."""

    name: str
    code: str


def _content_tuple(value: Iterable[ContentBlock]) -> tuple[ContentBlock, ...]:
    return tuple(value)


def _freeze_optional(value: JsonValue) -> FrozenJson:
    if value is None or type(value) is FrozenDict:
        return value  # what freeze_json returns for them (a stored result's meta, or none)
    return freeze_json(value)


@attrs.frozen
class ToolExecutionResult:
    """The authoritative outcome of one call.

    ``content`` is what the model sees; ``error`` is set when the call failed with a known
    error; ``additional_context`` is extra model-facing context for the next request (not part
    of this result); ``meta`` is the tool's private presentation payload (successful calls).
    """

    call_id: str
    content: tuple[ContentBlock, ...] = attrs.field(converter=_content_tuple)
    is_error: bool
    error: ToolErrorInfo | None = None
    additional_context: FrozenJson = attrs.field(default=None, converter=_freeze_optional)
    meta: FrozenJson = attrs.field(default=None, converter=_freeze_optional)


def result_to_json(result: ToolExecutionResult) -> dict[str, Any]:
    """The JSON object of a result (camelCase keys, as it is stored in a session log)."""
    data: dict[str, Any] = {
        "callId": result.call_id,
        "content": [content_to_json(block) for block in result.content],
        "isError": result.is_error,
    }
    if result.error is not None:
        data["error"] = {"name": result.error.name, "code": result.error.code}
    if result.additional_context is not None:
        data["additionalContext"] = thaw(result.additional_context)
    if result.meta is not None:
        data["meta"] = thaw(result.meta)
    return data


_new_result: Final = ToolExecutionResult.__new__
_set_call_id, _set_content, _set_is_error, _set_error, _set_context, _set_meta = field_setters(
    ToolExecutionResult
)
_new_text: Final = TextContent.__new__
_set_text, _set_text_type = field_setters(TextContent)


def result_from_json(data: Mapping[str, Any]) -> ToolExecutionResult:
    """The result of a JSON object made by :func:`result_to_json`; ``ValueError`` otherwise.

    Built by :func:`~acp_sidecar.tools.slots.field_setters`, for the values the converters
    keep: a tuple of blocks, and a context and meta that are ``None`` or a
    :class:`FrozenDict`; any other is converted (and refused) as ``ToolExecutionResult(...)``
    would, in its order.
    """
    try:
        error = data.get("error")
        call_id = data["callId"]
        is_error = data["isError"]
        if not isinstance(call_id, str) or not isinstance(is_error, bool):
            raise ValueError("callId must be a string and isError a boolean")
        content: list[ContentBlock] = []
        keep = content.append
        for block in data["content"]:
            # A text block (most results' only one) as content_from_json reads it, inlined.
            text = block.get("text") if type(block) is dict and len(block) == 2 else None
            if type(text) is str and block.get("type") == "text":
                text_block = _new_text(TextContent)
                _set_text(text_block, text)
                _set_text_type(text_block, "text")
                keep(text_block)
            else:
                keep(content_from_json(block))
        info = None if error is None else ToolErrorInfo(str(error["name"]), str(error["code"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a tool result: {exc}") from exc
    context, meta = data.get("additionalContext"), data.get("meta")
    if not (context is None or type(context) is FrozenDict):
        context = freeze_json(context)
    if not (meta is None or type(meta) is FrozenDict):
        meta = freeze_json(meta)
    result = _new_result(ToolExecutionResult)
    _set_call_id(result, call_id)
    _set_content(result, tuple(content))
    _set_is_error(result, is_error)
    _set_error(result, info)
    _set_context(result, context)
    _set_meta(result, meta)
    return result


# --- result shaping ---------------------------------------------------------------------------


def error_result(call_id: str, error: BaseException) -> ToolExecutionResult:
    """The ``is_error`` result of a call that failed with ``error``."""
    if isinstance(error, ToolError):
        name, code, text = error.name, error.code, str(error)
    else:
        name, code = type(error).__name__, ToolExecutionError.code
        text = f"{name}: {error}" if str(error) else name
    return ToolExecutionResult(
        call_id=call_id,
        content=(TextContent(text),),
        is_error=True,
        error=ToolErrorInfo(name=name, code=code),
    )


def normalize_output(call_id: str, name: str, output: object) -> ToolExecutionResult:
    """The successful result of what tool ``name``'s ``execute`` returned.

    Raises:
        ToolResultError: ``output`` is none of the return forms, or its meta is not JSON.
    """
    meta: Any = None
    if isinstance(output, ToolOutput):
        meta = output.meta
        output = output.content
    content: tuple[ContentBlock, ...]
    if isinstance(output, str):
        content = (TextContent(output),)
    elif isinstance(output, list | tuple) and all(
        isinstance(block, CONTENT_BLOCK_TYPES) for block in output
    ):
        content = tuple(output)
    else:
        raise ToolResultError(
            f"{name} returned {type(output).__name__}; expected str, a list of content "
            "blocks, or ToolOutput"
        )
    try:
        return ToolExecutionResult(call_id=call_id, content=content, is_error=False, meta=meta)
    except JsonValueError as exc:
        raise ToolResultError(f"{name} returned meta that is not lossless JSON: {exc}") from exc


def rebuild_result(call_id: str, result: ToolExecutionResult) -> ToolExecutionResult:
    """``result`` checked part by part; anything malformed becomes an error result.

    A listener or wrapper may hand back a result built around the attrs checks (or mutated
    after them); this is the last look before the result leaves the pipeline.
    """
    problems: list[str] = []
    if result.call_id != call_id:
        problems.append(f"callId {result.call_id!r} is not the call's {call_id!r}")
    is_error: object = result.is_error
    if type(is_error) is not bool:
        problems.append("isError is not a boolean")
    content: Sequence[object] = result.content
    for index, block in enumerate(content):
        problems.extend(f"content/{index}: {problem}" for problem in content_problems(block))
    error = result.error
    if error is not None and (
        not isinstance(error, ToolErrorInfo)
        or type(error.name) is not str
        or type(error.code) is not str
    ):
        problems.append("error is not a ToolErrorInfo of two strings")
    for field_name in ("additional_context", "meta"):
        problems.extend(f"{field_name}{v}" for v in json_violations(getattr(result, field_name)))
    if problems:
        return error_result(
            call_id,
            ToolResultError("the tool result is malformed: " + "; ".join(problems)),
        )
    return result
