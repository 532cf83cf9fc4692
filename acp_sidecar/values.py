"""Repr, equality and hash by fields, shared by the package's attrs classes (the wire types
have their own, ``protocol._base.WireType``).

attrs compiles ``__repr__``, ``__eq__`` and ``__hash__`` for each class it builds, most of a
class's cost on the cold start. A class decorated ``@attrs.frozen(repr=False, eq=False)`` that
inherits :class:`Value`, or ``@attrs.define(repr=False, eq=False)`` inheriting :class:`State`,
keeps what attrs' own methods do: the fields' ``repr``/``eq``/``hash`` flags and ``eq_key``, the
same text, ``NotImplemented`` for another class, and a mutable class unhashable.
"""

from __future__ import annotations

import threading
from typing import Any

_repring = threading.local()


def _compared(value: Any, a: Any) -> Any:
    field = getattr(value, a.name)
    return field if a.eq_key is None else a.eq_key(field)


class State:
    """Repr and equality by fields; unhashable, as attrs makes a mutable class with ``eq``."""

    __slots__ = ()

    def __repr__(self) -> str:
        shown = getattr(_repring, "ids", None)
        if shown is None:
            shown = _repring.ids = set()
        if id(self) in shown:
            return "..."
        shown.add(id(self))
        try:
            fields = ", ".join(
                f"{a.name}={(a.repr if callable(a.repr) else repr)(getattr(self, a.name))}"
                for a in self.__attrs_attrs__  # type: ignore[attr-defined]
                if a.repr
            )
        finally:
            shown.discard(id(self))
        return f"{self.__class__.__qualname__.rsplit('>.', 1)[-1]}({fields})"

    def __eq__(self, other: object) -> bool:
        # Field by field, as attrs' ``a == b and ...``: no tuple's identity shortcut.
        if other.__class__ is not self.__class__:
            return NotImplemented
        same: Any = True
        for a in self.__attrs_attrs__:  # type: ignore[attr-defined]
            if a.eq:
                same = _compared(self, a) == _compared(other, a)
                if not same:
                    break
        return same  # type: ignore[no-any-return]


class Value(State):
    """Repr, equality and hash by fields, as attrs makes a frozen class."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(
            (
                self.__class__,
                *(
                    _compared(self, a)
                    for a in self.__attrs_attrs__  # type: ignore[attr-defined]
                    if (a.eq if a.hash is None else a.hash)
                ),
            )
        )
