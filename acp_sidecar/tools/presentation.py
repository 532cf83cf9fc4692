"""The presentation vocabulary: ``card``-tagged render intents a tool returns for its calls.

``present_call(args)`` returns a :data:`ToolCallView` (the pending card) and
``present_result(args, result)`` a :data:`ToolResultView` (the completed card). They are
provider-neutral: nothing here knows ACP; the bridge maps each card onto the wire.

Invariants:
- Presenters are pure: a UI calls them during live streaming *and* on session replay, so a
  view depends only on ``args`` (and ``result``). Views are therefore plain frozen values.
- :data:`ToolCallView` and :data:`ToolResultView` are **closed** unions, each member tagged by
  a required ``card`` (``generic`` / ``terminal`` / ``diff``) that must equal its class's
  tag. Consumers switch with ``match`` and ``assert_never``, so a new card kind breaks the
  type check at every consumer. The classes are ``@final`` and :func:`is_call_view` /
  :func:`is_result_view` accept exactly these classes, not subclasses.
- Construction is forgiving but safe: lists become tuples, ``raw_input`` and ``meta`` become
  detached deep-frozen copies (and must be lossless JSON), and every field is type-checked;
  a view that exists is well-formed and deeply immutable (hashable).
- :func:`view_to_json` and :func:`view_from_json` are exact inverses. The JSON is internal
  (golden files, logs), not the wire: snake_case keys, every field present, plus ``phase``
  (``"call"`` or ``"result"``) because the same ``card`` tag names a call and a result view.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias, TypeGuard, assert_never, final, get_args

import attrs

from acp_sidecar.tools.content import (
    ContentBlock,
    ImageContent,
    TextContent,
    content_from_json,
    content_to_json,
)
from acp_sidecar.tools.json_values import (
    FrozenDict,
    FrozenJson,
    JsonValue,
    JsonValueError,
    freeze_json,
    json_violations,
    thaw,
)

ToolCallKind: TypeAlias = Literal[
    "read", "edit", "delete", "move", "search", "execute", "fetch", "other"
]
"""Picks the icon of a generic card."""

TOOL_CALL_KINDS: Final[tuple[ToolCallKind, ...]] = get_args(ToolCallKind)
"""Every :data:`ToolCallKind`, in declaration order."""

_Validator: TypeAlias = Callable[[Any, "attrs.Attribute[Any]", Any], None]


# --- validators and converters ----------------------------------------------------------------


def _where(instance: object, attribute: attrs.Attribute[Any]) -> str:
    return f"{type(instance).__name__}.{attribute.name}"


def _card(tag: str) -> _Validator:
    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if type(value) is not str or value != tag:
            raise ValueError(f"{_where(instance, attribute)} must be {tag!r}, got {value!r}")

    return check


def _exact(*kinds: type, label: str) -> _Validator:
    """A validator accepting values whose type is exactly one of ``kinds`` (no subclasses,
    so ``True`` is not an ``int``)."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if type(value) not in kinds:
            raise TypeError(
                f"{_where(instance, attribute)} must be {label}, got {type(value).__name__}"
            )

    return check


_str = _exact(str, label="a str")
_optional_str = _exact(str, type(None), label="a str or None")
_optional_int = _exact(int, type(None), label="an int or None")


def _kind(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (type(value) is not str or value not in TOOL_CALL_KINDS):
        choices = ", ".join(repr(kind) for kind in TOOL_CALL_KINDS)
        raise ValueError(
            f"{_where(instance, attribute)} must be one of {choices} or None, got {value!r}"
        )


def _line(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    _optional_int(instance, attribute, value)
    if value is not None and value < 0:  # type: ignore[operator]
        raise ValueError(f"{_where(instance, attribute)} must not be negative, got {value!r}")


def _tuple_of(*kinds: type, item: str, optional: bool = False) -> _Validator:
    """A validator accepting a tuple whose items are exactly of ``kinds`` (or ``None``)."""

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if optional and value is None:
            return
        if type(value) is not tuple:
            expected = f"a tuple of {item}s" + (" or None" if optional else "")
            raise TypeError(
                f"{_where(instance, attribute)} must be {expected}, got {type(value).__name__}"
            )
        for index, entry in enumerate(value):
            if type(entry) not in kinds:
                raise TypeError(
                    f"{_where(instance, attribute)}[{index}] must be a {item}, "
                    f"got {type(entry).__name__}"
                )

    return check


_content_blocks = _tuple_of(TextContent, ImageContent, item="content block")


# The converters turn a list into a tuple and pass anything else through unchanged, for the
# field's validator to accept (a tuple) or reject with a message naming the field.


def _blocks(value: Sequence[ContentBlock]) -> tuple[ContentBlock, ...]:
    return tuple(value) if type(value) is list else value  # type: ignore[return-value]


def _optional_blocks(value: Sequence[ContentBlock] | None) -> tuple[ContentBlock, ...] | None:
    return tuple(value) if type(value) is list else value  # type: ignore[return-value]


def _locations(value: Sequence[FileLocation]) -> tuple[FileLocation, ...]:
    return tuple(value) if type(value) is list else value  # type: ignore[return-value]


def _diffs(value: Sequence[FileDiff]) -> tuple[FileDiff, ...]:
    return tuple(value) if type(value) is list else value  # type: ignore[return-value]


def _frozen(value: JsonValue) -> FrozenJson:
    """A detached deep-frozen copy, so a view cannot change after a presenter returns it.

    A value that is not lossless JSON is passed through for :func:`_lossless` to report.
    """
    try:
        return freeze_json(value)
    except JsonValueError:
        return value  # type: ignore[return-value]


def _lossless(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    violations = json_violations(value)
    if violations:
        raise ValueError(
            f"{_where(instance, attribute)} must be lossless JSON: {'; '.join(violations)}"
        )


# --- shared file vocabulary -------------------------------------------------------------------


@final
@attrs.frozen
class FileLocation:
    """A file the call reads or modifies, for editor follow-along."""

    path: str = attrs.field(validator=_str)
    """The file's path (the bridge sends it absolute on the wire)."""
    line: int | None = attrs.field(default=None, validator=_line)
    """A line in the file (non-negative), or ``None`` for the whole file."""


@final
@attrs.frozen
class FileDiff:
    """A whole-file or hunk change to show on a diff card."""

    path: str = attrs.field(validator=_str)
    """The changed file's path."""
    old_text: str | None = attrs.field(validator=_optional_str)
    """The text before the change; ``None`` for a file that did not exist."""
    new_text: str = attrs.field(validator=_str)
    """The text after the change."""


_file_locations = _tuple_of(FileLocation, item="FileLocation")
_file_diffs = _tuple_of(FileDiff, item="FileDiff")


# --- call views (pending) ---------------------------------------------------------------------


@final
@attrs.frozen(kw_only=True)
class GenericCallView:
    """The default pending card: a title, an icon, the raw input, optional content."""

    card: Literal["generic"] = attrs.field(validator=_card("generic"))
    title: str = attrs.field(validator=_str)
    """What the call does, for a person."""
    kind: ToolCallKind | None = attrs.field(default=None, validator=_kind)
    """The icon; ``None`` lets the UI choose."""
    raw_input: FrozenJson = attrs.field(default=None, converter=_frozen, validator=_lossless)
    """The call's arguments as shown raw; ``None`` for none (JSON ``null`` is not shown)."""
    content: tuple[ContentBlock, ...] = attrs.field(
        default=(), converter=_blocks, validator=_content_blocks
    )
    """Content to show while the call is pending."""
    locations: tuple[FileLocation, ...] = attrs.field(
        default=(), converter=_locations, validator=_file_locations
    )
    """Files the call reads or modifies."""


@final
@attrs.frozen(kw_only=True)
class TerminalCallView:
    """A shell command: shown as a terminal card that fills with output while it runs."""

    card: Literal["terminal"] = attrs.field(validator=_card("terminal"))
    title: str = attrs.field(validator=_str)
    """Usually the command line."""
    description: str | None = attrs.field(default=None, validator=_optional_str)
    """What the command is for, for a person."""
    cwd: str | None = attrs.field(default=None, validator=_optional_str)
    """The directory the command runs in (the card's header)."""


@final
@attrs.frozen(kw_only=True)
class DiffCallView:
    """A file create or modify: shown as an inline diff card."""

    card: Literal["diff"] = attrs.field(validator=_card("diff"))
    title: str = attrs.field(validator=_str)
    """What is being changed, for a person."""
    diffs: tuple[FileDiff, ...] = attrs.field(converter=_diffs, validator=_file_diffs)
    """The proposed changes."""
    locations: tuple[FileLocation, ...] = attrs.field(
        default=(), converter=_locations, validator=_file_locations
    )
    """Files the call modifies, for follow-along."""


ToolCallView: TypeAlias = GenericCallView | TerminalCallView | DiffCallView
"""The closed union of pending-call render intents."""


# --- result views (completed) -----------------------------------------------------------------


@final
@attrs.frozen(kw_only=True)
class GenericResultView:
    """The default completed card."""

    card: Literal["generic"] = attrs.field(validator=_card("generic"))
    title: str | None = attrs.field(default=None, validator=_optional_str)
    """A replacement title; ``None`` keeps the pending one."""
    content: tuple[ContentBlock, ...] | None = attrs.field(
        default=None,
        converter=_optional_blocks,
        validator=_tuple_of(TextContent, ImageContent, item="content block", optional=True),
    )
    """Reformatted content; ``None`` shows the raw result content (``()`` shows nothing)."""


@final
@attrs.frozen(kw_only=True)
class TerminalResultView:
    """A finished shell command: its captured output and how it ended."""

    card: Literal["terminal"] = attrs.field(validator=_card("terminal"))
    title: str | None = attrs.field(default=None, validator=_optional_str)
    """A replacement title; ``None`` keeps the pending one."""
    output: str | None = attrs.field(default=None, validator=_optional_str)
    """The captured output (a UI without terminal cards gets it as a console block)."""
    exit_code: int | None = attrs.field(default=None, validator=_optional_int)
    """The exit status, when the process exited."""
    signal: str | None = attrs.field(default=None, validator=_optional_str)
    """The signal that ended the process, when one did (e.g. ``"SIGTERM"``)."""


@final
@attrs.frozen(kw_only=True)
class DiffResultView:
    """A completed file mutation; re-sent because a result replaces the card's content."""

    card: Literal["diff"] = attrs.field(validator=_card("diff"))
    title: str | None = attrs.field(default=None, validator=_optional_str)
    """A replacement title; ``None`` keeps the pending one."""
    diffs: tuple[FileDiff, ...] = attrs.field(converter=_diffs, validator=_file_diffs)
    """The applied changes."""


ToolResultView: TypeAlias = GenericResultView | TerminalResultView | DiffResultView
"""The closed union of completed-call render intents."""


@final
@attrs.frozen
class ToolResult:
    """What ``present_result(args, result)`` receives: the outcome of ``execute``."""

    content: tuple[ContentBlock, ...] = attrs.field(converter=_blocks, validator=_content_blocks)
    """The model-facing content."""
    is_error: bool = attrs.field(validator=_exact(bool, label="a bool"))
    """Whether the call failed."""
    meta: FrozenJson = attrs.field(default=None, converter=_frozen, validator=_lossless)
    """The tool's private presentation payload (deep-frozen lossless JSON), or ``None``."""


_CALL_VIEWS: Final = (GenericCallView, TerminalCallView, DiffCallView)
_RESULT_VIEWS: Final = (GenericResultView, TerminalResultView, DiffResultView)


def is_call_view(obj: object) -> TypeGuard[ToolCallView]:
    """Whether ``obj`` is one of the :data:`ToolCallView` classes (exactly, not a subclass)."""
    return type(obj) in _CALL_VIEWS


def is_result_view(obj: object) -> TypeGuard[ToolResultView]:
    """Whether ``obj`` is one of the :data:`ToolResultView` classes (exactly, not a subclass)."""
    return type(obj) in _RESULT_VIEWS


# --- JSON -------------------------------------------------------------------------------------


def _location_to_json(location: FileLocation) -> dict[str, Any]:
    return {"path": location.path, "line": location.line}


def _diff_to_json(diff: FileDiff) -> dict[str, Any]:
    return {"path": diff.path, "old_text": diff.old_text, "new_text": diff.new_text}


def view_to_json(view: ToolCallView | ToolResultView) -> dict[str, Any]:
    """The JSON object of a view: ``phase``, ``card`` and every field, snake_case."""
    match view:
        case GenericCallView():
            return {
                "phase": "call",
                "card": view.card,
                "title": view.title,
                "kind": view.kind,
                "raw_input": thaw(view.raw_input),
                "content": [content_to_json(block) for block in view.content],
                "locations": [_location_to_json(location) for location in view.locations],
            }
        case TerminalCallView():
            return {
                "phase": "call",
                "card": view.card,
                "title": view.title,
                "description": view.description,
                "cwd": view.cwd,
            }
        case DiffCallView():
            return {
                "phase": "call",
                "card": view.card,
                "title": view.title,
                "diffs": [_diff_to_json(diff) for diff in view.diffs],
                "locations": [_location_to_json(location) for location in view.locations],
            }
        case GenericResultView():
            return {
                "phase": "result",
                "card": view.card,
                "title": view.title,
                "content": None
                if view.content is None
                else [content_to_json(block) for block in view.content],
            }
        case TerminalResultView():
            return {
                "phase": "result",
                "card": view.card,
                "title": view.title,
                "output": view.output,
                "exit_code": view.exit_code,
                "signal": view.signal,
            }
        case DiffResultView():
            return {
                "phase": "result",
                "card": view.card,
                "title": view.title,
                "diffs": [_diff_to_json(diff) for diff in view.diffs],
            }
        case _:
            assert_never(view)


_FIELDS: Final[dict[tuple[str, str], tuple[str, ...]]] = {
    ("call", "generic"): ("title", "kind", "raw_input", "content", "locations"),
    ("call", "terminal"): ("title", "description", "cwd"),
    ("call", "diff"): ("title", "diffs", "locations"),
    ("result", "generic"): ("title", "content"),
    ("result", "terminal"): ("title", "output", "exit_code", "signal"),
    ("result", "diff"): ("title", "diffs"),
}


def _is_object(value: object) -> TypeGuard[Mapping[str, Any]]:
    return type(value) is dict or type(value) is FrozenDict


def _array(data: Mapping[str, Any], key: str) -> Sequence[Any]:
    value = data[key]
    if type(value) is not list and type(value) is not tuple:
        raise ValueError(f"{key!r} must be an array, got {type(value).__name__}")
    return value


def _record(item: object, where: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    if not _is_object(item) or set(item) != set(keys):
        raise ValueError(f"{where} must be an object with exactly the keys {', '.join(keys)}")
    return item


def _locations_from_json(data: Mapping[str, Any]) -> list[FileLocation]:
    result = []
    for index, item in enumerate(_array(data, "locations")):
        record = _record(item, f"'locations[{index}]'", ("path", "line"))
        result.append(FileLocation(path=record["path"], line=record["line"]))
    return result


def _diffs_from_json(data: Mapping[str, Any]) -> list[FileDiff]:
    result = []
    for index, item in enumerate(_array(data, "diffs")):
        record = _record(item, f"'diffs[{index}]'", ("path", "old_text", "new_text"))
        result.append(
            FileDiff(path=record["path"], old_text=record["old_text"], new_text=record["new_text"])
        )
    return result


def _content_from_json(data: Mapping[str, Any]) -> list[ContentBlock]:
    return [content_from_json(item) for item in _array(data, "content")]


def _build(phase: str, card: str, data: Mapping[str, Any]) -> ToolCallView | ToolResultView:
    if phase == "call":
        if card == "generic":
            return GenericCallView(
                card="generic",
                title=data["title"],
                kind=data["kind"],
                raw_input=data["raw_input"],
                content=_content_from_json(data),
                locations=_locations_from_json(data),
            )
        if card == "terminal":
            return TerminalCallView(
                card="terminal",
                title=data["title"],
                description=data["description"],
                cwd=data["cwd"],
            )
        return DiffCallView(
            card="diff",
            title=data["title"],
            diffs=_diffs_from_json(data),
            locations=_locations_from_json(data),
        )
    if card == "generic":
        return GenericResultView(
            card="generic",
            title=data["title"],
            content=None if data["content"] is None else _content_from_json(data),
        )
    if card == "terminal":
        return TerminalResultView(
            card="terminal",
            title=data["title"],
            output=data["output"],
            exit_code=data["exit_code"],
            signal=data["signal"],
        )
    return DiffResultView(card="diff", title=data["title"], diffs=_diffs_from_json(data))


def view_from_json(data: object) -> ToolCallView | ToolResultView:
    """The view of a JSON object made by :func:`view_to_json` (plain or frozen JSON).

    Raises:
        ValueError: ``data`` is not exactly such an object (a key missing or extra, a field
            of the wrong type, an unknown ``phase``/``card``); the message says which.
    """
    if not _is_object(data):
        raise ValueError(f"not a tool view: expected an object, got {type(data).__name__}")
    phase, card = data.get("phase"), data.get("card")
    if type(phase) is not str or type(card) is not str or (phase, card) not in _FIELDS:
        raise ValueError(f"not a tool view: unknown phase {phase!r} / card {card!r}")
    fields = _FIELDS[phase, card]
    expected = {"phase", "card", *fields}
    missing = [key for key in ("phase", "card", *fields) if key not in data]
    extra = [key for key in data if key not in expected]
    if missing or extra:
        problems = [f"missing key {key!r}" for key in missing]
        problems += [f"unexpected key {key!r}" for key in extra]
        raise ValueError(f"not a {card} {phase} view: {'; '.join(problems)}")
    try:
        return _build(phase, card, data)
    except (TypeError, ValueError) as error:
        raise ValueError(f"not a {card} {phase} view: {error}") from error
