"""Tool parameters written as an attrs class: their schema, and arguments as typed instances.

Translated once per class into a ``SchemaSpec`` (same rules and messages). Fails loud at
definition time. ``X | None`` means "may be omitted", not "may be null".
"""

from __future__ import annotations

import collections.abc
import enum
import typing
import weakref
from collections.abc import Callable, Mapping
from types import NoneType, UnionType
from typing import (
    Annotated,
    Any,
    Literal,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
)

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn

from acp_sidecar.tools.args import CompiledSpec, compile_spec
from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.json_values import ImmutableDict, JsonValue, json_violations
from acp_sidecar.tools.schema import NO_DEFAULT, NoDefault, SchemaProp, SchemaSpecError

__all__ = [
    "attrs_args_narrower",
    "attrs_json_schema",
    "is_attrs_parameters",
    "structure_attrs_args",
]

T = TypeVar("T")

_SUPPORTED = (
    "supported: str, int, float, bool, Literal[...] of strings, an Enum of strings, list[X], "
    "tuple[X, ...], Sequence[X], a nested attrs class, and X | None on a field"
)


@attrs.frozen
class _ClassInfo:
    """What one parameters class compiles to."""

    spec: ImmutableDict
    compiled: CompiledSpec
    none_fill: tuple[str, ...]
    """Fields that are ``X | None`` without a default: ``None`` when omitted."""


_infos: weakref.WeakKeyDictionary[type, _ClassInfo] = weakref.WeakKeyDictionary()


def is_attrs_parameters(obj: object) -> bool:
    """Whether ``obj`` is an attrs class (a ``parameters`` value handled by this module)."""
    return isinstance(obj, type) and attrs.has(obj)


def attrs_json_schema(cls: type) -> dict[str, Any]:
    """The JSON Schema (a fresh, mutable document) of an attrs parameters class.

    Raises:
        TypeError: ``cls`` is not an attrs class, or a field cannot be translated.
    """
    return _class_info(cls, ()).compiled.json_schema()


def structure_attrs_args(cls: type[T], args: object) -> T:
    """Validate model-generated ``args`` against ``cls`` and build an instance of it.

    Raises:
        ToolArgsError: listing every violation with its JSON-pointer path, as
            :func:`~acp_sidecar.tools.args.validate_args` does. An exception raised by the
            class's own attrs validators or converters (``ValueError``/``TypeError``) is
            reported at ``/``, as attrs does not say which field raised.
        TypeError: ``cls`` is not an attrs class, or a field cannot be translated.
    """
    value = _class_info(cls, ()).compiled.validate(args)
    try:
        return _converter.structure(value, cls)
    except (ValueError, TypeError) as exc:
        raise ToolArgsError([f"/: {exc}"]) from exc


def attrs_args_narrower(cls: type[T]) -> Callable[[object], T]:
    """:func:`structure_attrs_args` for ``cls``, with its compiled schema and its structuring
    hook looked up once: a tool's arguments are narrowed at every call and replayed card.
    The hook is made at the first narrowing (a tool never called costs no hook)."""
    validate = _class_info(cls, ()).compiled.validate
    hooks: list[Callable[[Any, type[T]], T]] = []

    def narrow(args: object) -> T:
        value = validate(args)
        if not hooks:
            hooks.append(_converter.get_structure_hook(cls))
        try:
            return hooks[0](value, cls)
        except (ValueError, TypeError) as exc:
            raise ToolArgsError([f"/: {exc}"]) from exc

    return narrow


# --- translation ---------------------------------------------------------------------------


def _class_info(cls: type, stack: tuple[type, ...]) -> _ClassInfo:
    if not (isinstance(cls, type) and attrs.has(cls)):
        raise TypeError(f"parameters must be an attrs class, got {cls!r}")
    info = _infos.get(cls)
    if info is None:
        info = _translate_class(cls, stack)
        _infos[cls] = info
    return info


def _translate_class(cls: type[attrs.AttrsInstance], stack: tuple[type, ...]) -> _ClassInfo:
    name = cls.__qualname__
    if cls in stack:
        raise TypeError(f"{name}: a recursive parameters class cannot be written as JSON Schema")
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:  # NameError, or anything a broken annotation raises
        raise TypeError(f"{name}: cannot resolve its annotations: {exc}") from exc
    spec: dict[str, SchemaProp] = {}
    none_fill: list[str] = []
    for field in attrs.fields(cls):
        if not field.init:
            continue
        where = f"{name}.{field.name}"
        hint = hints.get(field.name, field.type)
        if hint is None:
            raise TypeError(f"{where}: has no type annotation")
        core, description, optional = _peel(hint)
        meta_description = field.metadata.get("description")
        if meta_description is not None:
            if type(meta_description) is not str:
                raise TypeError(f"{where}: metadata 'description' must be a string")
            description = meta_description
        prop = _translate(core, where, (*stack, cls), description)
        has_default = field.default is not attrs.NOTHING
        default: JsonValue | NoDefault = NO_DEFAULT
        # attrs.Factory is a class at run time but typed as a function in the attrs stubs.
        if has_default and not isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            if not (optional and field.default is None):
                default = _default_json(field.default, where)
        elif optional and not has_default:
            none_fill.append(field.name)
        try:
            spec[field.name] = attrs.evolve(
                prop, required=not has_default and not optional, default=default
            )
        except SchemaSpecError as exc:
            raise TypeError(
                f"{where}: invalid default {field.default!r}: " + "; ".join(exc.violations)
            ) from exc
    frozen = ImmutableDict(spec)
    return _ClassInfo(frozen, compile_spec(frozen), tuple(none_fill))


def _peel(hint: Any) -> tuple[Any, str | None, bool]:
    """Strip ``Annotated`` and ``| None`` layers: (core type, description, optional)."""
    description: str | None = None
    optional = False
    while True:
        origin = get_origin(hint)
        if origin is Annotated:
            base, *metadata = get_args(hint)
            if description is None:
                description = next((m for m in metadata if type(m) is str), None)
            hint = base
        elif (origin is Union or origin is UnionType) and NoneType in get_args(hint):
            rest = tuple(arg for arg in get_args(hint) if arg is not NoneType)
            optional = True
            hint = rest[0] if len(rest) == 1 else Union[rest]  # noqa: UP007 - built at runtime
        else:
            return hint, description, optional


def _translate(
    hint: Any, where: str, stack: tuple[type, ...], description: str | None
) -> SchemaProp:
    prop = _translate_core(hint, where, stack)
    return prop if description is None else attrs.evolve(prop, description=description)


def _translate_core(hint: Any, where: str, stack: tuple[type, ...]) -> SchemaProp:
    if hint is str:
        return SchemaProp("string")
    if hint is int:
        return SchemaProp("integer")
    if hint is float:
        return SchemaProp("number")
    if hint is bool:
        return SchemaProp("boolean")
    origin = get_origin(hint)
    args = get_args(hint)
    if origin is Literal:
        if not all(type(value) is str for value in args):
            raise TypeError(f"{where}: Literal values must all be strings, got {args!r}")
        return SchemaProp("string", enum=args)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = tuple(member.value for member in hint)
        if not values or not all(type(value) is str for value in values):
            raise TypeError(f"{where}: an Enum needs string values, {hint.__qualname__} has not")
        return SchemaProp("string", enum=values)
    if isinstance(hint, type) and attrs.has(hint):
        return SchemaProp("object", properties=_class_info(hint, stack).spec)
    if origin is list or origin is collections.abc.Sequence or origin is tuple:
        if origin is tuple and (len(args) != 2 or args[1] is not Ellipsis):
            raise TypeError(f"{where}: only tuple[X, ...] is supported, got {hint!r}")
        if not args:
            raise TypeError(f"{where}: {hint!r} needs an item type")
        item, item_description, optional = _peel(args[0])
        if optional:
            raise TypeError(f"{where}: None is only supported on a field, not in {hint!r}")
        return SchemaProp("array", items=_translate(item, where, stack, item_description))
    raise TypeError(f"{where}: unsupported type {hint!r}; {_SUPPORTED}")


def _default_json(default: object, where: str) -> JsonValue:
    value = _converter.unstructure(default)
    violations = json_violations(value)
    if violations:
        raise TypeError(f"{where}: default {default!r} is not JSON: " + "; ".join(violations))
    return cast("JsonValue", value)


# --- structuring ---------------------------------------------------------------------------


def _structure_hook(cls: type[attrs.AttrsInstance]) -> Callable[[Any, Any], Any]:
    """The cattrs hook for one parameters class: fills ``None`` for omitted ``X | None``."""
    fill = _class_info(cls, ()).none_fill
    if _is_flat(cls):
        return _flat_structure(cls, fill)
    base = make_dict_structure_fn(cls, _converter)
    if not fill:
        return base

    def structure(obj: Mapping[str, Any], target: Any) -> Any:
        missing = {name: None for name in fill if name not in obj}
        return base({**obj, **missing} if missing else obj, target)

    return structure


def _is_flat(cls: type[attrs.AttrsInstance]) -> bool:
    """Whether every field of ``cls`` is a ``str``, ``int``, ``bool`` or ``Literal`` of
    strings (or such ``| None``), set by its own name: validated arguments then hold each
    value as cattrs would structure it (``str(v)``, ``int(v)``, ``bool(v)`` give ``v``)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    for field in attrs.fields(cls):
        if not field.init or field.alias != field.name:
            return False
        core, _description, _optional = _peel(hints.get(field.name, field.type))
        literal = get_origin(core) is Literal and all(type(a) is str for a in get_args(core))
        if core not in (str, int, bool) and not literal:
            return False
    return True


def _flat_structure(
    cls: type[attrs.AttrsInstance], fill: tuple[str, ...]
) -> Callable[[Any, Any], Any]:
    """The hook of a class :func:`_is_flat` accepts: its validated arguments as keywords."""
    if not fill:  # no field to fill (most tools'): the arguments are the keywords

        def keywords(obj: Mapping[str, Any], _target: Any) -> Any:
            return cls(**obj)

        return keywords

    def structure(obj: Mapping[str, Any], _target: Any) -> Any:
        missing = {name: None for name in fill if name not in obj}
        return cls(**obj, **missing)

    return structure


def _unstructure_hook(cls: type[attrs.AttrsInstance]) -> Callable[[Any], Any]:
    """The wire form of an instance (for static defaults): what the model would send for it.

    Fields equal to their default are omitted, and so are ``None`` values of ``X | None``
    fields without a default — validation and ``__init__`` bring both back.
    """
    base = make_dict_unstructure_fn(cls, _converter, _cattrs_omit_if_default=True)
    fill = _class_info(cls, ()).none_fill
    if not fill:
        return base

    def unstructure(instance: Any) -> Any:
        wire = base(instance)
        return {key: value for key, value in wire.items() if value is not None or key not in fill}

    return unstructure


def _make_converter() -> cattrs.Converter:
    # Values reaching it were validated already, so per-field error collection is not needed.
    converter = cattrs.Converter(detailed_validation=False)
    converter.register_structure_hook_factory(attrs.has, _structure_hook)
    converter.register_unstructure_hook_factory(attrs.has, _unstructure_hook)
    return converter


_converter = _make_converter()
