"""The one cattrs converter for ACP wire types, and the :func:`to_wire` / :func:`from_wire` seam.

Owns every (un)structuring hook of ``acp_sidecar.protocol``: snake_case attribute ↔ camelCase
wire key, ``meta`` ↔ ``_meta`` (passed through verbatim), tagged unions dispatched on their
tag (``type`` / ``sessionUpdate`` / ``outcome``) — including a union with one untagged
default member (``AuthMethod``: no ``type`` means the agent variant) — strict JSON scalar
checks.

Invariants:

- Output: a field whose default is ``None`` is omitted while it is ``None``; every other field
  is always emitted. The one exception is ``ToolCallDiff.old_text``, always emitted (``null``
  marks a new file). Unstructuring never validates — the types already do.
- Input: unknown keys are ignored; any failure raises :class:`ProtocolParamsError` naming the
  first offending value by its wire path.
- Hooks are generated lazily, on first use of a type, so importing costs almost nothing.
  The hooks apply only to :class:`WireType` subclasses: other attrs classes that pass
  through the converter (pygls's JSON-RPC envelopes) keep cattrs' default handling.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any, Literal, TypeVar, get_args, get_origin

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    IterableValidationError,
    IterableValidationNote,
    StructureHandlerNotFoundError,
)
from cattrs.gen import make_dict_structure_fn, override

from acp_sidecar.protocol._base import WireType
from acp_sidecar.protocol.client import RequestPermissionOutcome
from acp_sidecar.protocol.content import ContentBlock
from acp_sidecar.protocol.errors import ProtocolParamsError
from acp_sidecar.protocol.initialize import AuthMethod
from acp_sidecar.protocol.tool_call import ToolCallContent, ToolCallDiff
from acp_sidecar.protocol.updates import SessionUpdate

T = TypeVar("T")

_NONE_TYPE = type(None)
_UNION_ORIGINS = (types.UnionType, typing.Union)

_EMIT_NULL: frozenset[tuple[type, str]] = frozenset({(ToolCallDiff, "old_text")})
"""Optional fields sent as ``null`` rather than omitted: ``oldText: null`` means a new file."""

_UNION_NOUNS: dict[frozenset[Any], str] = {
    frozenset(get_args(ContentBlock)): "content block type",
    frozenset(get_args(SessionUpdate)): "session update",
    frozenset(get_args(ToolCallContent)): "tool call content type",
    frozenset(get_args(RequestPermissionOutcome)): "permission outcome",
    frozenset(get_args(AuthMethod)): "auth method type",
}
"""How an unknown tag of each closed union is described in errors."""

_JSON_TYPE_NAMES: dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
}

converter = cattrs.Converter(detailed_validation=True, forbid_extra_keys=False)
"""The converter for every ACP wire type (also usable for pygls's envelopes)."""


class _WireError(Exception):
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


def _is_wire_type(cl: Any) -> bool:
    return isinstance(cl, type) and issubclass(cl, WireType)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    for cl in (bool, int, float, str):
        if isinstance(value, cl):
            return _JSON_TYPE_NAMES[cl]
    return type(value).__name__


def _fields(cl: type) -> tuple[attrs.Attribute[Any], ...]:
    attrs.resolve_types(cl)
    fields: tuple[attrs.Attribute[Any], ...] = attrs.fields(cl)
    return fields


def _members(t: Any) -> tuple[list[Any], bool] | None:
    """The non-``None`` members of a union type and whether it admits ``None``; else None."""
    if get_origin(t) not in _UNION_ORIGINS:
        return None
    args = get_args(t)
    return [a for a in args if a is not _NONE_TYPE], _NONE_TYPE in args


def _tag_field(cl: type) -> attrs.Attribute[Any] | None:
    """The tag of a union member: its single-value ``Literal`` field with that default."""
    for a in _fields(cl):
        if get_origin(a.type) is Literal and len(get_args(a.type)) == 1 and a.kw_only:
            return a
    return None


# ---------------------------------------------------------------------------------------------
# Unstructuring: generated straight-line functions, looked up by exact class.

_UNSTRUCTURE: dict[type, Callable[[Any], dict[str, Any]]] = {}


class _UnionDispatch(dict[type, Callable[[Any], dict[str, Any]]]):
    """Class → hook for a union-typed field; a non-member fails with a clear ``TypeError``."""

    def __init__(self, where: str, classes: list[type]) -> None:
        super().__init__((cl, _unstructure_hook(cl)) for cl in classes)
        self.where = where

    def __missing__(self, cl: type) -> Callable[[Any], dict[str, Any]]:
        members = ", ".join(member.__name__ for member in self)
        raise TypeError(f"{self.where}: {cl.__qualname__} is not one of {members}")


def _unstructure_hook(cl: type) -> Callable[[Any], dict[str, Any]]:
    hook = _UNSTRUCTURE.get(cl)
    if hook is None:
        hook = _UNSTRUCTURE[cl] = _make_unstructure(cl)
    return hook


def _value_expr(t: Any, var: str, globs: dict[str, Any], slot: str, where: str) -> str:
    """Python source unstructuring ``var`` (never ``None``) of type ``t``."""
    if _is_wire_type(t):
        globs[f"_h{slot}"] = _unstructure_hook(t)
        return f"_h{slot}({var})"
    members = _members(t)
    if members is not None and all(_is_wire_type(m) for m in members[0]):
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
    for n, a in enumerate(_fields(cl)):
        key = wire_name(a.name)
        where = f"{cl.__name__}.{a.name}"
        members = _members(a.type)
        t = members[0][0] if members is not None and len(members[0]) == 1 else a.type
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
        if not _is_wire_type(value.__class__):
            raise TypeError(f"not an ACP wire type: {value.__class__.__qualname__}")
        hook = _unstructure_hook(value.__class__)
    return hook(value)


# ---------------------------------------------------------------------------------------------
# Structuring: cattrs-generated class hooks (detailed validation), strict JSON checks.


def _structure_str(obj: Any, _: Any) -> str:
    if isinstance(obj, str):
        return obj
    raise _WireError(f"expected string, got {_json_type(obj)}")


def _structure_int(obj: Any, _: Any) -> int:
    if isinstance(obj, int) and not isinstance(obj, bool):
        return obj
    raise _WireError(f"expected integer, got {_json_type(obj)}")


def _structure_float(obj: Any, _: Any) -> float:
    if isinstance(obj, int | float) and not isinstance(obj, bool):
        return float(obj)
    raise _WireError(f"expected number, got {_json_type(obj)}")


def _structure_bool(obj: Any, _: Any) -> bool:
    if isinstance(obj, bool):
        return obj
    raise _WireError(f"expected boolean, got {_json_type(obj)}")


def _structure_object(obj: Any, _: Any) -> dict[str, Any]:
    if isinstance(obj, dict):
        return obj  # Verbatim: ``_meta`` and raw MCP configs are opaque JSON.
    raise _WireError(f"expected object, got {_json_type(obj)}")


def _structure_literal(obj: Any, t: Any) -> Any:
    allowed = get_args(t)
    if isinstance(obj, str | int) and not isinstance(obj, bool) and obj in allowed:
        return obj
    expected = ", ".join(repr(v) for v in allowed)
    raise _WireError(f"invalid value {obj!r}; expected one of {expected}")


def _structure_string_map(obj: Any, _: Any) -> dict[str, str]:
    if not isinstance(obj, dict):
        raise _WireError(f"expected object, got {_json_type(obj)}")
    for key, value in obj.items():
        if not isinstance(value, str):
            raise _WireError(f"expected string, got {_json_type(value)}", (key,))
    return obj


def _make_class_structure(cl: type) -> Callable[[Any, Any], Any]:
    overrides = {a.name: override(rename=wire_name(a.name)) for a in _fields(cl)}
    make = typing.cast("Callable[..., Callable[[Any, Any], Any]]", make_dict_structure_fn)
    inner = make(cl, converter, _cattrs_detailed_validation=True, **overrides)

    def structure(obj: Any, _: Any) -> Any:
        if not isinstance(obj, dict):
            raise _WireError(f"expected object, got {_json_type(obj)}")
        return inner(obj, cl)

    return structure


def _make_list_structure(t: Any) -> Callable[[Any, Any], list[Any]]:
    (item,) = get_args(t) or (Any,)
    handler = converter.get_structure_hook(item)

    def structure_list(obj: Any, _: Any) -> list[Any]:
        if not isinstance(obj, list):
            raise _WireError(f"expected array, got {_json_type(obj)}")
        out = []
        for index, element in enumerate(obj):
            try:
                out.append(handler(element, item))
            except Exception as exc:
                path, reason = _locate(exc)
                raise _WireError(reason, (index, *path)) from exc
        return out

    return structure_list


def _make_tagged_structure(
    union: Any, classes: list[Any], nullable: bool, default: type | None = None
) -> Callable[[Any, Any], Any]:
    """Dispatch on the tag ``classes`` share; without the tag, ``default`` (if any) decodes."""
    tags = [typing.cast("attrs.Attribute[Any]", _tag_field(c)) for c in classes]
    if len({t.name for t in tags}) != 1:
        raise StructureHandlerNotFoundError(f"no common tag in {union}", union)
    key = wire_name(tags[0].name)
    members = frozenset(classes if default is None else [*classes, default])
    noun = _UNION_NOUNS.get(members, f"{key} value")
    by_tag: dict[str, type] = {str(t.default): c for t, c in zip(tags, classes, strict=True)}
    hooks = {tag: converter.get_structure_hook(c) for tag, c in by_tag.items()}
    default_hook = None if default is None else converter.get_structure_hook(default)

    def structure_tagged(obj: Any, _: Any) -> Any:
        if obj is None and nullable:
            return None
        if not isinstance(obj, dict):
            raise _WireError(f"expected object, got {_json_type(obj)}")
        if key not in obj:
            if default_hook is not None:
                return default_hook(obj, default)
            raise _WireError("required field missing", (key,))
        tag = obj[key]
        hook = hooks.get(tag) if isinstance(tag, str) else None
        if hook is None:
            raise _WireError(f"unknown {noun} {tag!r}", (key,))
        return hook(obj, by_tag[tag])

    return structure_tagged


def _make_keyed_structure(classes: list[Any], nullable: bool) -> Callable[[Any, Any], Any]:
    """An untagged union told apart by a required key only one member has (``text``/``blob``)."""
    required = [
        {wire_name(a.name) for a in _fields(c) if a.default is attrs.NOTHING} for c in classes
    ]
    keys = [r - set().union(*(o for o in required if o is not r)) for r in required]
    choices = [(k, c, converter.get_structure_hook(c)) for k, c in zip(keys, classes, strict=True)]
    expected = " or ".join(repr(k) for ks in keys for k in sorted(ks))

    def structure_keyed(obj: Any, _: Any) -> Any:
        if obj is None and nullable:
            return None
        if not isinstance(obj, dict):
            raise _WireError(f"expected object, got {_json_type(obj)}")
        for distinguishing, cl, hook in choices:
            if distinguishing <= obj.keys():
                return hook(obj, cl)
        raise _WireError(f"expected an object with {expected}")

    return structure_keyed


def _make_scalar_union_structure(scalars: list[Any], nullable: bool) -> Callable[[Any, Any], Any]:
    hooks = [converter.get_structure_hook(s) for s in scalars]
    names = [_JSON_TYPE_NAMES.get(s, getattr(s, "__name__", str(s))) for s in scalars]
    expected = " or ".join(names + ["null"] * nullable)

    def structure_scalar_union(obj: Any, _: Any) -> Any:
        if obj is None and nullable:
            return None
        for scalar, hook in zip(scalars, hooks, strict=True):
            try:
                return hook(obj, scalar)
            except _WireError:
                continue
        raise _WireError(f"expected {expected}, got {_json_type(obj)}")

    return structure_scalar_union


def _make_optional_structure(t: Any, nullable: bool) -> Callable[[Any, Any], Any]:
    hook = converter.get_structure_hook(t)

    def structure_optional(obj: Any, _: Any) -> Any:
        if obj is None and nullable:
            return None
        return hook(obj, t)

    return structure_optional


def _make_union_structure(t: Any) -> Callable[[Any, Any], Any]:
    members = _members(t)
    assert members is not None
    classes, nullable = members
    if len(classes) == 1:
        return _make_optional_structure(classes[0], nullable)
    if all(_is_wire_type(c) for c in classes):
        tagged = [c for c in classes if _tag_field(c) is not None]
        untagged = [c for c in classes if _tag_field(c) is None]
        if not untagged:
            return _make_tagged_structure(t, classes, nullable)
        if len(untagged) == 1:  # the schema's default variant: the one without a tag
            return _make_tagged_structure(t, tagged, nullable, default=untagged[0])
        return _make_keyed_structure(classes, nullable)
    if all(c in _JSON_TYPE_NAMES for c in classes):
        return _make_scalar_union_structure(classes, nullable)
    raise StructureHandlerNotFoundError(f"unsupported union {t}", t)


def _locate(exc: BaseException) -> tuple[tuple[str | int, ...], str]:
    """The wire path and reason of the first failure inside a structuring exception."""
    if isinstance(exc, _WireError):
        return exc.path, exc.reason
    if isinstance(exc, ClassValidationError | IterableValidationError):
        first = exc.exceptions[0]
        for note in getattr(first, "__notes__", ()):
            if isinstance(note, AttributeValidationNote):
                if isinstance(first, KeyError):
                    return (wire_name(note.name),), "required field missing"
                path, reason = _locate(first)
                return (wire_name(note.name), *path), reason
            if isinstance(note, IterableValidationNote):
                path, reason = _locate(first)
                return (note.index, *path), reason
        return _locate(first)
    return (), str(exc) or type(exc).__name__


def from_wire(data: Any, cls: type[T]) -> T:
    """Decode a wire JSON value into ``cls``; unknown keys are ignored.

    Raises :class:`ProtocolParamsError` naming the offending field's wire path.
    """
    try:
        return converter.structure(data, cls)
    except StructureHandlerNotFoundError:
        raise
    except Exception as exc:
        path, reason = _locate(exc)
        raise ProtocolParamsError("/".join(str(p) for p in path), reason) from exc


def _is_json_object(t: Any) -> bool:
    return bool(t == dict[str, Any])


def _is_string_map(t: Any) -> bool:
    return bool(t == dict[str, str])


def _is_literal(t: Any) -> bool:
    return get_origin(t) is Literal


def _is_list(t: Any) -> bool:
    return get_origin(t) is list


def _is_union(t: Any) -> bool:
    return get_origin(t) in _UNION_ORIGINS


converter.register_unstructure_hook_factory(_is_wire_type, _unstructure_hook)
converter.register_structure_hook(str, _structure_str)
converter.register_structure_hook(int, _structure_int)
converter.register_structure_hook(float, _structure_float)
converter.register_structure_hook(bool, _structure_bool)
converter.register_structure_hook_func(_is_json_object, _structure_object)
converter.register_structure_hook_func(_is_string_map, _structure_string_map)
converter.register_structure_hook_func(_is_literal, _structure_literal)
converter.register_structure_hook_factory(_is_list, _make_list_structure)
converter.register_structure_hook_factory(_is_union, _make_union_structure)
converter.register_structure_hook_factory(_is_wire_type, _make_class_structure)
