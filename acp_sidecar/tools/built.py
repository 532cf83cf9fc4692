"""Views and results built with their validators' checks done inline, for the plain values that
presenters and the translator pass most (a ``str`` title, frozen arguments, a tuple of blocks).

Each builder returns what its class's constructor returns for the same values, an equal
instance with the very same field values; for any value it does not see as plainly valid it
calls that constructor, so a bad value raises the constructor's own error. A fast path here
must accept only values that every converter of the field leaves as they are and every
validator of it accepts: ``tests/tools/test_built.py`` compares each builder with its class.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from acp_sidecar.tools.content import CONTENT_BLOCK_TYPES, ContentBlock
from acp_sidecar.tools.json_values import FrozenDict, JsonValue
from acp_sidecar.tools.presentation import (
    TOOL_CALL_KINDS,
    DiffCallView,
    FileDiff,
    GenericCallView,
    ToolCallKind,
    ToolResult,
)
from acp_sidecar.tools.slots import field_setters

__all__ = ["diff_call_view", "file_diff", "generic_call_view", "tool_result"]

_new = object.__new__
(
    _set_generic_card,
    _set_generic_title,
    _set_generic_kind,
    _set_generic_raw_input,
    _set_generic_content,
    _set_generic_locations,
) = field_setters(GenericCallView)
_set_diff_card, _set_diff_title, _set_diffs, _set_diff_locations = field_setters(DiffCallView)
_set_path, _set_old_text, _set_new_text = field_setters(FileDiff)
_set_content, _set_is_error, _set_meta = field_setters(ToolResult)
_BLOCK_TYPES: Final = frozenset(CONTENT_BLOCK_TYPES)
_KINDS: Final = frozenset(TOOL_CALL_KINDS)


_FILE_DIFF: Final = frozenset({FileDiff})


def _all_of(items: tuple[object, ...], kinds: frozenset[type]) -> bool:
    """Whether every item is of one of ``kinds`` exactly."""
    for item in items:  # noqa: SIM110 - all() over a generator costs more per card
        if type(item) not in kinds:
            return False
    return True


def _frozen_or_none(value: object) -> bool:
    return value is None or type(value) is FrozenDict


def generic_call_view(
    title: str, kind: ToolCallKind | None = None, raw_input: JsonValue = None
) -> GenericCallView:
    """``GenericCallView(title=title, kind=kind, raw_input=raw_input)``."""
    given: object = kind  # checked as the validator does: a caller may pass anything
    if (
        type(title) is str
        and (given is None or (type(given) is str and given in _KINDS))
        and _frozen_or_none(raw_input)
    ):
        view: GenericCallView = _new(GenericCallView)
        _set_generic_card(view, "generic")
        _set_generic_title(view, title)
        _set_generic_kind(view, kind)
        _set_generic_raw_input(view, raw_input)
        _set_generic_content(view, ())
        _set_generic_locations(view, ())
        return view
    return GenericCallView(title=title, kind=kind, raw_input=raw_input)


def file_diff(path: str, old_text: str | None, new_text: str) -> FileDiff:
    """``FileDiff(path=path, old_text=old_text, new_text=new_text)``."""
    if type(path) is str and type(new_text) is str and (old_text is None or type(old_text) is str):
        diff: FileDiff = _new(FileDiff)
        _set_path(diff, path)
        _set_old_text(diff, old_text)
        _set_new_text(diff, new_text)
        return diff
    return FileDiff(path=path, old_text=old_text, new_text=new_text)


def diff_call_view(title: str, diffs: Sequence[FileDiff]) -> DiffCallView:
    """``DiffCallView(title=title, diffs=diffs)``."""
    kind = type(diffs)
    if type(title) is str and (kind is tuple or kind is list):
        shown: tuple[object, ...] = tuple(diffs)  # checked here as the validator does
        if _all_of(shown, _FILE_DIFF):
            view: DiffCallView = _new(DiffCallView)
            _set_diff_card(view, "diff")
            _set_diff_title(view, title)
            _set_diffs(view, shown)
            _set_diff_locations(view, ())
            return view
    return DiffCallView(title=title, diffs=diffs)


def tool_result(content: Sequence[ContentBlock], is_error: bool, meta: Any = None) -> ToolResult:
    """``ToolResult(content=content, is_error=is_error, meta=meta)``."""
    if (
        type(content) is tuple
        and type(is_error) is bool
        and _frozen_or_none(meta)
        and _all_of(content, _BLOCK_TYPES)
    ):
        result: ToolResult = _new(ToolResult)
        _set_content(result, content)
        _set_is_error(result, is_error)
        _set_meta(result, meta)
        return result
    return ToolResult(content=content, is_error=is_error, meta=meta)
