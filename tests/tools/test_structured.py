"""The structured-output subset: what the schema checker rejects and what the validator enforces."""

from __future__ import annotations

import collections
import datetime
import json
from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_sidecar.tools.errors import OutputSchemaError
from acp_sidecar.tools.json_values import FrozenDict, freeze_json
from acp_sidecar.tools.structured import (
    SCHEMA_TYPES,
    StructuredOutputSchema,
    StructuredValueError,
    assert_supported_output_schema,
    output_schema_violations,
    structured_value_violations,
    validate_structured_value,
)

TYPE_LIST = "'object', 'array', 'string', 'number', 'integer', 'boolean', 'null'"


def schema_errors(schema: object) -> list[str]:
    """The violations ``assert_supported_output_schema`` raises with (``[]`` if it accepts)."""
    try:
        assert_supported_output_schema(schema)
    except OutputSchemaError as error:
        assert list(error.violations) == output_schema_violations(schema)
        return list(error.violations)
    assert output_schema_violations(schema) == []
    return []


def value_errors(schema: object, value: object) -> list[str]:
    """The violations ``validate_structured_value`` raises with (``[]`` if it accepts)."""
    try:
        validate_structured_value(schema, value)
    except StructuredValueError as error:
        assert list(error.violations) == structured_value_violations(schema, value)
        return list(error.violations)
    assert structured_value_violations(schema, value) == []
    return []


def obj(**properties: Any) -> dict[str, Any]:
    """An object-rooted schema with ``properties``."""
    return {"type": "object", "properties": properties}


class PlainMapping(Mapping[str, object]):
    """A read-only ``Mapping`` that is not a ``dict``: not plain JSON."""

    def __init__(self, data: dict[str, object]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> object:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


# --- accepted schemas ---------------------------------------------------------------------------

FULL_SCHEMA: StructuredOutputSchema = {
    "type": "object",
    "title": "Report",
    "description": "What the subagent found.",
    "properties": {
        "summary": {"type": "string", "description": "One line."},
        "score": {"type": "number", "default": 0.5, "examples": [0.1, 1]},
        "count": {"type": "integer", "enum": [1, 2, 3.0]},
        "ok": {"type": "boolean", "const": True},
        "nothing": {"type": "null"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
        "any_list": {"type": "array"},
        "nested": {
            "type": "object",
            "properties": {"x": {"type": "integer"}},
            "required": ["x"],
            "additionalProperties": False,
        },
        "open": {"type": "object", "additionalProperties": True},
    },
    "required": ["summary", "count"],
    "additionalProperties": False,
    "default": {"summary": "", "count": 1},
    "examples": [{"summary": "s", "count": 2, "tags": []}],
}


def test_a_schema_using_every_keyword_is_accepted() -> None:
    assert schema_errors(FULL_SCHEMA) == []


def test_a_frozen_schema_is_accepted() -> None:
    frozen = freeze_json(FULL_SCHEMA)
    assert isinstance(frozen, FrozenDict)
    assert schema_errors(frozen) == []
    assert value_errors(frozen, {"summary": "s", "count": 1, "ok": True}) == []


def test_the_smallest_schema_is_accepted() -> None:
    assert schema_errors({"type": "object"}) == []


def test_the_schema_types_are_the_spec_types() -> None:
    assert SCHEMA_TYPES == ("object", "array", "string", "number", "integer", "boolean", "null")


# --- rejected schemas: the root -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "name"),
    [
        ([], "list"),
        ("object", "str"),
        (None, "NoneType"),
        (True, "bool"),
        (collections.OrderedDict(type="object"), "OrderedDict"),
        (collections.defaultdict(str, type="object"), "defaultdict"),
        (PlainMapping({"type": "object"}), "PlainMapping"),
    ],
)
def test_a_root_that_is_not_a_plain_object_is_rejected(schema: object, name: str) -> None:
    assert schema_errors(schema) == [f"/: a schema node must be a JSON object, got {name}"]


@pytest.mark.parametrize("kind", ["array", "string", "number", "integer", "boolean", "null"])
def test_the_root_must_have_type_object(kind: str) -> None:
    assert schema_errors({"type": kind}) == [
        f"/type: the root of an output schema must have type 'object', got {kind!r}"
    ]


def test_a_node_without_type_is_rejected() -> None:
    assert schema_errors({}) == ["/: missing keyword 'type'"]
    assert schema_errors(obj(a={"description": "no type"})) == [
        "/properties/a: missing keyword 'type'"
    ]


@pytest.mark.parametrize(
    ("kind", "shown"),
    [("str", "'str'"), ("Object", "'Object'"), (["object", "null"], "list"), (1, "int")],
)
def test_a_bad_type_value_is_rejected(kind: object, shown: str) -> None:
    assert schema_errors({"type": kind}) == [f"/type: must be one of {TYPE_LIST}, got {shown}"]
    assert schema_errors(obj(a={"type": kind})) == [
        f"/properties/a/type: must be one of {TYPE_LIST}, got {shown}"
    ]


# --- rejected schemas: keywords -----------------------------------------------------------------


@pytest.mark.parametrize(
    "keyword",
    [
        "pattern",
        "minLength",
        "format",
        "minimum",
        "maxItems",
        "uniqueItems",
        "$ref",
        "$defs",
        "$schema",
        "oneOf",
        "anyOf",
        "allOf",
        "not",
        "if",
        "patternProperties",
        "propertyNames",
        "prefixItems",
        "nullable",
        "Type",
    ],
)
def test_an_unsupported_keyword_is_rejected_with_its_path(keyword: str) -> None:
    assert schema_errors({"type": "object", keyword: 1}) == [
        f"/{keyword}: unsupported keyword {keyword!r}"
    ]
    schema = obj(a={"type": "array", "items": {"type": "string", keyword: 1}})
    assert schema_errors(schema) == [
        f"/properties/a/items/{keyword}: unsupported keyword {keyword!r}"
    ]


def test_an_unsupported_keyword_path_is_escaped() -> None:
    assert schema_errors({"type": "object", "a/b~c": 1}) == [
        "/a~1b~0c: unsupported keyword 'a/b~c'"
    ]


@pytest.mark.parametrize(
    ("kind", "keyword", "owner"),
    [
        ("string", "properties", "object"),
        ("array", "required", "object"),
        ("integer", "additionalProperties", "object"),
        ("object", "items", "array"),
        ("null", "items", "array"),
    ],
)
def test_a_keyword_on_the_wrong_type_is_rejected(kind: str, keyword: str, owner: str) -> None:
    value: object = {"properties": {}, "required": [], "additionalProperties": False}.get(
        keyword, {"type": "string"}
    )
    schema = obj(a={"type": kind, keyword: value})
    assert schema_errors(schema) == [
        f"/properties/a/{keyword}: {keyword!r} applies only to type {owner!r}, not {kind!r}"
    ]


def test_keywords_of_a_node_with_a_bad_type_are_still_checked() -> None:
    assert schema_errors({"type": "thing", "items": 1, "pattern": "x"}) == [
        f"/type: must be one of {TYPE_LIST}, got 'thing'",
        "/items: a schema node must be a JSON object, got int",
        "/pattern: unsupported keyword 'pattern'",
    ]


def test_non_string_keys_are_rejected() -> None:
    assert schema_errors({"type": "object", 1: "x", None: "y"}) == [
        "/: key 1 is not a string",
        "/: key None is not a string",
    ]
    assert schema_errors({"type": "object", "properties": {2: {"type": "string"}}}) == [
        "/properties: key 2 is not a string"
    ]


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        ([], "/properties: must be a JSON object of schema nodes, got list"),
        ("a", "/properties: must be a JSON object of schema nodes, got str"),
        (PlainMapping({}), "/properties: must be a JSON object of schema nodes, got PlainMapping"),
        ({"a": "string"}, "/properties/a: a schema node must be a JSON object, got str"),
        ({"a": True}, "/properties/a: a schema node must be a JSON object, got bool"),
        ({"a/b": []}, "/properties/a~1b: a schema node must be a JSON object, got list"),
    ],
)
def test_bad_properties_are_rejected(properties: object, message: str) -> None:
    assert schema_errors({"type": "object", "properties": properties}) == [message]


def test_tuple_form_items_are_rejected() -> None:
    schema = obj(a={"type": "array", "items": [{"type": "string"}]})
    assert schema_errors(schema) == [
        "/properties/a/items: a schema node must be a JSON object, got list"
    ]


@pytest.mark.parametrize(
    ("required", "messages"),
    [
        ("a", ["/required: must be an array of property names, got str"]),
        ({"a"}, ["/required: must be an array of property names, got set"]),
        ([1], ["/required/0: must be a string, got int"]),
        (["a", "zz"], ["/required/1: 'zz' is not declared in 'properties'"]),
        (["a", "a"], ["/required/1: duplicate property name 'a'"]),
        (("a",), []),
        ([], []),
    ],
)
def test_required_must_name_declared_properties_once(required: object, messages: list[str]) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": required}
    assert schema_errors(schema) == messages


def test_required_without_properties_names_undeclared_properties() -> None:
    assert schema_errors({"type": "object", "required": ["a"]}) == [
        "/required/0: 'a' is not declared in 'properties'"
    ]


def test_required_is_not_checked_against_malformed_properties() -> None:
    assert schema_errors({"type": "object", "properties": [], "required": ["a"]}) == [
        "/properties: must be a JSON object of schema nodes, got list"
    ]


@pytest.mark.parametrize(
    ("value", "name"), [({}, "dict"), ({"type": "string"}, "dict"), ("false", "str"), (0, "int")]
)
def test_additional_properties_must_be_a_bool(value: object, name: str) -> None:
    assert schema_errors({"type": "object", "additionalProperties": value}) == [
        f"/additionalProperties: must be true or false, got {name}"
    ]


@pytest.mark.parametrize(
    ("kind", "enum", "messages"),
    [
        ("string", "a", ["/properties/p/enum: must be an array of scalars, got str"]),
        ("string", [], ["/properties/p/enum: must have at least one member"]),
        (
            "string",
            ["a", ["b"], {"c": 1}],
            [
                "/properties/p/enum/1: must be a string, number, boolean or null, got list",
                "/properties/p/enum/2: must be a string, number, boolean or null, got dict",
            ],
        ),
        (
            "string",
            [datetime.date(2024, 1, 1)],
            ["/properties/p/enum/0: must be a string, number, boolean or null, got date"],
        ),
        ("number", [float("nan")], ["/properties/p/enum/0: nan is not a JSON number"]),
        ("number", [1, float("inf")], ["/properties/p/enum/1: inf is not a JSON number"]),
        ("string", ["a", 1], ["/properties/p/enum/1: 1 does not match type 'string'"]),
        ("integer", [True], ["/properties/p/enum/0: true does not match type 'integer'"]),
        ("integer", [1.5], ["/properties/p/enum/0: 1.5 does not match type 'integer'"]),
        ("integer", [2.0], []),
        ("number", [1, 2.5], []),
        ("null", [None], []),
        ("object", [None], ["/properties/p/enum/0: null does not match type 'object'"]),
        ("array", ["a"], ["/properties/p/enum/0: \"a\" does not match type 'array'"]),
    ],
)
def test_enum_members_are_scalars_of_the_node_type(
    kind: str, enum: object, messages: list[str]
) -> None:
    assert schema_errors(obj(p={"type": kind, "enum": enum})) == messages


@pytest.mark.parametrize(
    ("kind", "const", "messages"),
    [
        (
            "string",
            ["a"],
            ["/properties/p/const: must be a string, number, boolean or null, got list"],
        ),
        (
            "string",
            {1, 2},
            ["/properties/p/const: must be a string, number, boolean or null, got set"],
        ),
        ("number", float("-inf"), ["/properties/p/const: -inf is not a JSON number"]),
        ("boolean", 0, ["/properties/p/const: 0 does not match type 'boolean'"]),
        ("string", None, ["/properties/p/const: null does not match type 'string'"]),
        ("boolean", False, []),
        ("null", None, []),
    ],
)
def test_const_is_a_scalar_of_the_node_type(kind: str, const: object, messages: list[str]) -> None:
    assert schema_errors(obj(p={"type": kind, "const": const})) == messages


@pytest.mark.parametrize("keyword", ["description", "title"])
@pytest.mark.parametrize(("value", "name"), [(1, "int"), (None, "NoneType"), (["a"], "list")])
def test_text_annotations_must_be_strings(keyword: str, value: object, name: str) -> None:
    assert schema_errors({"type": "object", keyword: value}) == [
        f"/{keyword}: must be a string, got {name}"
    ]


@pytest.mark.parametrize("keyword", ["default", "examples"])
@pytest.mark.parametrize(
    ("value", "messages"),
    [
        ({1, 2}, [": set is not JSON"]),
        (datetime.datetime(2024, 1, 1), [": datetime is not JSON"]),
        (float("nan"), [": nan is not a JSON number"]),
        ({"a": [1, {2: "x"}]}, ["/a/1: key 2 is not a string"]),
        ([b"x", (1, 2)], ["/0: bytes is not JSON"]),
        (collections.OrderedDict(a=1), [": OrderedDict is not JSON"]),
        ({"a": None, "b": [1.5, "x", True]}, []),
        (None, []),
    ],
)
def test_json_annotations_must_be_lossless_json(
    keyword: str, value: object, messages: list[str]
) -> None:
    schema = obj(p={"type": "string", keyword: value})
    assert schema_errors(schema) == [f"/properties/p/{keyword}{m}" for m in messages]


def test_a_cyclic_schema_is_rejected() -> None:
    node: dict[str, Any] = {"type": "array"}
    node["items"] = node
    schema = obj(a=node)
    assert schema_errors(schema) == ["/properties/a/items: cycle"]


def test_a_shared_subschema_is_not_a_cycle() -> None:
    shared = {"type": "string"}
    assert schema_errors(obj(a=shared, b=shared)) == []


def test_every_violation_is_listed_in_one_error() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "minLength": 1},
            "b": {"type": "array", "items": {"type": "strin"}},
            "c": {"type": "integer", "enum": ["x"]},
        },
        "required": ["a", "d"],
        "additionalProperties": "no",
        "default": {1, 2},
    }
    with pytest.raises(OutputSchemaError) as caught:
        assert_supported_output_schema(schema)
    violations = [
        "/properties/a/minLength: unsupported keyword 'minLength'",
        f"/properties/b/items/type: must be one of {TYPE_LIST}, got 'strin'",
        "/properties/c/enum/0: \"x\" does not match type 'integer'",
        "/required/1: 'd' is not declared in 'properties'",
        "/additionalProperties: must be true or false, got str",
        "/default: set is not JSON",
    ]
    assert caught.value.violations == tuple(violations)
    assert str(caught.value) == "Unsupported output schema:\n" + "\n".join(
        f"- {v}" for v in violations
    )
    assert caught.value.code == "INVALID_OUTPUT_SCHEMA"
    assert caught.value.name == "OutputSchemaError"


def test_the_schema_is_not_changed_by_checking() -> None:
    schema = json.loads(json.dumps(FULL_SCHEMA))
    before = json.dumps(schema)
    assert_supported_output_schema(schema)
    validate_structured_value(schema, {"summary": "", "count": 1})
    assert json.dumps(schema) == before


# --- the validator ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "value", "got"),
    [
        ("string", "x", None),
        ("string", "", None),
        ("string", 1, "integer"),
        ("string", None, "null"),
        ("integer", 3, None),
        ("integer", -3.0, None),
        ("integer", 3.5, "number"),
        ("integer", True, "boolean"),
        ("integer", "3", "string"),
        ("number", 3, None),
        ("number", 3.5, None),
        ("number", False, "boolean"),
        ("number", None, "null"),
        ("boolean", False, None),
        ("boolean", 0, "integer"),
        ("boolean", "true", "string"),
        ("null", None, None),
        ("null", 0, "integer"),
        ("null", "", "string"),
        ("null", False, "boolean"),
        ("object", {}, None),
        ("object", [], "array"),
        ("array", [], None),
        ("array", (1,), None),
        ("array", {}, "object"),
        ("array", "ab", "string"),
    ],
)
def test_type_is_enforced(kind: str, value: object, got: str | None) -> None:
    expected = [] if got is None else [f"/v: expected {kind}, got {got}"]
    assert value_errors(obj(v={"type": kind}), {"v": value}) == expected


def test_the_root_value_must_be_an_object() -> None:
    assert value_errors({"type": "object"}, [1]) == ["/: expected object, got array"]
    assert value_errors({"type": "object"}, None) == ["/: expected object, got null"]


def test_enum_is_enforced_as_json_equality() -> None:
    schema = obj(
        c={"type": "string", "enum": ["red", "grün"]}, n={"type": "number", "enum": [1, 2.5]}
    )
    assert value_errors(schema, {"c": "red", "n": 1.0}) == []
    assert value_errors(schema, {"c": "grün", "n": 2.5}) == []
    assert value_errors(schema, {"c": "blue", "n": 3}) == [
        '/c: "blue" is not one of "red", "grün"',
        "/n: 3 is not one of 1, 2.5",
    ]


def test_bool_never_equals_a_number_in_enum_or_const() -> None:
    schema = obj(e={"type": "integer", "enum": [1, 0]}, c={"type": "boolean", "const": True})
    assert value_errors(schema, {"e": True, "c": 1}) == [
        "/e: expected integer, got boolean",
        "/c: expected boolean, got integer",
    ]


def test_const_is_enforced() -> None:
    schema = obj(k={"type": "string", "const": "v1"}, z={"type": "null", "const": None})
    assert value_errors(schema, {"k": "v1", "z": None}) == []
    assert value_errors(schema, {"k": "v2"}) == ['/k: must be "v1", got "v2"']


def test_enum_and_const_together_must_both_hold() -> None:
    schema = obj(k={"type": "integer", "enum": [1, 2], "const": 2})
    assert value_errors(schema, {"k": 2}) == []
    assert value_errors(schema, {"k": 1}) == ["/k: must be 2, got 1"]
    assert value_errors(schema, {"k": 3}) == ["/k: 3 is not one of 1, 2", "/k: must be 2, got 3"]


def test_required_is_enforced_at_every_level() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "o": {"type": "object", "properties": {"x/y": {"type": "null"}}, "required": ["x/y"]},
        },
        "required": ["a", "o"],
    }
    assert value_errors(schema, {"a": "", "o": {"x/y": None}}) == []
    assert value_errors(schema, {}) == [
        "/a: missing required property",
        "/o: missing required property",
    ]
    assert value_errors(schema, {"a": "", "o": {}}) == ["/o/x~1y: missing required property"]


def test_additional_properties_false_rejects_extra_keys() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "additionalProperties": False,
    }
    assert value_errors(schema, {"a": "x"}) == []
    assert value_errors(schema, {"a": "x", "b": 1, "~": 2}) == [
        "/b: unexpected property (additionalProperties is false)",
        "/~0: unexpected property (additionalProperties is false)",
    ]


@pytest.mark.parametrize("additional", [True, None])
def test_extra_keys_are_allowed_unless_additional_properties_is_false(
    additional: bool | None,
) -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}
    if additional is not None:
        schema["additionalProperties"] = additional
    assert value_errors(schema, {"a": "x", "b": [1, {"c": None}]}) == []


def test_extra_keys_are_not_validated_against_anything() -> None:
    assert value_errors({"type": "object"}, {"anything": {"at": ["all", 1, None]}}) == []


def test_items_are_enforced_with_their_index() -> None:
    schema = obj(
        rows={
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"n": {"type": "integer"}},
                "required": ["n"],
                "additionalProperties": False,
            },
        }
    )
    value = {"rows": [{"n": 1}, {"n": "2"}, {}, {"n": 3, "m": 4}, 5]}
    assert value_errors(schema, value) == [
        "/rows/1/n: expected integer, got string",
        "/rows/2/n: missing required property",
        "/rows/3/m: unexpected property (additionalProperties is false)",
        "/rows/4: expected object, got integer",
    ]


def test_an_array_without_items_accepts_any_json_elements() -> None:
    assert value_errors(obj(a={"type": "array"}), {"a": [1, "x", None, [{}]]}) == []


def test_a_frozen_value_is_validated_like_a_plain_one() -> None:
    value = freeze_json({"summary": "s", "count": 2, "tags": ["a", "b"]})
    assert value_errors(FULL_SCHEMA, value) == []


@pytest.mark.parametrize(
    ("value", "messages"),
    [
        ({"a": {1, 2}}, ["/a: set is not JSON"]),
        (
            {"a": float("nan"), "b": datetime.date(2024, 1, 1)},
            ["/a: nan is not a JSON number", "/b: date is not JSON"],
        ),
        ({1: "x"}, ["/: key 1 is not a string"]),
        (collections.OrderedDict(a=1), ["/: OrderedDict is not JSON"]),
        (PlainMapping({"a": 1}), ["/: PlainMapping is not JSON"]),
    ],
)
def test_a_value_that_is_not_lossless_json_is_rejected(value: object, messages: list[str]) -> None:
    assert value_errors({"type": "object"}, value) == messages


def test_a_cyclic_value_is_rejected() -> None:
    value: dict[str, Any] = {}
    value["self"] = value
    assert value_errors({"type": "object"}, value) == ["/self: cycle"]


def test_validating_against_an_unsupported_schema_raises_the_schema_error() -> None:
    with pytest.raises(OutputSchemaError) as caught:
        validate_structured_value({"type": "object", "minProperties": 1}, {})
    assert caught.value.violations == ("/minProperties: unsupported keyword 'minProperties'",)


def test_the_value_error_lists_every_violation() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    with pytest.raises(StructuredValueError) as caught:
        validate_structured_value(schema, {"b": 1.5, "c": 0})
    violations = (
        "/a: missing required property",
        "/b: expected integer, got number",
        "/c: unexpected property (additionalProperties is false)",
    )
    assert caught.value.violations == violations
    assert str(caught.value) == (
        "Structured value does not match the output schema:\n"
        + "\n".join(f"- {v}" for v in violations)
    )
    assert isinstance(caught.value, ValueError)


# --- properties ---------------------------------------------------------------------------------

SCALAR_TYPES = ("string", "number", "integer", "boolean", "null")
NAMES = st.text(alphabet="ab/~é ", max_size=4)
FINITE = st.floats(allow_nan=False, allow_infinity=False)
SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(max_size=4),
    "number": st.one_of(st.integers(-(10**6), 10**6), FINITE),
    "integer": st.one_of(st.integers(-(10**6), 10**6), st.integers(-100, 100).map(float)),
    "boolean": st.booleans(),
    "null": st.none(),
}
JSON_DATA: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | FINITE | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3),
    max_leaves=6,
)
WRONG: dict[str, object] = {
    "string": 7,
    "number": "x",
    "integer": "x",
    "boolean": "x",
    "null": "x",
    "object": [],
    "array": {},
}
WRONG_NAME = {"string": "integer", "object": "array", "array": "object"}


@st.composite
def annotation_keywords(draw: st.DrawFn) -> dict[str, Any]:
    return draw(
        st.fixed_dictionaries(
            {},
            optional={
                "description": st.text(max_size=4),
                "title": st.text(max_size=4),
                "default": JSON_DATA,
                "examples": st.lists(JSON_DATA, max_size=2),
            },
        )
    )


@st.composite
def schema_nodes(draw: st.DrawFn, depth: int = 2, root: bool = False) -> dict[str, Any]:
    kind = "object" if root else draw(st.sampled_from(SCHEMA_TYPES))
    node: dict[str, Any] = {"type": kind, **draw(annotation_keywords())}
    if kind in SCALARS:
        scalars = SCALARS[kind]
        choice = draw(st.sampled_from(["plain", "enum", "const", "both"]))
        if choice in ("enum", "both"):
            node["enum"] = draw(st.lists(scalars, min_size=1, max_size=3))
        if choice == "const":
            node["const"] = draw(scalars)
        if choice == "both":
            node["const"] = draw(st.sampled_from(node["enum"]))
    elif kind == "object":
        if depth > 0 and draw(st.booleans()):
            node["properties"] = draw(st.dictionaries(NAMES, schema_nodes(depth - 1), max_size=3))
            names = sorted(node["properties"])
            if draw(st.booleans()):
                node["required"] = (
                    draw(st.lists(st.sampled_from(names), unique=True)) if names else []
                )
        if draw(st.booleans()):
            node["additionalProperties"] = draw(st.booleans())
    elif depth > 0 and draw(st.booleans()):
        node["items"] = draw(schema_nodes(depth - 1))
    return node


output_schemas = schema_nodes(root=True)


def values_for(node: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """A strategy of values ``node`` accepts."""
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node["type"]
    if kind in SCALARS:
        return SCALARS[kind]
    if kind == "array":
        items = values_for(node["items"]) if "items" in node else JSON_DATA
        return st.lists(items, max_size=3)
    return objects_for(node)


@st.composite
def objects_for(draw: st.DrawFn, node: Mapping[str, Any]) -> dict[str, Any]:
    properties: Mapping[str, Any] = node.get("properties", {})
    required = set(node.get("required", ()))
    value: dict[str, Any] = {}
    for name, child in properties.items():
        if name in required or draw(st.booleans()):
            value[name] = draw(values_for(child))
    if node.get("additionalProperties", True) is not False:
        extra = draw(
            st.dictionaries(NAMES.filter(lambda k: k not in properties), JSON_DATA, max_size=2)
        )
        value.update(extra)
    return value


def token(key: str | int) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def pointer(keys: list[str | int]) -> str:
    return "".join(f"/{token(k)}" for k in keys) or "/"


def mutations(
    node: Mapping[str, Any], value: Any, keys: list[str | int]
) -> Iterator[tuple[str, list[str | int], Any, str]]:
    """Every single mutation of ``value`` that ``node`` rejects: (how, where, what, message)."""
    kind = node["type"]
    wrong = WRONG[kind]
    yield (
        "replace",
        keys,
        wrong,
        f"{pointer(keys)}: expected {kind}, got {WRONG_NAME.get(kind, 'string')}",
    )
    if kind == "object":
        properties = node.get("properties", {})
        for name in node.get("required", ()):
            yield (
                "delete",
                [*keys, name],
                None,
                f"{pointer([*keys, name])}: missing required property",
            )
        if node.get("additionalProperties") is False:
            extra = "extra!"  # not in NAMES' alphabet, so never a declared property
            yield (
                "replace",
                [*keys, extra],
                0,
                f"{pointer([*keys, extra])}: unexpected property (additionalProperties is false)",
            )
        for name, item in value.items():
            if name in properties:
                yield from mutations(properties[name], item, [*keys, name])
    elif kind == "array" and "items" in node:
        for index, item in enumerate(value):
            yield from mutations(node["items"], item, [*keys, index])


def mutated(value: Any, how: str, keys: list[str | int], new: Any) -> Any:
    """A copy of ``value`` with the item at ``keys`` set to ``new`` (or deleted)."""
    if not keys:
        return new
    head, *rest = keys
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    if rest:
        copy[head] = mutated(copy[head], how, rest, new)
    elif how == "delete":
        del copy[head]
    else:
        copy[head] = new
    return copy


FAST = settings(max_examples=60, deadline=None)


@FAST
@given(output_schemas)
def test_generated_schemas_are_supported(schema: dict[str, Any]) -> None:
    assert schema_errors(schema) == []
    assert schema_errors(freeze_json(schema)) == []
    assert schema_errors(json.loads(json.dumps(schema))) == []
    jsonschema.Draft202012Validator.check_schema(schema)


@FAST
@given(st.data())
def test_values_generated_from_a_schema_are_valid(data: st.DataObject) -> None:
    schema = data.draw(output_schemas)
    value = data.draw(values_for(schema))
    assert value_errors(schema, value) == []
    assert value_errors(schema, freeze_json(value)) == []
    assert jsonschema.Draft202012Validator(schema).is_valid(value)


@FAST
@given(st.data())
def test_a_mutated_value_fails_naming_the_mutated_path(data: st.DataObject) -> None:
    schema = data.draw(output_schemas)
    value = data.draw(values_for(schema))
    how, keys, new, message = data.draw(st.sampled_from(list(mutations(schema, value, []))))
    broken = mutated(value, how, keys, new)
    errors = value_errors(schema, broken)
    assert message in errors
    assert not jsonschema.Draft202012Validator(schema).is_valid(broken)


@FAST
@given(st.data())
def test_the_validator_agrees_with_json_schema_on_any_value(data: st.DataObject) -> None:
    schema = data.draw(output_schemas)
    value = data.draw(
        st.one_of(values_for(schema), st.dictionaries(NAMES, JSON_DATA, max_size=4), JSON_DATA)
    )
    accepted = value_errors(schema, value) == []
    assert accepted == jsonschema.Draft202012Validator(schema).is_valid(value)
