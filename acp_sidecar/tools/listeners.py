"""Who hears something: each listener added with its own stop, heard in the order added; one
that raises is logged and the rest are still heard."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")


class Listeners(Generic[T]):
    """The listeners of one thing (iterating gives a copy: one may stop while heard)."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: list[T] = []

    def add(self, listener: T) -> Callable[[], None]:
        """Hear ``listener`` from now on; returns what stops it."""
        self._items.append(listener)
        return lambda: self.discard(listener)

    def discard(self, listener: T) -> None:
        """Hear ``listener`` no more (nothing if it was not heard)."""
        if listener in self._items:
            self._items.remove(listener)

    def __iter__(self) -> Iterator[T]:
        return iter(tuple(self._items))

    def __bool__(self) -> bool:
        return bool(self._items)


def hear(listener: Callable[..., None], *args: object, what: str) -> None:
    """Call ``listener``; what it raises is logged (as ``what`` raised), never passed on."""
    try:
        listener(*args)
    except Exception:
        logger.exception("%s raised", what)
