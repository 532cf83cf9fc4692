"""The structured-output schema subset: what a caller may demand, and the validator for it.

A schema is accepted only if every keyword in it is one the validator enforces (all
violations in one error). ``integer`` accepts ``3.0``, as every JSON parser outside Python.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final, Literal, Required, TypeAlias, TypedDict, get_args

from acp_sidecar.tools.errors import OutputSchemaError
from acp_sidecar.tools.json_values import (
    FrozenDict,
    JsonValue,
    json_type,
    json_violations,
    pointer_token,
)

StructuredScalar: TypeAlias = str | int | float | bool | None
"""A value ``enum`` members and ``const`` may take."""

StructuredSchemaType: TypeAlias = Literal[
    "object", "array", "string", "number", "integer", "boolean", "null"
]
"""The values of a node's ``type`` keyword (one type per node; no type arrays)."""


class _NodeKeywords(TypedDict, total=False):
    properties: Mapping[str, StructuredSchemaNode]
    """Object nodes: the schema of each named property."""
    required: Sequence[str]
    """Object nodes: property names that must be present (each declared in ``properties``)."""
    additionalProperties: bool
    """Object nodes: ``False`` rejects keys not in ``properties``; absent or ``True`` allows."""
    items: StructuredSchemaNode
    """Array nodes: the schema every element must match."""
    enum: Sequence[StructuredScalar]
    """The value must equal one of these (non-empty; scalars of the node's type)."""
    const: StructuredScalar
    """The value must equal this (a scalar of the node's type)."""
    description: str
    """Annotation for the model; not enforced."""
    title: str
    """Annotation for the model; not enforced."""
    default: JsonValue
    """Annotation for the model; not enforced, but must be lossless JSON."""
    examples: JsonValue
    """Annotation for the model; not enforced, but must be lossless JSON."""


class StructuredSchemaNode(_NodeKeywords, total=False):
    """One node of a structured-output schema."""

    type: Required[StructuredSchemaType]


class StructuredOutputSchema(_NodeKeywords, total=False):
    """A whole structured-output schema: a node whose ``type`` is ``"object"``."""

    type: Required[Literal["object"]]


class StructuredValueError(ValueError):
    """A value does not match its structured-output schema.

    ``violations`` lists every mismatch with its JSON-pointer path into the value; the
    message repeats them one per line, so the model can correct all of them in one step.
    """

    def __init__(self, violations: list[str]) -> None:
        self.violations: tuple[str, ...] = tuple(violations)
        super().__init__(
            "Structured value does not match the output schema:\n"
            + "\n".join(f"- {v}" for v in violations)
        )


SCHEMA_TYPES: Final[tuple[StructuredSchemaType, ...]] = get_args(StructuredSchemaType)
"""Every supported ``type`` value."""

SUPPORTED_KEYWORDS: Final[frozenset[str]] = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "description",
        "title",
        "default",
        "examples",
    }
)
"""Every keyword a schema node may use."""

_OBJECT_KEYWORDS: Final = frozenset({"properties", "required", "additionalProperties"})
_ARRAY_KEYWORDS: Final = frozenset({"items"})
_TYPE_LIST: Final = ", ".join(repr(t) for t in SCHEMA_TYPES)


def _is_object(value: object) -> bool:
    return type(value) is dict or type(value) is FrozenDict


def _is_array(value: object) -> bool:
    return type(value) is list or type(value) is tuple


def _shown(path: str) -> str:
    return path or "/"


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _matches_type(value: object, expected: str) -> bool:
    """Whether the (lossless JSON) ``value`` is an instance of the JSON type ``expected``."""
    kind = type(value)
    if expected == "string":
        return kind is str
    if expected == "integer":
        return kind is int or (kind is float and float(value).is_integer())  # type: ignore[arg-type]
    if expected == "number":
        return kind is int or kind is float
    if expected == "boolean":
        return kind is bool
    if expected == "null":
        return value is None
    if expected == "object":
        return _is_object(value)
    return _is_array(value)


def _json_equal(left: object, right: object) -> bool:
    """Equality of two JSON scalars as JSON sees it (``1 == 1.0``, ``true`` is not ``1``)."""
    left_kind, right_kind = type(left), type(right)
    if left_kind is bool or right_kind is bool:
        return left_kind is right_kind and left == right
    if left_kind in (int, float) and right_kind in (int, float):
        return left == right
    return left_kind is right_kind and left == right


# --- the schema walker ------------------------------------------------------------------------


def _scalar_issue(member: object, declared: str | None) -> str | None:
    """Why ``member`` cannot be an ``enum`` member or ``const`` of a ``declared`` node."""
    kind = type(member)
    if not (member is None or kind in (str, int, float, bool)):
        return f"must be a string, number, boolean or null, got {kind.__name__}"
    if kind is float and not math.isfinite(member):  # type: ignore[arg-type]
        return f"{member!r} is not a JSON number"
    if declared is not None and not _matches_type(member, declared):
        return f"{_dumps(member)} does not match type {declared!r}"
    return None


def _schema_violations(
    node: object, path: str, *, is_root: bool, active: set[int]
) -> Iterator[str]:
    if not _is_object(node):
        yield f"{_shown(path)}: a schema node must be a JSON object, got {type(node).__name__}"
        return
    assert isinstance(node, dict)  # narrowed by _is_object; dict or FrozenDict
    if id(node) in active:
        yield f"{_shown(path)}: cycle"
        return
    active.add(id(node))

    declared: str | None = None
    if "type" not in node:
        yield f"{_shown(path)}: missing keyword 'type'"
    else:
        kind = node["type"]
        if type(kind) is not str or kind not in SCHEMA_TYPES:
            shown = repr(kind) if type(kind) is str else type(kind).__name__
            yield f"{path}/type: must be one of {_TYPE_LIST}, got {shown}"
        elif is_root and kind != "object":
            yield f"{path}/type: the root of an output schema must have type 'object', got {kind!r}"
        else:
            declared = kind

    for key, sub in node.items():
        if type(key) is not str:
            yield f"{_shown(path)}: key {key!r} is not a string"
            continue
        here = f"{path}/{pointer_token(key)}"
        if key == "type":
            continue
        if key not in SUPPORTED_KEYWORDS:
            yield f"{here}: unsupported keyword {key!r}"
            continue
        if declared is not None and (
            (key in _OBJECT_KEYWORDS and declared != "object")
            or (key in _ARRAY_KEYWORDS and declared != "array")
        ):
            owner = "object" if key in _OBJECT_KEYWORDS else "array"
            yield f"{here}: {key!r} applies only to type {owner!r}, not {declared!r}"
            continue
        yield from _keyword_violations(node, key, sub, here, declared, active)

    active.discard(id(node))


def _keyword_violations(
    node: Mapping[object, object],
    key: str,
    sub: object,
    here: str,
    declared: str | None,
    active: set[int],
) -> Iterator[str]:
    if key == "properties":
        if not _is_object(sub):
            yield f"{here}: must be a JSON object of schema nodes, got {type(sub).__name__}"
            return
        assert isinstance(sub, dict)
        for name, child in sub.items():
            if type(name) is not str:
                yield f"{here}: key {name!r} is not a string"
                continue
            yield from _schema_violations(
                child, f"{here}/{pointer_token(name)}", is_root=False, active=active
            )
    elif key == "items":
        yield from _schema_violations(sub, here, is_root=False, active=active)
    elif key == "required":
        yield from _required_violations(node, sub, here)
    elif key == "additionalProperties":
        if type(sub) is not bool:
            yield f"{here}: must be true or false, got {type(sub).__name__}"
    elif key == "enum":
        if not _is_array(sub):
            yield f"{here}: must be an array of scalars, got {type(sub).__name__}"
            return
        assert isinstance(sub, list | tuple)
        if not sub:
            yield f"{here}: must have at least one member"
        for index, member in enumerate(sub):
            issue = _scalar_issue(member, declared)
            if issue is not None:
                yield f"{here}/{index}: {issue}"
    elif key == "const":
        issue = _scalar_issue(sub, declared)
        if issue is not None:
            yield f"{here}: {issue}"
    elif key in ("description", "title"):
        if type(sub) is not str:
            yield f"{here}: must be a string, got {type(sub).__name__}"
    else:  # default, examples: annotations that ride the wire, so they must be JSON
        for violation in json_violations(sub):
            yield here + (violation[1:] if violation.startswith("/: ") else violation)


def _required_violations(node: Mapping[object, object], sub: object, here: str) -> Iterator[str]:
    if not _is_array(sub):
        yield f"{here}: must be an array of property names, got {type(sub).__name__}"
        return
    assert isinstance(sub, list | tuple)
    declared_props = node.get("properties", {})
    # A malformed ``properties`` is reported on its own; checking names against it is noise.
    check_declared = _is_object(declared_props)
    seen: set[str] = set()
    for index, name in enumerate(sub):
        if type(name) is not str:
            yield f"{here}/{index}: must be a string, got {type(name).__name__}"
        elif name in seen:
            yield f"{here}/{index}: duplicate property name {name!r}"
        elif check_declared and name not in declared_props:  # type: ignore[operator]
            yield f"{here}/{index}: {name!r} is not declared in 'properties'"
        if type(name) is str:
            seen.add(name)


def output_schema_violations(schema: object) -> list[str]:
    """Every reason ``schema`` is not a supported output schema, each with its path.

    An empty list means :func:`assert_supported_output_schema` would accept it.
    """
    return list(_schema_violations(schema, "", is_root=True, active=set()))


def assert_supported_output_schema(schema: object) -> None:
    """Check that ``schema`` is an object-rooted schema in the supported subset.

    Raises:
        OutputSchemaError: listing every violation with its JSON-pointer path into
            ``schema`` (``/`` is the root).
    """
    violations = output_schema_violations(schema)
    if violations:
        raise OutputSchemaError(violations)


# --- the value walker -------------------------------------------------------------------------


def _value_violations(node: Mapping[str, Any], value: object, path: str) -> Iterator[str]:
    declared = node["type"]
    assert isinstance(declared, str)
    if not _matches_type(value, declared):
        yield f"{_shown(path)}: expected {declared}, got {json_type(value)}"
        return
    if "enum" in node:
        members = node["enum"]
        assert isinstance(members, list | tuple)
        if not any(_json_equal(value, member) for member in members):
            allowed = ", ".join(_dumps(member) for member in members)
            yield f"{_shown(path)}: {_dumps(value)} is not one of {allowed}"
    if "const" in node and not _json_equal(value, node["const"]):
        yield f"{_shown(path)}: must be {_dumps(node['const'])}, got {_dumps(value)}"
    if declared == "object":
        yield from _object_violations(node, value, path)
    elif declared == "array" and "items" in node:
        items = node["items"]
        assert isinstance(items, dict)
        assert isinstance(value, list | tuple)
        for index, element in enumerate(value):
            yield from _value_violations(items, element, f"{path}/{index}")


def _object_violations(node: Mapping[str, Any], value: object, path: str) -> Iterator[str]:
    assert isinstance(value, dict)
    properties = node.get("properties", {})
    assert isinstance(properties, dict)
    required = node.get("required", ())
    assert isinstance(required, list | tuple)
    for name in required:
        if name not in value:
            yield f"{path}/{pointer_token(name)}: missing required property"
    closed = node.get("additionalProperties", True) is False
    for key, item in value.items():
        if key in properties:
            yield from _value_violations(properties[key], item, f"{path}/{pointer_token(key)}")
        elif closed:
            where = f"{path}/{pointer_token(key)}"
            yield f"{where}: unexpected property (additionalProperties is false)"


def structured_value_violations(schema: object, value: object) -> list[str]:
    """Every way ``value`` fails ``schema``, each with its JSON-pointer path into ``value``.

    Raises:
        OutputSchemaError: ``schema`` is not a supported output schema.
    """
    assert_supported_output_schema(schema)
    assert isinstance(schema, dict)
    not_json = json_violations(value)
    if not_json:
        return not_json
    return list(_value_violations(schema, value, ""))


def validate_structured_value(schema: object, value: object) -> None:
    """Check ``value`` against the supported output ``schema``.

    ``value`` must itself be lossless JSON (checked first; if it is not, those are the
    violations). Then every keyword of the subset is enforced: ``type``, ``properties``,
    ``required``, ``additionalProperties``, ``items``, ``enum`` and ``const``.

    Raises:
        OutputSchemaError: ``schema`` is not a supported output schema.
        StructuredValueError: listing every mismatch with its JSON-pointer path.
    """
    violations = structured_value_violations(schema, value)
    if violations:
        raise StructuredValueError(violations)
