"""The base class of every ACP wire type.

Why it exists: attrs compiles ``__repr__`` and ``__eq__`` per class, which doubled the import
time of this package (~70 classes). The wire types therefore use
``@attrs.frozen(repr=False, eq=False)`` and inherit the generic, field-driven methods below;
attrs still generates ``__init__`` and the slots. It is also what the converter keys on: only
subclasses of :class:`WireType` get the camelCase hooks.
"""

from typing import Any

import attrs


def _names(value: Any) -> tuple[str, ...]:
    return tuple(a.name for a in attrs.fields(value.__class__))


def _values(value: Any) -> tuple[Any, ...]:
    return tuple(getattr(value, name) for name in _names(value))


class WireType:
    """An ACP wire value: repr, equality and hash by fields, like attrs' own."""

    __slots__ = ()

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={getattr(self, name)!r}" for name in _names(self))
        return f"{self.__class__.__name__}({args})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return _values(self) == _values(other)

    def __hash__(self) -> int:
        return hash((self.__class__, *_values(self)))
