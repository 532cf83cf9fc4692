"""The presentation vocabulary: ``card``-tagged render intents a tool returns for its calls.

Presenters are pure (they run live and on replay), so views are frozen values. The unions are
**closed** and the classes ``@final``: a new card kind must break every consumer's match.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, Literal, TypeAlias, TypeGuard, final, get_args

import attrs

from acp_sidecar.tools.content import CONTENT_BLOCK_TYPES, ContentBlock
from acp_sidecar.tools.json_values import (
    FrozenDict,
    FrozenJson,
    JsonValue,
    JsonValueError,
    freeze_json,
    json_violations,
)

ToolCallKind: TypeAlias = Literal[
    "read", "edit", "delete", "move", "search", "execute", "fetch", "other"
]
"""Picks the icon of a generic card."""

TOOL_CALL_KINDS: Final[tuple[ToolCallKind, ...]] = get_args(ToolCallKind)
"""Every :data:`ToolCallKind`, in declaration order."""

PlanPriority: TypeAlias = Literal["high", "medium", "low"]
"""How important a plan item is."""

PlanStatus: TypeAlias = Literal["pending", "in_progress", "completed"]
"""Where a plan item stands."""

PLAN_PRIORITIES: Final[tuple[PlanPriority, ...]] = get_args(PlanPriority)
PLAN_STATUSES: Final[tuple[PlanStatus, ...]] = get_args(PlanStatus)

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
_optional_str = attrs.validators.optional(_exact(str, label="a str or None"))
_optional_int = attrs.validators.optional(_exact(int, label="an int or None"))


def _kind(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is not None and (type(value) is not str or value not in TOOL_CALL_KINDS):
        choices = ", ".join(repr(kind) for kind in TOOL_CALL_KINDS)
        raise ValueError(
            f"{_where(instance, attribute)} must be one of {choices} or None, got {value!r}"
        )


def _non_negative(instance: object, attribute: attrs.Attribute[Any], value: int) -> None:
    if value < 0:
        raise ValueError(f"{_where(instance, attribute)} must not be negative, got {value!r}")


_line = attrs.validators.optional([_exact(int, label="an int or None"), _non_negative])


def _tuple_of(*kinds: type, item: str, or_none: bool = False) -> _Validator:
    """A validator accepting a tuple whose items are exactly of ``kinds``.

    ``or_none`` only words the message for a field wrapped in ``attrs.validators.optional``.
    """

    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if type(value) is not tuple:
            expected = f"a tuple of {item}s" + (" or None" if or_none else "")
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


_content_blocks = _tuple_of(*CONTENT_BLOCK_TYPES, item="content block")


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
    if value is None or type(value) is FrozenDict:
        return value  # what freeze_json returns for them, without its walk's set-up
    try:
        return freeze_json(value)
    except JsonValueError:
        return value  # type: ignore[return-value]


def _lossless(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if type(value) is FrozenDict:
        return  # lossless by construction (a stored call's arguments, a stored result's meta)
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


def _one_of(choices: tuple[str, ...]) -> _Validator:
    def check(instance: object, attribute: attrs.Attribute[Any], value: object) -> None:
        if type(value) is not str or value not in choices:
            listed = ", ".join(repr(choice) for choice in choices)
            raise ValueError(
                f"{_where(instance, attribute)} must be one of {listed}, got {value!r}"
            )

    return check


@final
@attrs.frozen
class PlanItem:
    """One task of a plan (the session's todo list)."""

    content: str = attrs.field(validator=_str)
    """What the task is, for a person."""
    priority: PlanPriority = attrs.field(validator=_one_of(PLAN_PRIORITIES))
    """How important it is."""
    status: PlanStatus = attrs.field(validator=_one_of(PLAN_STATUSES))
    """Where it stands."""


def _plan_items(value: Sequence[PlanItem]) -> tuple[PlanItem, ...]:
    return tuple(value) if type(value) is list else value  # type: ignore[return-value]


_file_locations = _tuple_of(FileLocation, item="FileLocation")
_file_diffs = _tuple_of(FileDiff, item="FileDiff")


# --- call views (pending) ---------------------------------------------------------------------


@final
@attrs.frozen(kw_only=True)
class GenericCallView:
    """The default pending card: a title, an icon, the raw input, optional content."""

    card: Literal["generic"] = attrs.field(default="generic", validator=_card("generic"))
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

    card: Literal["terminal"] = attrs.field(default="terminal", validator=_card("terminal"))
    title: str = attrs.field(validator=_str)
    """Usually the command line (the card shows it on one line)."""
    description: str | None = attrs.field(default=None, validator=_optional_str)
    """What the command is for, for a person."""
    cwd: str | None = attrs.field(default=None, validator=_optional_str)
    """The directory the command runs in (the card's header)."""
    command: str | None = attrs.field(default=None, validator=_optional_str)
    """The whole command as it will run: the card shows it as a code block, so a person
    asked about it sees every line of it, whatever the title shows."""


@final
@attrs.frozen(kw_only=True)
class DiffCallView:
    """A file create or modify: shown as an inline diff card."""

    card: Literal["diff"] = attrs.field(default="diff", validator=_card("diff"))
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

    card: Literal["generic"] = attrs.field(default="generic", validator=_card("generic"))
    title: str | None = attrs.field(default=None, validator=_optional_str)
    """A replacement title; ``None`` keeps the pending one."""
    content: tuple[ContentBlock, ...] | None = attrs.field(
        default=None,
        converter=_optional_blocks,
        validator=attrs.validators.optional(
            _tuple_of(*CONTENT_BLOCK_TYPES, item="content block", or_none=True)
        ),
    )
    """Reformatted content; ``None`` shows the raw result content (``()`` shows nothing)."""


@final
@attrs.frozen(kw_only=True)
class TerminalResultView:
    """A finished shell command: its captured output and how it ended."""

    card: Literal["terminal"] = attrs.field(default="terminal", validator=_card("terminal"))
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

    card: Literal["diff"] = attrs.field(default="diff", validator=_card("diff"))
    title: str | None = attrs.field(default=None, validator=_optional_str)
    """A replacement title; ``None`` keeps the pending one."""
    diffs: tuple[FileDiff, ...] = attrs.field(converter=_diffs, validator=_file_diffs)
    """The applied changes."""


@final
@attrs.frozen(kw_only=True)
class PlanResultView:
    """A completed call that replaces one of the session's plans whole: the checklist
    (``entries``) or, when ``markdown`` is set, the Markdown plan.

    The UI shows the plan in its own place (a panel, a checklist), not inside the card; the
    card keeps a short title and no content of its own.
    """

    card: Literal["plan"] = attrs.field(default="plan", validator=_card("plan"))
    title: str | None = attrs.field(default=None, validator=_optional_str)
    """A replacement title for the card; ``None`` keeps the pending one."""
    entries: tuple[PlanItem, ...] = attrs.field(
        default=(), converter=_plan_items, validator=_tuple_of(PlanItem, item="PlanItem")
    )
    """The new checklist, in order (empty: the checklist is cleared)."""
    markdown: str | None = attrs.field(default=None, validator=_optional_str)
    """A Markdown plan instead of a checklist: the whole document (blank: it is removed);
    ``None``: this view is the checklist. The two are separate plans, each replaced whole."""
    path: str | None = attrs.field(default=None, validator=_optional_str)
    """The absolute path of the file holding the Markdown plan, if it names one."""


ToolResultView: TypeAlias = GenericResultView | TerminalResultView | DiffResultView | PlanResultView
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
_RESULT_VIEWS: Final = (GenericResultView, TerminalResultView, DiffResultView, PlanResultView)


def is_call_view(obj: object) -> TypeGuard[ToolCallView]:
    """Whether ``obj`` is one of the :data:`ToolCallView` classes (exactly, not a subclass)."""
    return type(obj) in _CALL_VIEWS


def is_result_view(obj: object) -> TypeGuard[ToolResultView]:
    """Whether ``obj`` is one of the :data:`ToolResultView` classes (exactly, not a subclass)."""
    return type(obj) in _RESULT_VIEWS


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
_FLAT: Final = frozenset({str, int, bool})


def given_arguments(args: attrs.AttrsInstance) -> JsonValue:
    """A card's raw input: the fields of ``args`` (a tool's parameters class) that are not
    ``None``, as ``attrs.asdict`` with that filter gives them. Parameters of strings, whole
    numbers and booleans (most tools') are read field by field, without its walk, and come
    frozen; any other is left to the view's converter, as the dict ``attrs.asdict`` gives."""
    cls = type(args)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(field.name for field in attrs.fields(cls))
    given: dict[str, Any] = {}
    for name in names:
        value = getattr(args, name)
        if value is None:
            continue
        if type(value) not in _FLAT:
            return attrs.asdict(args, filter=lambda _a, v: v is not None)
        given[name] = value
    return FrozenDict.from_frozen(given)
