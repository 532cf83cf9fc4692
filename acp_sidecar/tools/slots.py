"""Frozen slotted attrs instances built field by field, for the hot paths (a replay's records,
cards and results) whose values are already checked.

An instance from ``cls.__new__(cls)`` with every setter of :func:`field_setters` applied is the
one ``cls(...)`` makes of the same values only where its converters and validators would change
and refuse nothing: they are not run. A caller unpacks the setters by name in field order, so a
field added to the class fails at import rather than being left unset.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

__all__ = ["field_setters"]


def field_setters(cls: type) -> tuple[Callable[[object, object], None], ...]:
    """What sets each field of the frozen slotted attrs class ``cls``, in field order: its
    slot's own descriptor (the bound ``object.__setattr__`` attrs calls per field costs twice
    this)."""
    return tuple(getattr(cls, field.name).__set__ for field in attrs.fields(cls))
