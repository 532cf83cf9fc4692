"""Lossless JSON values: checking, detached deep-frozen copies, and thawing.

Invariants:
- A value is *lossless JSON* when it is built only from ``None``, ``bool``, ``int``, finite
  ``float``, ``str``, ``list``/``tuple`` (arrays) and ``dict`` with ``str`` keys (objects) —
  exactly those types, not subclasses (an ``IntEnum`` or a ``defaultdict`` would not survive a
  round trip) — and has no cycles. ``FrozenDict`` counts as an object.
- :func:`freeze_json` returns a detached copy in which every object is a :class:`FrozenDict`
  and every array a ``tuple``; nothing reachable from it can be mutated through the normal
  API, and it serialises with :mod:`json` unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any, NoReturn, TypeAlias

JsonValue: TypeAlias = (
    "None | bool | int | float | str | list[JsonValue] | tuple[JsonValue, ...] "
    "| dict[str, JsonValue] | FrozenDict"
)
"""A JSON value as Python holds it (mutable or frozen containers)."""

FrozenJson: TypeAlias = "None | bool | int | float | str | tuple[FrozenJson, ...] | FrozenDict"
"""A deep-frozen JSON value."""


class FrozenDict(dict[str, Any]):
    """A ``dict`` that refuses mutation; ``json.dumps`` serialises it like any dict.

    Python cannot make an object truly immutable (``dict.__setitem__(d, k, v)`` still works);
    this closes every ordinary path, which is what a snapshot needs to stop accidents.
    """

    __slots__ = ()

    def _refuse(self, *_args: object, **_kwargs: object) -> NoReturn:
        raise TypeError("this JSON object is a frozen snapshot and cannot be changed")

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

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, _memo: dict[int, object]) -> FrozenDict:
        return self

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[str, Any]]]:
        return (FrozenDict, (dict(self),))


class JsonValueError(ValueError):
    """A value is not lossless JSON; ``violations`` lists each problem with its path."""

    def __init__(self, violations: list[str]) -> None:
        self.violations: tuple[str, ...] = tuple(violations)
        super().__init__("; ".join(violations))


def _type_name(value: object) -> str:
    return type(value).__name__


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _walk(value: object, path: str, active: set[int]) -> Iterator[str]:
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is str:
        return
    if kind is float:
        if not math.isfinite(value):  # type: ignore[arg-type]
            yield f"{path or '/'}: {value!r} is not a JSON number"
        return
    if kind is dict or kind is FrozenDict or kind is list or kind is tuple:
        marker = id(value)
        if marker in active:
            yield f"{path or '/'}: cycle"
            return
        active.add(marker)
        if kind is dict or kind is FrozenDict:
            for key, item in value.items():  # type: ignore[attr-defined]
                if type(key) is not str:
                    yield f"{path or '/'}: key {key!r} is not a string"
                    continue
                yield from _walk(item, f"{path}/{_escape(key)}", active)
        else:
            for index, item in enumerate(value):  # type: ignore[arg-type]
                yield from _walk(item, f"{path}/{index}", active)
        active.discard(marker)
        return
    yield f"{path or '/'}: {_type_name(value)} is not JSON"


def json_violations(value: object) -> list[str]:
    """Every reason ``value`` is not lossless JSON, each with its JSON-pointer path."""
    return list(_walk(value, "", set()))


_SCALARS = frozenset({bool, int, str, type(None)})


def _freeze(value: Any, path: list[str], active: set[int], violations: list[str]) -> FrozenJson:
    """Freeze ``value`` while checking it; problems go to ``violations`` (paths built lazily)."""
    kind = type(value)
    if kind in _SCALARS:
        return value  # type: ignore[no-any-return]
    if kind is float:
        if not math.isfinite(value):
            violations.append(f"{''.join(path) or '/'}: {value!r} is not a JSON number")
        return value  # type: ignore[no-any-return]
    if kind is dict or kind is FrozenDict or kind is list or kind is tuple:
        marker = id(value)
        if marker in active:
            violations.append(f"{''.join(path) or '/'}: cycle")
            return None
        active.add(marker)
        try:
            if kind is dict or kind is FrozenDict:
                frozen: dict[str, Any] = {}
                for key, item in value.items():
                    if type(key) is not str:
                        violations.append(f"{''.join(path) or '/'}: key {key!r} is not a string")
                        continue
                    path.append("/" + _escape(key))
                    frozen[key] = _freeze(item, path, active, violations)
                    path.pop()
                return FrozenDict(frozen)
            items = []
            for index, item in enumerate(value):
                path.append(f"/{index}")
                items.append(_freeze(item, path, active, violations))
                path.pop()
            return tuple(items)
        finally:
            active.discard(marker)
    violations.append(f"{''.join(path) or '/'}: {_type_name(value)} is not JSON")
    return None


def freeze_json(value: object) -> FrozenJson:
    """A detached deep-frozen copy of ``value``, checked in the same walk.

    The spec asks for a check before and after cloning, against containers whose accessors
    could answer differently the second time. Only the exact built-in types are accepted here
    (no subclasses, no custom mappings), and they have no such accessors, so one walk that
    checks what it copies gives the same guarantee at half the cost.

    Raises:
        JsonValueError: ``value`` is not lossless JSON (every problem listed with its path).
    """
    violations: list[str] = []
    frozen = _freeze(value, [], set(), violations)
    if violations:
        raise JsonValueError(violations)
    return frozen


def thaw(value: object) -> Any:
    """A mutable deep copy (``dict`` / ``list``) of a JSON value, frozen or not."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(item) for item in value]
    return value
