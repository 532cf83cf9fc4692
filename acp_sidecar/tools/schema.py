"""The typed schema DSL: per-property specs, their plain-dict form and their JSON Schema.

A prop is valid by construction. The model and the validator agree: declared properties mean
``additionalProperties: false``, and ``null`` is never accepted ("optional" means omitted).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias, assert_never, cast, get_args

import attrs

from acp_sidecar.tools.checkers import (
    NO_DEFAULT,
    Check,
    NoDefault,
    array_checker,
    check_any,
    check_boolean,
    check_free_array,
    check_free_object,
    check_integer,
    check_number,
    check_string,
    describe,
    enum_checker,
    object_checker,
    quote,
    quote_all,
)
from acp_sidecar.tools.json_values import ImmutableDict, JsonValue, pointer_token, thaw

__all__ = [
    "NO_DEFAULT",
    "NoDefault",
    "SchemaProp",
    "SchemaSpec",
    "SchemaSpecError",
    "SchemaType",
    "checked_spec",
    "coerce_spec",
    "properties_checker",
    "schema_spec_to_json_schema",
]

SchemaType: TypeAlias = Literal["string", "number", "integer", "boolean", "object", "array"]
"""The JSON type of one property."""

_SCHEMA_TYPES: Final[tuple[str, ...]] = get_args(SchemaType)


class SchemaSpecError(ValueError):
    """A schema spec or prop is malformed; ``violations`` lists every problem with its path."""

    def __init__(self, violations: list[str]) -> None:
        self.violations: tuple[str, ...] = tuple(violations)
        super().__init__("Invalid schema spec:\n" + "\n".join(f"- {v}" for v in violations))


def _enum_tuple(value: Sequence[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if type(value) is not list and type(value) is not tuple:
        raise SchemaSpecError([f"enum: expected an array of strings, got {describe(value)}"])
    return tuple(value)


def _properties_mapping(value: Mapping[str, SchemaProp] | None) -> ImmutableDict | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise SchemaSpecError(
            [f"properties: expected a mapping of names to SchemaProp, got {describe(value)}"]
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
    _checker: Check = attrs.field(init=False, repr=False, eq=False)

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
                    f"properties/{pointer_token(name)}: expected SchemaProp, got {describe(prop)}"
                    " (use coerce_spec for the plain-dict form)"
                )
        if items is not None and not isinstance(items, SchemaProp):
            problems.append(f"items: expected SchemaProp, got {describe(items)}")
        default: object = self.default
        if default is not NO_DEFAULT:
            default = check_any(default, "default", None, problems)
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
        got = quote(type_) if type(type_) is str else describe(type_)
        problems.append(f"type: expected one of {quote_all(_SCHEMA_TYPES)}, got {got}")
    if type(required) is not bool:
        problems.append(f"required: expected boolean, got {describe(required)}")
    if description is not None and type(description) is not str:
        problems.append(f"description: expected string, got {describe(description)}")
    if enum is not None:
        if type_ != "string":
            problems.append('enum: only allowed when type is "string"')
        if not enum:
            problems.append("enum: must not be empty")
        seen: set[str] = set()
        for index, member in enumerate(enum):
            if type(member) is not str:
                problems.append(f"enum/{index}: expected string, got {describe(member)}")
            elif member in seen:
                problems.append(f"enum/{index}: duplicate value {quote(member)}")
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
            f"{path or '/'}: expected a mapping of property names to props, got {describe(obj)}"
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
        problems.append(f"{path}: expected a SchemaProp or a mapping, got {describe(raw)}")
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
            problems.append(f"{path}/enum: expected an array of strings, got {describe(enum_raw)}")
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


def checked_spec(spec: object) -> ImmutableDict:
    """``spec`` as a frozen name → prop mapping, or a :class:`SchemaSpecError`."""
    if not isinstance(spec, Mapping):
        raise SchemaSpecError(
            [f"/: expected a mapping of property names to SchemaProp, got {describe(spec)}"]
        )
    problems = [
        f"/{pointer_token(name)}: expected SchemaProp, got {describe(prop)}"
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
    return {"type": "object", **_object_body(checked_spec(spec))}


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


# --- checkers ------------------------------------------------------------------------------


def _build_checker(prop: SchemaProp) -> Check:
    match prop.type:
        case "string":
            return check_string if prop.enum is None else enum_checker(prop.enum)
        case "number":
            return check_number
        case "integer":
            return check_integer
        case "boolean":
            return check_boolean
        case "object":
            return (
                check_free_object
                if prop.properties is None
                else properties_checker(prop.properties)
            )
        case "array":
            return check_free_array if prop.items is None else array_checker(prop.items._checker)
        case _:
            assert_never(prop.type)


def properties_checker(properties: Mapping[str, SchemaProp]) -> Check:
    """The checker of an object with these declared ``properties`` (the root of a spec too)."""
    return object_checker(
        [(name, prop._checker, prop.required, prop.default) for name, prop in properties.items()]
    )
