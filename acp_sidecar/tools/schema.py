"""The typed schema DSL: per-property specs, their JSON Schema, and argument validation.

A tool's ``parameters`` is a :data:`SchemaSpec` — property name → :class:`SchemaProp`. From it
:func:`schema_spec_to_json_schema` builds the JSON Schema sent to the model, and
:func:`validate_args` checks the model's arguments before the typed body runs.

Invariants:
- A :class:`SchemaProp` is valid by construction: ``enum`` (non-empty, distinct strings) only on
  ``string``, ``properties`` only on ``object``, ``items`` only on ``array``, and a ``default``
  is lossless JSON that the prop itself accepts, on an optional prop only. The default is stored
  in the form validation would return (deep-frozen, integral floats narrowed for ``integer``).
- The model and the validator agree. Every object that declares ``properties`` (the spec root
  included) is emitted with ``additionalProperties: false`` and validation rejects unknown
  properties there. An ``object`` without ``properties`` and an ``array`` without ``items`` are
  free-form: any lossless JSON inside. ``null`` is never accepted for a typed prop — the DSL has
  no null type, so the JSON Schema does not allow it either; "optional" means "may be omitted".
- Validation is all-or-nothing: it returns a detached deep-frozen copy (every object a
  :class:`FrozenDict`, every array a ``tuple``) with defaults filled for absent optional
  properties at every level that is present, or raises :class:`ToolArgsError` listing *every*
  violation with its JSON-pointer path, in a stable order: declared properties in spec order,
  then unexpected ones in argument order; array items by index.
- Type rules: ``bool`` is neither ``number`` nor ``integer``; ``integer`` accepts an ``int`` or a
  float with an integral value (narrowed to ``int``); ``number`` accepts ``int`` and finite
  ``float`` unchanged; NaN and ±Infinity are rejected everywhere. Containers and scalars must be
  exactly the JSON types (``dict``/:class:`FrozenDict`, ``list``/``tuple``, ``str``, …), as in
  :mod:`acp_sidecar.tools.json_values`.
- Nothing is compiled per call. Each prop builds its checker once, when it is constructed;
  :func:`compile_spec` only wires the root, and :func:`validate_args` keeps the last 256
  compiled specs keyed by the identity of their (immutable) props. Hot
  callers such as ``define_tool`` should hold the :class:`CompiledSpec` themselves.
"""

from __future__ import annotations

import enum
import json
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias, assert_never, cast, get_args

import attrs

from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.json_values import (
    FrozenDict,
    FrozenJson,
    ImmutableDict,
    JsonValue,
    JsonValueError,
    freeze_json,
    json_faults,
    json_type,
    pointer_token,
    thaw,
)

__all__ = [
    "NO_DEFAULT",
    "CompiledSpec",
    "NoDefault",
    "SchemaProp",
    "SchemaSpec",
    "SchemaSpecError",
    "SchemaType",
    "coerce_spec",
    "compile_spec",
    "schema_spec_to_json_schema",
    "validate_args",
]

SchemaType: TypeAlias = Literal["string", "number", "integer", "boolean", "object", "array"]
"""The JSON type of one property."""

_SCHEMA_TYPES: Final[tuple[str, ...]] = get_args(SchemaType)


class NoDefault(enum.Enum):
    """The type of :data:`NO_DEFAULT`, so that "no default" differs from ``default=None``."""

    NO_DEFAULT = "NO_DEFAULT"


NO_DEFAULT: Final = NoDefault.NO_DEFAULT
"""``SchemaProp.default`` when the prop has no default."""

_CACHE_SIZE: Final = 256

# A checker validates one value against one prop. It takes the value, the JSON-pointer path of
# its parent and its own key (``None`` for the root), and appends violations to the list; it
# returns the narrowed frozen value (meaningless once a violation was appended). Paths are only
# formatted on error or when descending into a container, so a valid scalar costs no string work.
_Check: TypeAlias = Callable[[Any, str, "str | int | None", list[str]], object]


class SchemaSpecError(ValueError):
    """A schema spec or prop is malformed; ``violations`` lists every problem with its path."""

    def __init__(self, violations: list[str]) -> None:
        self.violations: tuple[str, ...] = tuple(violations)
        super().__init__("Invalid schema spec:\n" + "\n".join(f"- {v}" for v in violations))


def _enum_tuple(value: Sequence[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if type(value) is not list and type(value) is not tuple:
        raise SchemaSpecError([f"enum: expected an array of strings, got {_describe(value)}"])
    return tuple(value)


def _properties_mapping(value: Mapping[str, SchemaProp] | None) -> ImmutableDict | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise SchemaSpecError(
            [f"properties: expected a mapping of names to SchemaProp, got {_describe(value)}"]
        )
    return ImmutableDict(value)


@attrs.frozen(cache_hash=True)
class SchemaProp:
    """One property of a tool's parameters (the spec's ``SchemaProp``).

    Raises:
        SchemaSpecError: the prop is malformed (every problem is listed).
    """

    type: SchemaType
    """The property's JSON type."""
    required: bool = attrs.field(default=False, kw_only=True)
    """Per-property required flag (NOT the JSON Schema ``required`` array of the parent)."""
    description: str | None = attrs.field(default=None, kw_only=True)
    """Human-readable description, surfaced in the JSON Schema."""
    enum: tuple[str, ...] | None = attrs.field(default=None, kw_only=True, converter=_enum_tuple)
    """The allowed values; ``string`` props only."""
    default: JsonValue | NoDefault = attrs.field(default=NO_DEFAULT, kw_only=True)
    """Filled in when the (optional) property is absent; :data:`NO_DEFAULT` for none."""
    properties: Mapping[str, SchemaProp] | None = attrs.field(
        default=None, kw_only=True, converter=_properties_mapping
    )
    """Nested properties of an ``object``; ``None`` makes the object free-form."""
    items: SchemaProp | None = attrs.field(default=None, kw_only=True)
    """The schema of every item of an ``array``; ``None`` makes the items free-form."""
    _checker: _Check = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        problems = _shape_problems(
            self.type,
            self.required,
            self.description,
            self.enum,
            self.properties is not None,
            self.items is not None,
            self.default is not NO_DEFAULT,
        )
        # Callers without a type checker can pass anything; look at the values as objects.
        properties: Mapping[Any, object] = self.properties or {}
        items: object = self.items
        for name, prop in properties.items():
            if type(name) is not str:
                problems.append(f"properties: property name {name!r} is not a string")
            elif not isinstance(prop, SchemaProp):
                problems.append(
                    f"properties/{pointer_token(name)}: expected SchemaProp, got {_describe(prop)}"
                    " (use coerce_spec for the plain-dict form)"
                )
        if items is not None and not isinstance(items, SchemaProp):
            problems.append(f"items: expected SchemaProp, got {_describe(items)}")
        default: object = self.default
        if default is not NO_DEFAULT:
            default = _check_any(default, "default", None, problems)
        if problems:
            raise SchemaSpecError(problems)
        checker = _build_checker(self)
        object.__setattr__(self, "_checker", checker)
        if default is not NO_DEFAULT:
            object.__setattr__(self, "default", checker(default, "default", None, problems))
            if problems:
                raise SchemaSpecError(problems)


SchemaSpec: TypeAlias = Mapping[str, SchemaProp]
"""A tool's parameters: property name → prop, in the order the model should see them."""


def _shape_problems(
    type_: object,
    required: object,
    description: object,
    enum: tuple[object, ...] | None,
    has_properties: bool,
    has_items: bool,
    has_default: bool,
) -> list[str]:
    """The problems a prop's own fields have, paths relative to the prop."""
    problems: list[str] = []
    if type_ not in _SCHEMA_TYPES or type(type_) is not str:
        got = _quote(type_) if type(type_) is str else _describe(type_)
        problems.append(f"type: expected one of {_quote_all(_SCHEMA_TYPES)}, got {got}")
    if type(required) is not bool:
        problems.append(f"required: expected boolean, got {_describe(required)}")
    if description is not None and type(description) is not str:
        problems.append(f"description: expected string, got {_describe(description)}")
    if enum is not None:
        if type_ != "string":
            problems.append('enum: only allowed when type is "string"')
        if not enum:
            problems.append("enum: must not be empty")
        seen: set[str] = set()
        for index, member in enumerate(enum):
            if type(member) is not str:
                problems.append(f"enum/{index}: expected string, got {_describe(member)}")
            elif member in seen:
                problems.append(f"enum/{index}: duplicate value {_quote(member)}")
            else:
                seen.add(member)
    if has_properties and type_ != "object":
        problems.append('properties: only allowed when type is "object"')
    if has_items and type_ != "array":
        problems.append('items: only allowed when type is "array"')
    if has_default and required is True:
        problems.append("default: not allowed on a required property (it would never be used)")
    return problems


# --- the plain-dict form ------------------------------------------------------------------

_PROP_KEYWORDS: Final = frozenset(
    ("type", "required", "description", "enum", "default", "properties", "items")
)


def coerce_spec(obj: object) -> dict[str, SchemaProp]:
    """A :data:`SchemaSpec` from a spec that may use the plain-dict form for any prop.

    ``{"path": {"type": "string", "required": True}}`` and ``{"path": SchemaProp("string",
    required=True)}`` give the same result; the forms may be mixed at any depth.

    Raises:
        SchemaSpecError: listing every problem, each with its JSON-pointer path in ``obj``.
    """
    problems: list[str] = []
    spec = _coerce_properties(obj, "", problems)
    if problems or spec is None:
        raise SchemaSpecError(problems)
    return spec


def _coerce_properties(obj: object, path: str, problems: list[str]) -> dict[str, SchemaProp] | None:
    if not isinstance(obj, Mapping):
        problems.append(
            f"{path or '/'}: expected a mapping of property names to props, got {_describe(obj)}"
        )
        return None
    spec: dict[str, SchemaProp] = {}
    complete = True
    for name, raw in obj.items():
        if type(name) is not str:
            problems.append(f"{path or '/'}: property name {name!r} is not a string")
            complete = False
            continue
        prop = _coerce_prop(raw, f"{path}/{pointer_token(name)}", problems)
        if prop is None:
            complete = False
        else:
            spec[name] = prop
    return spec if complete else None


def _coerce_prop(raw: object, path: str, problems: list[str]) -> SchemaProp | None:
    if isinstance(raw, SchemaProp):
        return raw
    if not isinstance(raw, Mapping):
        problems.append(f"{path}: expected a SchemaProp or a mapping, got {_describe(raw)}")
        return None
    before = len(problems)
    for key in raw:
        if key not in _PROP_KEYWORDS:
            problems.append(f"{path}/{pointer_token(str(key))}: unknown keyword")
    if "type" not in raw:
        problems.append(f"{path}/type: required keyword missing")
    enum_raw = raw.get("enum")
    enum: tuple[object, ...] | None = None
    if enum_raw is not None:
        if type(enum_raw) is list or type(enum_raw) is tuple:
            enum = tuple(enum_raw)
        else:
            problems.append(f"{path}/enum: expected an array of strings, got {_describe(enum_raw)}")
    properties = None
    if raw.get("properties") is not None:
        properties = _coerce_properties(raw["properties"], f"{path}/properties", problems)
    items = None
    if raw.get("items") is not None:
        items = _coerce_prop(raw["items"], f"{path}/items", problems)
    problems.extend(
        f"{path}/{problem}"
        for problem in _shape_problems(
            raw.get("type"),
            raw.get("required", False),
            raw.get("description"),
            enum,
            raw.get("properties") is not None,
            raw.get("items") is not None,
            "default" in raw,
        )
        if "type" in raw or not problem.startswith("type:")
    )
    if len(problems) > before:
        return None
    try:
        return SchemaProp(
            raw["type"],
            required=raw.get("required", False),
            description=raw.get("description"),
            enum=cast("tuple[str, ...] | None", enum),  # checked by _shape_problems above
            default=raw.get("default", NO_DEFAULT),
            properties=properties,
            items=items,
        )
    except SchemaSpecError as exc:
        problems.extend(f"{path}/{problem}" for problem in exc.violations)
        return None


def _checked_spec(spec: object) -> ImmutableDict:
    """``spec`` as a frozen name → prop mapping, or a :class:`SchemaSpecError`."""
    if not isinstance(spec, Mapping):
        raise SchemaSpecError(
            [f"/: expected a mapping of property names to SchemaProp, got {_describe(spec)}"]
        )
    problems = [
        f"/{pointer_token(name)}: expected SchemaProp, got {_describe(prop)}"
        " (use coerce_spec for the plain-dict form)"
        for name, prop in spec.items()
        if type(name) is str and not isinstance(prop, SchemaProp)
    ]
    problems.extend(
        f"/: property name {name!r} is not a string" for name in spec if type(name) is not str
    )
    if problems:
        raise SchemaSpecError(problems)
    return ImmutableDict(spec)


# --- JSON Schema ---------------------------------------------------------------------------


def schema_spec_to_json_schema(spec: SchemaSpec) -> dict[str, Any]:
    """The JSON Schema (a fresh, mutable, lossless JSON document) for a tool's parameters.

    The root is ``{"type": "object", "properties": …, "required": […], "additionalProperties":
    false}``; ``required`` lists the required names in spec order and is omitted when empty.
    Nested objects with ``properties`` are built the same way; ``description``, ``enum``,
    ``default`` and ``items`` are carried over.

    Raises:
        SchemaSpecError: ``spec`` is not a mapping of names to :class:`SchemaProp`.
    """
    return {"type": "object", **_object_body(_checked_spec(spec))}


def _object_body(properties: Mapping[str, SchemaProp]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "properties": {name: _prop_json_schema(prop) for name, prop in properties.items()}
    }
    required = [name for name, prop in properties.items() if prop.required]
    if required:
        body["required"] = required
    body["additionalProperties"] = False
    return body


def _prop_json_schema(prop: SchemaProp) -> dict[str, Any]:
    node: dict[str, Any] = {"type": prop.type}
    if prop.description is not None:
        node["description"] = prop.description
    if prop.enum is not None:
        node["enum"] = list(prop.enum)
    if prop.default is not NO_DEFAULT:
        node["default"] = thaw(prop.default)
    if prop.properties is not None:
        node.update(_object_body(prop.properties))
    if prop.items is not None:
        node["items"] = _prop_json_schema(prop.items)
    return node


# --- validation ----------------------------------------------------------------------------


@attrs.frozen(eq=False)
class CompiledSpec:
    """A :data:`SchemaSpec` wired into one validator; build it with :func:`compile_spec`."""

    spec: Mapping[str, SchemaProp]
    """The (frozen) spec this validates."""
    _check: _Check = attrs.field(repr=False)

    def validate(self, args: object) -> FrozenDict:
        """See :func:`validate_args`."""
        violations: list[str] = []
        value = self._check(args, "", None, violations)
        if violations:
            raise ToolArgsError(violations)
        assert type(value) is FrozenDict
        return value

    def json_schema(self) -> dict[str, Any]:
        """See :func:`schema_spec_to_json_schema`."""
        return {"type": "object", **_object_body(self.spec)}


def compile_spec(spec: SchemaSpec) -> CompiledSpec:
    """Wire ``spec`` into a reusable validator (cheap: props compiled themselves when built).

    Raises:
        SchemaSpecError: ``spec`` is not a mapping of names to :class:`SchemaProp`.
    """
    frozen = _checked_spec(spec)
    return CompiledSpec(frozen, _object_checker(frozen))


_compiled: dict[tuple[tuple[str, int], ...], tuple[tuple[SchemaProp, ...], CompiledSpec]] = {}
_compiled_lock = threading.Lock()


def validate_args(spec: SchemaSpec | CompiledSpec, args: object) -> FrozenDict:
    """Check model-generated ``args`` against ``spec``; return them narrowed and deep-frozen.

    ``args`` is a JSON object, frozen or not. The result is a detached copy with defaults
    filled for absent optional properties (in nested objects too, when those are present),
    integral floats narrowed to ``int`` for ``integer`` props, properties in spec order.

    A plain spec is compiled on first use and cached by the identity of its props (the cache
    keeps those props alive, so an identity is never reused while cached).

    Raises:
        ToolArgsError: listing every violation, e.g. ``/files/2/path: expected string, got
            number``, ``/mode: expected one of "a", "b", got "c"``, ``/path: required
            property missing``, ``/extra: unexpected property``, ``/: expected object, got
            array``.
        SchemaSpecError: ``spec`` is not a mapping of names to :class:`SchemaProp`.
    """
    if isinstance(spec, CompiledSpec):
        return spec.validate(args)
    key = tuple((name, id(prop)) for name, prop in spec.items())
    hit = _compiled.get(key)
    if hit is None:
        compiled = compile_spec(spec)
        with _compiled_lock:
            while len(_compiled) >= _CACHE_SIZE:
                del _compiled[next(iter(_compiled))]
            _compiled[key] = (tuple(compiled.spec.values()), compiled)
    else:
        compiled = hit[1]
    return compiled.validate(args)


def _build_checker(prop: SchemaProp) -> _Check:
    match prop.type:
        case "string":
            return _check_string if prop.enum is None else _enum_checker(prop.enum)
        case "number":
            return _check_number
        case "integer":
            return _check_integer
        case "boolean":
            return _check_boolean
        case "object":
            return (
                _check_free_object if prop.properties is None else _object_checker(prop.properties)
            )
        case "array":
            return _check_free_array if prop.items is None else _array_checker(prop.items)
        case _:
            assert_never(prop.type)


def _check_string(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
    if type(value) is str:
        return value
    errors.append(f"{_at(parent, key)}: expected string, got {_describe(value)}")
    return None


def _enum_checker(allowed: tuple[str, ...]) -> _Check:
    members = frozenset(allowed)
    expected = f"expected one of {_quote_all(allowed)}"

    def check(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
        if type(value) is str:
            if value in members:
                return value
            errors.append(f"{_at(parent, key)}: {expected}, got {_quote(value)}")
            return None
        errors.append(f"{_at(parent, key)}: expected string, got {_describe(value)}")
        return None

    return check


def _check_number(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
    kind = type(value)
    if kind is int or (kind is float and math.isfinite(value)):
        return value
    errors.append(f"{_at(parent, key)}: expected number, got {_describe(value)}")
    return None


def _check_integer(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
    kind = type(value)
    if kind is int:
        return value
    if kind is float and value.is_integer():
        return int(value)
    errors.append(f"{_at(parent, key)}: expected integer, got {_describe(value)}")
    return None


def _check_boolean(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
    if type(value) is bool:
        return value
    errors.append(f"{_at(parent, key)}: expected boolean, got {_describe(value)}")
    return None


def _object_checker(properties: Mapping[str, SchemaProp]) -> _Check:
    fields = tuple(
        (name, pointer_token(name), prop._checker, prop.required, prop.default)
        for name, prop in properties.items()
    )
    known = frozenset(properties)

    def check(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
        kind = type(value)
        if kind is not dict and kind is not FrozenDict:
            errors.append(f"{_at(parent, key)}: expected object, got {_describe(value)}")
            return None
        path = parent if key is None else f"{parent}/{key}"
        out: dict[str, object] = {}
        seen = 0
        for name, escaped, sub, required, default in fields:
            if name in value:
                seen += 1
                out[name] = sub(value[name], path, escaped, errors)
            elif required:
                errors.append(f"{path}/{escaped}: required property missing")
            elif default is not NO_DEFAULT:
                out[name] = default
        if seen != len(value):
            for extra in value:
                if type(extra) is not str:
                    errors.append(f"{path or '/'}: property name {extra!r} is not a string")
                elif extra not in known:
                    errors.append(f"{path}/{pointer_token(extra)}: unexpected property")
        return FrozenDict.from_frozen(out)  # every value was checked and frozen above

    return check


def _array_checker(items: SchemaProp) -> _Check:
    sub = items._checker

    def check(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
        kind = type(value)
        if kind is not list and kind is not tuple:
            errors.append(f"{_at(parent, key)}: expected array, got {_describe(value)}")
            return None
        path = parent if key is None else f"{parent}/{key}"
        return tuple([sub(item, path, index, errors) for index, item in enumerate(value)])

    return check


def _check_free_object(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
    if type(value) is not dict and type(value) is not FrozenDict:
        errors.append(f"{_at(parent, key)}: expected object, got {_describe(value)}")
        return None
    return _check_any(value, parent, key, errors)


def _check_free_array(value: Any, parent: str, key: str | int | None, errors: list[str]) -> object:
    if type(value) is not list and type(value) is not tuple:
        errors.append(f"{_at(parent, key)}: expected array, got {_describe(value)}")
        return None
    return _check_any(value, parent, key, errors)


def _check_any(value: Any, parent: str, key: str | int | None, errors: list[str]) -> FrozenJson:
    """Any lossless JSON value, deep-frozen (free-form objects and arrays, defaults)."""
    try:
        return freeze_json(value)
    except JsonValueError:
        pass
    for path, fault, subject in json_faults(value, parent if key is None else f"{parent}/{key}"):
        match fault:
            case "value":
                errors.append(f"{path}: expected JSON value, got {_describe(subject)}")
            case "key":
                errors.append(f"{path}: property name {subject!r} is not a string")
            case "cycle":
                errors.append(f"{path}: cycle")
            case _:
                assert_never(fault)
    return None


# --- messages ------------------------------------------------------------------------------

_QUOTE_LIMIT: Final = 64


def _at(parent: str, key: str | int | None) -> str:
    """The display path of a value: its JSON pointer, with the root shown as ``/``."""
    return (parent if key is None else f"{parent}/{key}") or "/"


def _quote(text: object) -> str:
    """A string as JSON, cut after :data:`_QUOTE_LIMIT` characters (a model may send a lot)."""
    text = str(text)
    if len(text) > _QUOTE_LIMIT:
        text = text[:_QUOTE_LIMIT] + "…"
    return json.dumps(text, ensure_ascii=False)


def _quote_all(texts: Sequence[str]) -> str:
    return ", ".join(_quote(text) for text in texts)


def _describe(value: object) -> str:
    """The JSON name of a value's type, as messages print it after "got".

    The DSL's messages call every JSON number a ``number`` (an ``integer`` prop rejects
    ``3.5`` as "got number"), and name NaN and the infinities, which JSON cannot hold.
    """
    if type(value) is float and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    name = json_type(value)
    if name is None:
        return f"non-JSON {type(value).__name__}"
    return "number" if name == "integer" else name
