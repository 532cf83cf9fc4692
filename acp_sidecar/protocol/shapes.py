"""How wire classes map to the wire: key names, fields, union members, tags (both directions)."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, get_args, get_origin

import attrs

from acp_sidecar.protocol._base import WireType

NONE_TYPE = type(None)
UNION_ORIGINS = (types.UnionType, typing.Union)

JSON_TYPE_NAMES: dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
}


class WireError(Exception):
    """A structuring failure of the value at ``path`` below the value being structured."""

    def __init__(self, reason: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path = path


def wire_name(attribute: str) -> str:
    """The wire key of an attribute: ``tool_call_id`` → ``toolCallId``, ``meta`` → ``_meta``."""
    if attribute == "meta":
        return "_meta"
    head, *rest = attribute.split("_")
    return head + "".join(part.capitalize() for part in rest)


def is_wire_type(cl: Any) -> bool:
    return isinstance(cl, type) and issubclass(cl, WireType)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    for cl in (bool, int, float, str):
        if isinstance(value, cl):
            return JSON_TYPE_NAMES[cl]
    return type(value).__name__


def fields(cl: type) -> tuple[attrs.Attribute[Any], ...]:
    attrs.resolve_types(cl)
    found: tuple[attrs.Attribute[Any], ...] = attrs.fields(cl)
    return found


def union_members(t: Any) -> tuple[list[Any], bool] | None:
    """The non-``None`` members of a union type and whether it admits ``None``; else None."""
    if get_origin(t) not in UNION_ORIGINS:
        return None
    args = get_args(t)
    return [a for a in args if a is not NONE_TYPE], NONE_TYPE in args


def tag_field(cl: type) -> attrs.Attribute[Any] | None:
    """The tag of a union member: its single-value ``Literal`` field with that default."""
    for a in fields(cl):
        if get_origin(a.type) is Literal and len(get_args(a.type)) == 1 and a.kw_only:
            return a
    return None
