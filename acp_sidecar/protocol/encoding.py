"""Unstructuring: one generated straight-line function per wire class, looked up by exact class.

A field whose default is ``None`` is omitted while ``None`` (except :data:`_EMIT_NULL`); one
whose default is :data:`~acp_sidecar.protocol._base.UNSET` is omitted while unset, ``None``
sent as ``null``; every other field is always emitted. Nothing is validated here: the types
already did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args, get_origin

from acp_sidecar.protocol._base import UNSET, Unset
from acp_sidecar.protocol.shapes import fields, is_wire_type, union_members, wire_name
from acp_sidecar.protocol.tool_call import ToolCallDiff

_EMIT_NULL: frozenset[tuple[type, str]] = frozenset({(ToolCallDiff, "old_text")})
"""Optional fields sent as ``null`` rather than omitted: ``oldText: null`` means a new file."""

_UNSTRUCTURE: dict[type, Callable[[Any], dict[str, Any]]] = {}


class _UnionDispatch(dict[type, Callable[[Any], dict[str, Any]]]):
    """Class → hook for a union-typed field; a non-member fails with a clear ``TypeError``."""

    def __init__(self, where: str, classes: list[type]) -> None:
        super().__init__((cl, unstructure_hook(cl)) for cl in classes)
        self.where = where

    def __missing__(self, cl: type) -> Callable[[Any], dict[str, Any]]:
        members = ", ".join(member.__name__ for member in self)
        raise TypeError(f"{self.where}: {cl.__qualname__} is not one of {members}")


def unstructure_hook(cl: type) -> Callable[[Any], dict[str, Any]]:
    hook = _UNSTRUCTURE.get(cl)
    if hook is None:
        hook = _UNSTRUCTURE[cl] = _make_unstructure(cl)
    return hook


def _value_expr(t: Any, var: str, globs: dict[str, Any], slot: str, where: str) -> str:
    """Python source unstructuring ``var`` (never ``None``) of type ``t``."""
    if is_wire_type(t):
        globs[f"_h{slot}"] = unstructure_hook(t)
        return f"_h{slot}({var})"
    members = union_members(t)
    if members is not None and all(is_wire_type(m) for m in members[0]):
        classes = members[0]
        if len(classes) == 1:
            return _value_expr(classes[0], var, globs, slot, where)
        globs[f"_d{slot}"] = _UnionDispatch(where, classes)
        return f"_d{slot}[{var}.__class__]({var})"
    if get_origin(t) is list:
        (item,) = get_args(t)
        item_expr = _value_expr(item, "x", globs, slot + "_i", where + "[]")
        return f"list({var})" if item_expr == "x" else f"[{item_expr} for x in {var}]"
    return var  # JSON scalars, Literal, Any, dict[str, Any]: already wire values.


def _make_unstructure(cl: type) -> Callable[[Any], dict[str, Any]]:
    globs: dict[str, Any] = {}
    always: list[str] = []
    optional: list[str] = []
    for n, a in enumerate(fields(cl)):
        key = wire_name(a.name)
        where = f"{cl.__name__}.{a.name}"
        members = union_members(a.type)
        t = members[0][0] if members is not None and len(members[0]) == 1 else a.type
        if a.default is UNSET and members is not None:
            kept = [m for m in members[0] if m is not Unset]
            t = kept[0] if len(kept) == 1 else a.type
            globs["_UNSET"] = UNSET
            expr = _value_expr(t, "v", globs, str(n), where)
            optional.append(
                f"  v = instance.{a.name}\n  if v is not _UNSET:\n"
                f"    res[{key!r}] = None if v is None else {expr}"
            )
            continue
        if a.default is None and (cl, a.name) not in _EMIT_NULL:
            expr = _value_expr(t, "v", globs, str(n), where)
            optional.append(
                f"  v = instance.{a.name}\n  if v is not None:\n    res[{key!r}] = {expr}"
            )
            continue
        var = f"instance.{a.name}"
        expr = _value_expr(t, var, globs, str(n), where)
        if expr != var and members is not None and members[1]:
            expr = f"(None if {var} is None else {expr})"
        always.append(f"{key!r}: {expr}")
    name = f"unstructure_{cl.__name__}"
    source = "\n".join(
        [f"def {name}(instance):", f"  res = {{{', '.join(always)}}}", *optional, "  return res"]
    )
    exec(compile(source, f"<acp unstructure {cl.__qualname__}>", "exec"), globs)
    hook: Callable[[Any], dict[str, Any]] = globs[name]
    return hook


def to_wire(value: Any) -> dict[str, Any]:
    """The wire JSON object of an ACP value (camelCase keys, unset optionals omitted)."""
    hook = _UNSTRUCTURE.get(value.__class__)
    if hook is None:
        if not is_wire_type(value.__class__):
            raise TypeError(f"not an ACP wire type: {value.__class__.__qualname__}")
        hook = unstructure_hook(value.__class__)
    return hook(value)
