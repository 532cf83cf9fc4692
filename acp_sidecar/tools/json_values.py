"""Lossless JSON values: checking, detached deep-frozen copies, thawing, and the shared helpers.

Exactly the JSON types, not subclasses (an ``IntEnum`` would not round-trip), and no cycles.
A :class:`FrozenDict` is frozen lossless JSON by construction, so it is never walked again.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any, Literal, NoReturn, TypeAlias, assert_never

JsonValue: TypeAlias = (
    "None | bool | int | float | str | list[JsonValue] | tuple[JsonValue, ...] "
    "| dict[str, JsonValue] | FrozenDict"
)
"""A JSON value as Python holds it (mutable or frozen containers)."""

FrozenJson: TypeAlias = "None | bool | int | float | str | tuple[FrozenJson, ...] | FrozenDict"
"""A deep-frozen JSON value."""


class ImmutableDict(dict[str, Any]):
    """A ``dict`` that refuses mutation, holding any values (see :class:`FrozenDict` for JSON).

    Python cannot make an object truly immutable (``dict.__setitem__(d, k, v)`` still works);
    this closes every ordinary path, which is what a snapshot needs to stop accidents.
    """

    __slots__ = ()

    def _refuse(self, *_args: object, **_kwargs: object) -> NoReturn:
        raise TypeError("this mapping is a frozen snapshot and cannot be changed")

    __setitem__ = _refuse
    __delitem__ = _refuse
    __ior__ = _refuse
    clear = _refuse
    pop = _refuse
    popitem = _refuse
    setdefault = _refuse
    update = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: kv[0])))

    def __copy__(self) -> ImmutableDict:
        return self

    def __deepcopy__(self, _memo: dict[int, object]) -> ImmutableDict:
        return self


class FrozenDict(ImmutableDict):
    """A deep-frozen JSON object; ``json.dumps`` serialises it like any dict.

    ``FrozenDict(mapping)`` checks ``mapping`` as lossless JSON and deep-freezes its values
    (raising :class:`JsonValueError`), so every instance is deep-frozen JSON.
    """

    __slots__ = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        frozen = freeze_json(dict(*args, **kwargs))
        dict.__init__(self, frozen)  # type: ignore[arg-type]

    @classmethod
    def from_frozen(cls, items: dict[str, Any]) -> FrozenDict:
        """Wrap ``items`` without checking them.

        Only for callers that built ``items`` from values that are already deep-frozen
        lossless JSON (a fresh :mod:`json` parse, a checked copy): the invariant is theirs.
        """
        instance = cls.__new__(cls)
        dict.update(instance, items)
        return instance


class JsonValueError(ValueError):
    """A value is not lossless JSON; ``violations`` lists each problem with its path."""

    def __init__(self, violations: list[str]) -> None:
        self.violations: tuple[str, ...] = tuple(violations)
        super().__init__("; ".join(violations))


def pointer_token(key: str) -> str:
    """``key`` as one JSON-pointer reference token (RFC 6901: ``~`` → ``~0``, ``/`` → ``~1``)."""
    return key.replace("~", "~0").replace("/", "~1")


def json_type(value: object) -> str | None:
    """The JSON Schema type of a value built from the lossless JSON types, by its top level.

    ``integer`` for an ``int``, ``number`` for any ``float`` (finite or not: callers that word
    NaN differently check for it first), ``None`` for a type that is not JSON at all (exact
    types, as everywhere in this module: ``True`` is a ``boolean``, not an ``integer``).
    """
    return _JSON_TYPES.get(type(value))


_JSON_TYPES: dict[type, str] = {
    type(None): "null",
    bool: "boolean",
    int: "integer",
    float: "number",
    str: "string",
    list: "array",
    tuple: "array",
    dict: "object",
    FrozenDict: "object",
}

JsonFault: TypeAlias = Literal["value", "key", "cycle"]
"""Why a place is not lossless JSON: a value of a non-JSON type (or a non-finite float), an
object key that is not a string, or a container that contains itself."""


def json_faults(value: object, path: str = "") -> Iterator[tuple[str, JsonFault, object]]:
    """Every place ``value`` is not lossless JSON, in document order.

    Yields ``(display path, fault, subject)``: the JSON pointer of the place (``/`` for the
    root; for a bad key, the object holding it), the fault, and the offending value or key.
    Callers word the message; the walk is the one definition of lossless JSON.
    """
    return _walk(value, path, set())


def _walk(value: object, path: str, active: set[int]) -> Iterator[tuple[str, JsonFault, object]]:
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return
    if kind is float:
        if not math.isfinite(value):  # type: ignore[arg-type]
            yield path or "/", "value", value
        return
    if kind is FrozenDict:
        return  # lossless JSON by construction
    if kind is dict or kind is list or kind is tuple:
        marker = id(value)
        if marker in active:
            yield path or "/", "cycle", value
            return
        active.add(marker)
        if kind is dict:
            for key, item in value.items():  # type: ignore[attr-defined]
                if type(key) is not str:
                    yield path or "/", "key", key
                    continue
                yield from _walk(item, f"{path}/{pointer_token(key)}", active)
        else:
            for index, item in enumerate(value):  # type: ignore[arg-type]
                yield from _walk(item, f"{path}/{index}", active)
        active.discard(marker)
        return
    yield path or "/", "value", value


def json_violations(value: object) -> list[str]:
    """Every reason ``value`` is not lossless JSON, each with its JSON-pointer path."""
    return [_violation(path, fault, subject) for path, fault, subject in json_faults(value)]


def _violation(path: str, fault: JsonFault, subject: object) -> str:
    match fault:
        case "value":
            if type(subject) is float:
                return f"{path}: {subject!r} is not a JSON number"
            return f"{path}: {type(subject).__name__} is not JSON"
        case "key":
            return f"{path}: key {subject!r} is not a string"
        case "cycle":
            return f"{path}: cycle"
        case _:
            assert_never(fault)


_SCALARS = frozenset({bool, int, str, type(None)})


class _NotJson(Exception):
    """Raised inside the fast walk at the first problem; the slow walk then names them all."""


def _freeze(value: Any, active: set[int]) -> FrozenJson:
    kind = type(value)
    if kind in _SCALARS or kind is FrozenDict:
        return value  # type: ignore[no-any-return]
    if kind is float:
        if not math.isfinite(value):
            raise _NotJson
        return value  # type: ignore[no-any-return]
    if kind is dict or kind is list or kind is tuple:
        marker = id(value)
        if marker in active:
            raise _NotJson
        active.add(marker)
        if kind is dict:
            frozen: dict[str, Any] = {}
            for key, item in value.items():
                if type(key) is not str:
                    raise _NotJson
                frozen[key] = _freeze(item, active)
            result: FrozenJson = FrozenDict.from_frozen(frozen)
        else:
            result = tuple([_freeze(item, active) for item in value])
        active.discard(marker)
        return result
    raise _NotJson


def freeze_json(value: object) -> FrozenJson:
    """A detached deep-frozen copy of ``value``, checked in the same walk.

    The spec asks for a check before and after cloning, against containers whose accessors
    could answer differently the second time. Only the exact built-in types are accepted here
    (no subclasses, no custom mappings), and they have no such accessors, so one walk that
    checks what it copies gives the same guarantee at half the cost. Paths are worked out
    only when something is wrong. A :class:`FrozenDict` is returned as it is.

    Raises:
        JsonValueError: ``value`` is not lossless JSON (every problem listed with its path).
    """
    try:
        return _freeze(value, set())
    except _NotJson:
        raise JsonValueError(json_violations(value)) from None


def thaw(value: object) -> Any:
    """A mutable deep copy (``dict`` / ``list``) of a JSON value, frozen or not."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    return value
