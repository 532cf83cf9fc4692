"""The checkers argument validation is built from: one per JSON type, and their messages.

A checker appends violations and returns the narrowed frozen value; paths are formatted only
on error. ``bool`` is not a number; NaN and ±Infinity are rejected everywhere.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeAlias, assert_never

from acp_sidecar.tools.json_values import (
    FrozenDict,
    FrozenJson,
    JsonValueError,
    freeze_json,
    json_faults,
    json_type,
    pointer_token,
)

Check: TypeAlias = Callable[[Any, str, "str | int | None", list[str]], object]
"""``(value, parent path, key, violations) -> narrowed frozen value`` (see the module doc)."""


class NoDefault(enum.Enum):
    """The type of :data:`NO_DEFAULT`, so that "no default" differs from ``default=None``."""

    NO_DEFAULT = "NO_DEFAULT"


NO_DEFAULT: Final = NoDefault.NO_DEFAULT
"""The default of a property that has none (``SchemaProp.default``, an object checker's field)."""


def check_string(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
    if type(value) is str:
        return value
    errors.append(f"{_at(parent, key)}: expected string, got {describe(value)}")
    return None


def enum_checker(allowed: tuple[str, ...]) -> Check:
    members = frozenset(allowed)
    expected = f"expected one of {quote_all(allowed)}"

    def check(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
        if type(value) is str:
            if value in members:
                return value
            errors.append(f"{_at(parent, key)}: {expected}, got {quote(value)}")
            return None
        errors.append(f"{_at(parent, key)}: expected string, got {describe(value)}")
        return None

    return check


def check_number(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
    kind = type(value)
    if kind is int or (kind is float and math.isfinite(value)):
        return value
    errors.append(f"{_at(parent, key)}: expected number, got {describe(value)}")
    return None


def check_integer(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
    kind = type(value)
    if kind is int:
        return value
    if kind is float and value.is_integer():
        return int(value)
    errors.append(f"{_at(parent, key)}: expected integer, got {describe(value)}")
    return None


def check_boolean(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
    if type(value) is bool:
        return value
    errors.append(f"{_at(parent, key)}: expected boolean, got {describe(value)}")
    return None


def object_checker(properties: Sequence[tuple[str, Check, bool, object]]) -> Check:
    """The checker of an object with these ``(name, checker, required, default)`` properties
    (``default`` is :data:`NO_DEFAULT` for none); unknown properties are violations."""
    fields = tuple(
        (name, pointer_token(name), sub, required, default)
        for name, sub, required, default in properties
    )
    known = frozenset(name for name, *_ in properties)

    def check(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
        kind = type(value)
        if kind is not dict and kind is not FrozenDict:
            errors.append(f"{_at(parent, key)}: expected object, got {describe(value)}")
            return None
        path = parent if key is None else f"{parent}/{key}"
        out: dict[str, object] = {}
        seen = 0
        for name, escaped, sub, required, default in fields:
            if name in value:
                seen += 1
                out[name] = sub(value[name], path, escaped, errors)
            elif required:
                errors.append(f"{path}/{escaped}: required property missing")
            elif default is not NO_DEFAULT:
                out[name] = default
        if seen != len(value):
            for extra in value:
                if type(extra) is not str:
                    errors.append(f"{path or '/'}: property name {extra!r} is not a string")
                elif extra not in known:
                    errors.append(f"{path}/{pointer_token(extra)}: unexpected property")
        return FrozenDict.from_frozen(out)  # every value was checked and frozen above

    return check


def array_checker(sub: Check) -> Check:
    """The checker of an array whose every item ``sub`` checks."""

    def check(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
        kind = type(value)
        if kind is not list and kind is not tuple:
            errors.append(f"{_at(parent, key)}: expected array, got {describe(value)}")
            return None
        path = parent if key is None else f"{parent}/{key}"
        return tuple([sub(item, path, index, errors) for index, item in enumerate(value)])

    return check


def check_free_object(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
    if type(value) is not dict and type(value) is not FrozenDict:
        errors.append(f"{_at(parent, key)}: expected object, got {describe(value)}")
        return None
    return check_any(value, parent, key, errors)


def check_free_array(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
    if type(value) is not list and type(value) is not tuple:
        errors.append(f"{_at(parent, key)}: expected array, got {describe(value)}")
        return None
    return check_any(value, parent, key, errors)


def check_any(value: Any, parent: str, key: str | int | None, errors: list[str]) -> FrozenJson:
    """Any lossless JSON value, deep-frozen (free-form objects and arrays, defaults)."""
    try:
        return freeze_json(value)
    except JsonValueError:
        pass
    for path, fault, subject in json_faults(value, parent if key is None else f"{parent}/{key}"):
        match fault:
            case "value":
                errors.append(f"{path}: expected JSON value, got {describe(subject)}")
            case "key":
                errors.append(f"{path}: property name {subject!r} is not a string")
            case "cycle":
                errors.append(f"{path}: cycle")
            case _:
                assert_never(fault)
    return None


# --- messages ------------------------------------------------------------------------------

_QUOTE_LIMIT: Final = 64


def _at(parent: str, key: str | int | None) -> str:
    """The display path of a value: its JSON pointer, with the root shown as ``/``."""
    return (parent if key is None else f"{parent}/{key}") or "/"


def quote(text: object) -> str:
    """A string as JSON, cut after :data:`_QUOTE_LIMIT` characters (a model may send a lot)."""
    text = str(text)
    if len(text) > _QUOTE_LIMIT:
        text = text[:_QUOTE_LIMIT] + "…"
    return json.dumps(text, ensure_ascii=False)


def quote_all(texts: Sequence[str]) -> str:
    return ", ".join(quote(text) for text in texts)


def describe(value: object) -> str:
    """The JSON name of a value's type, as messages print it after "got".

    The DSL's messages call every JSON number a ``number`` (an ``integer`` prop rejects
    ``3.5`` as "got number"), and name NaN and the infinities, which JSON cannot hold.
    """
    if type(value) is float and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    name = json_type(value)
    if name is None:
        return f"non-JSON {type(value).__name__}"
    return "number" if name == "integer" else name
