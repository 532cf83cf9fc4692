"""JSON text for the store and the wire: orjson writes, msgspec reads, the stdlib decides
wherever they would differ from it.

Invariant: what :func:`dumps` and :func:`loads` return or raise is what the stdlib does
(``allow_nan=False``, compact separators; NaN and Infinity refused when read), but for a
float's text (``1e-07`` may be ``1e-7``: the same number) and enum members and UUIDs (written
as their values; the stdlib refuses them). A fast path hands over what it cannot stand for.
:func:`stdlib_bytes` gives the stdlib's own bytes, floats and all, or ``None``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any, Final, NoReturn

import orjson

_OPTIONS: Final = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
"""Dataclasses and times are not JSON: refused (by the stdlib), not written the orjson way."""

_fast_dumps: Final = orjson.dumps
_UTF8: Final = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_ASCII: Final = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _refuse(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


_STD_DECODER: Final = json.JSONDecoder(parse_constant=_refuse)


def dumps(value: object, *, ascii: bool = False) -> bytes:
    """``value`` as compact JSON in UTF-8, or in ASCII alone (``\\u`` escapes) with ``ascii``;
    a value with a string UTF-8 cannot carry (a lone surrogate) is written in ASCII either way.

    Raises:
        ValueError: NaN or Infinity, a cycle, an integer too long for Python to write.
        TypeError: a value (or a key) that is not JSON.
    """
    try:
        data = _fast_dumps(value, option=_OPTIONS)
    except orjson.JSONEncodeError:  # beyond 64 bits, a lone surrogate, a key not a str, …
        return _std_dumps(value, ascii=ascii)
    if b"null" in data or (ascii and (not data.isascii() or b"\x7f" in data)):
        # orjson writes NaN as null, and has no ASCII (the stdlib's escapes DEL too)
        return _std_dumps(value, ascii=ascii)
    return data


_SHORT_EXPONENT: Final = re.compile(rb"[0-9]e-[0-9](?![0-9])")
"""A float orjson writes as ``1e-7`` where the stdlib writes ``1e-07`` (exponents -6 to -9;
at -5 orjson writes ``0.00001``, found by ``0.0000``); elsewhere their float texts are one."""


def stdlib_bytes(value: object) -> bytes | None:
    """The stdlib's compact UTF-8 text of ``value`` (``ensure_ascii=False``), written by
    orjson; ``None`` wherever orjson's bytes might not be those (a ``null`` that may be a NaN,
    a float in exponents -5 to -9, anything orjson refuses): the caller writes it the stdlib's
    way. Enum members and UUIDs are written as their values, as by :func:`dumps`. A long text
    of few members has its value looked at for a float or a null; any other text is searched."""
    try:
        data = _fast_dumps(value, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return None
    if len(data) >= _WALKED_FROM and _walked(value, _NODES_WALKED) >= 0:
        return data  # no float and no null in it: nothing the text needs searched for
    # Searched backwards: CPython's reverse search runs through JSON text a third faster
    # than ``in`` (which stops no sooner: almost every message holds neither).
    rfind = data.rfind
    if rfind(b"null") >= 0 or rfind(b"0.0000") >= 0:
        return None
    return None if _short_exponent(data) else data


_WALKED_FROM: Final = 1024
"""The shortest text whose value is walked: below about 1 KiB, searching the text costs less."""
_NODES_WALKED: Final = 64
"""How many members of a value :func:`_walked` looks at before leaving it to the search of
its text (a message's few members are fewer to look at than its text is to search)."""
_DICT_READS: Final = (
    "__getattribute__",
    "__iter__",
    "__getitem__",
    "__len__",
    "items",
    "keys",
    "values",
)


_DICT_KINDS: dict[type, bool] = {}


def _read_as_dict(kind: type) -> bool:
    """Whether both encoders read a ``kind`` as the dict it is: a ``dict`` subclass that
    overrides nothing either reads (a frozen snapshot), whose text is then a dict's. Its
    instances have no ``__dict__``: the stdlib calls ``items`` as found on the instance."""
    if not issubclass(kind, dict):
        return False
    known = _DICT_KINDS.get(kind)
    if known is None:
        reads = (getattr(kind, name) is getattr(dict, name) for name in _DICT_READS)
        known = _DICT_KINDS[kind] = kind.__dictoffset__ == 0 and all(reads)
    return known


def _walked(value: object, budget: int) -> int:
    """``budget`` less the members of ``value`` looked at, if it holds only strings,
    integers, booleans, objects and arrays (so orjson's text of it is the stdlib's: the two
    differ only at floats and at a NaN written as ``null``); -1 at anything else, or once
    ``budget`` is spent. ``value`` is one orjson took, so it nests at most 255 deep."""
    kind = type(value)
    if kind is dict:
        items: Any = value.values()  # type: ignore[attr-defined]
    elif kind is list or kind is tuple:
        items = value
    elif _DICT_KINDS.get(kind) or _read_as_dict(kind):  # a frozen snapshot: known at a look-up
        items = value.values()  # type: ignore[attr-defined]
    else:
        return budget if kind is str or kind is int or kind is bool else -1
    budget -= len(items)
    if budget < 0:
        return -1
    for item in items:
        kind = type(item)
        if kind is not str and kind is not int and kind is not bool:
            budget = _walked(item, budget)
            if budget < 0:
                return -1
    return budget


_DASHES_LOOKED_AT: Final = 8
"""How many ``-`` :func:`_short_exponent` looks at one by one before searching the rest."""


def _short_exponent(data: bytes) -> bool:
    """Whether ``data`` holds what :data:`_SHORT_EXPONENT` matches. A one-byte search is the
    fastest there is, and most messages have a few ``-`` (ids, paths) and no exponent: those
    are looked at in place, not found again by a search for ``e-`` through the whole text."""
    find = data.find
    dash = find(b"-", 2)  # the pattern's '-' has a digit and an 'e' before it
    looked_at = 0
    while dash >= 0:
        if data[dash - 1] == 0x65 and _SHORT_EXPONENT.match(data, dash - 2):
            return True
        looked_at += 1
        if looked_at == _DASHES_LOOKED_AT:
            return _SHORT_EXPONENT.search(data, dash - 1) is not None
        dash = find(b"-", dash + 1)
    return False


def _std_dumps(value: object, *, ascii: bool) -> bytes:
    if not ascii:
        try:
            return _UTF8.encode(value).encode("utf-8")
        except UnicodeEncodeError:
            pass  # a lone surrogate: only an escape carries it
    return _ASCII.encode(value).encode("ascii")


@functools.cache
def _decoder() -> Callable[[bytes | str], Any]:
    """msgspec's decoder, imported at the first read: the wire writes from its first message,
    but a first ``session/new`` reads nothing, and msgspec is a tenth of a cold start."""
    import msgspec

    return msgspec.json.Decoder().decode


def fast_loads() -> Callable[[bytes | str], Any]:
    """The fast reader :func:`loads` tries first: what it returns is what :func:`loads`
    returns; where it raises ``ValueError`` or ``RecursionError``, :func:`loads` decides.
    For a loop over many texts, bound once."""
    return _decoder()


def loads(data: bytes | str) -> Any:
    """The value of one JSON text (``bytes``: UTF-8).

    Raises:
        ValueError: not JSON (:class:`json.JSONDecodeError`), not UTF-8, NaN or Infinity.
        RecursionError: nested deeper than the interpreter goes.
    """
    try:
        return _decoder()(data)
    except (ValueError, RecursionError):  # msgspec.DecodeError, or a str UTF-8 cannot carry
        pass  # a lone surrogate, a number beyond a double, or damage: worded the stdlib's way
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return _STD_DECODER.decode(text)


@functools.cache
def member_reader(name: str) -> Callable[[bytes | memoryview], object]:
    """A reader of one member of an object's JSON text, which skips the rest unbuilt: where
    :func:`loads` returns an object holding ``name``, the reader returns that member (the last
    of repeated keys, an escaped key read as its name). It raises ``ValueError`` for a text
    that is not an object holding it, and wherever only :func:`loads` can tell; it may return
    a member of a text :func:`loads` refuses (invalid UTF-8 or a huge integer elsewhere)."""
    import msgspec

    holder = msgspec.defstruct("Member", [(name, Any)])
    decode = msgspec.json.Decoder(holder).decode

    def read(data: bytes | memoryview) -> object:
        try:
            return getattr(decode(data), name)
        except RecursionError:
            raise ValueError("nested too deeply") from None

    return read
