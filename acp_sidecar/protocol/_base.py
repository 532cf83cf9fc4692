"""The base class of every ACP wire type: repr and equality by fields, shared.

attrs compiling ``__repr__``/``__eq__`` per class doubled this package's import time, so the
classes use ``@attrs.frozen(repr=False, eq=False)`` and inherit these. The converter keys on it.
"""

import enum
from typing import Any, Final

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


class Unset(enum.Enum):
    """A patch field's "unchanged": a field defaulting to :data:`UNSET` is omitted while unset
    and sent otherwise, ``None`` as ``null`` (v2's "cleared")."""

    UNSET = "unset"


UNSET: Final = Unset.UNSET
"""The one :class:`Unset` value."""
