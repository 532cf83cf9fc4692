"""The schema DSL: props valid by construction, JSON Schema, and argument validation."""

from __future__ import annotations

import copy
import json
import math
from collections import OrderedDict
from typing import Any

import attrs
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_sidecar.tools.args import CompiledSpec, compile_spec, validate_args
from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.json_values import FrozenDict, thaw
from acp_sidecar.tools.schema import (
    NO_DEFAULT,
    SchemaProp,
    SchemaSpecError,
    coerce_spec,
    schema_spec_to_json_schema,
)

TYPES_MESSAGE = '"string", "number", "integer", "boolean", "object", "array"'

FILE = SchemaProp("object", properties={"path": SchemaProp("string", required=True)})
SPEC = {
    "path": SchemaProp("string", required=True, description="File to read"),
    "offset": SchemaProp("integer", default=1),
    "mode": SchemaProp("string", enum=["a", "b"], default="a"),
    "ratio": SchemaProp("number"),
    "flag": SchemaProp("boolean"),
    "files": SchemaProp("array", items=FILE),
}


def violations_of(spec: Any, args: object) -> tuple[str, ...]:
    with pytest.raises(ToolArgsError) as info:
        validate_args(spec, args)
    return info.value.violations


def spec_problems(make: Any) -> tuple[str, ...]:
    with pytest.raises(SchemaSpecError) as info:
        make()
    return info.value.violations


# --- SchemaProp ------------------------------------------------------------------------------


def test_prop_defaults() -> None:
    prop = SchemaProp("string")
    assert (prop.type, prop.required, prop.description, prop.enum) == ("string", False, None, None)
    assert prop.default is NO_DEFAULT
    assert prop.properties is None
    assert prop.items is None


def test_prop_is_frozen_hashable_and_compares_by_value() -> None:
    prop = SchemaProp("string", enum=["a"], default="a")
    assert prop == SchemaProp("string", enum=("a",), default="a")
    assert hash(prop) == hash(SchemaProp("string", enum=("a",), default="a"))
    assert prop.enum == ("a",)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        prop.type = "number"  # type: ignore[misc]
    nested = SchemaProp("object", properties={"a": prop})
    with pytest.raises(TypeError):
        nested.properties["b"] = prop  # type: ignore[index]
    assert hash(nested) == hash(SchemaProp("object", properties={"a": prop}))


def test_prop_survives_deepcopy() -> None:
    prop = SchemaProp("array", items=FILE, default=[{"path": "a"}], description="d")
    for clone in (copy.deepcopy(prop), copy.copy(prop)):
        assert clone == prop
        assert validate_args({"f": clone}, {"f": [{"path": "b"}]}) == {"f": ({"path": "b"},)}


def test_prop_defaults_are_normalised_and_frozen() -> None:
    assert SchemaProp("integer", default=3.0).default == 3
    assert type(SchemaProp("integer", default=3.0).default) is int
    assert type(SchemaProp("number", default=3).default) is int
    listed = SchemaProp("array", items=SchemaProp("integer"), default=[1, 2.0])
    assert listed.default == (1, 2)
    obj = SchemaProp(
        "object",
        properties={"a": SchemaProp("integer", default=5), "b": SchemaProp("string")},
        default={"b": "x"},
    )
    assert obj.default == {"b": "x", "a": 5}
    assert type(obj.default) is FrozenDict
    free = SchemaProp("object", default={"k": [1, {"n": None}]})
    assert free.default == {"k": (1, {"n": None})}


@pytest.mark.parametrize(
    ("make", "problems"),
    [
        (lambda: SchemaProp("str"), (f'type: expected one of {TYPES_MESSAGE}, got "str"',)),
        (lambda: SchemaProp(1), (f"type: expected one of {TYPES_MESSAGE}, got number",)),
        (
            lambda: SchemaProp("number", enum=["a"]),
            ('enum: only allowed when type is "string"',),
        ),
        (lambda: SchemaProp("string", enum=[]), ("enum: must not be empty",)),
        (
            lambda: SchemaProp("string", enum=["a", "b", "a"]),
            ('enum/2: duplicate value "a"',),
        ),
        (
            lambda: SchemaProp("string", enum=["a", 1]),
            ("enum/1: expected string, got number",),
        ),
        (
            lambda: SchemaProp("string", enum="ab"),
            ("enum: expected an array of strings, got string",),
        ),
        (
            lambda: SchemaProp("string", properties={}),
            ('properties: only allowed when type is "object"',),
        ),
        (
            lambda: SchemaProp("object", properties=[]),
            ("properties: expected a mapping of names to SchemaProp, got array",),
        ),
        (
            lambda: SchemaProp("object", properties={"a/b": {"type": "string"}}),
            (
                "properties/a~1b: expected SchemaProp, got object"
                " (use coerce_spec for the plain-dict form)",
            ),
        ),
        (
            lambda: SchemaProp("object", properties={1: SchemaProp("string")}),
            ("properties: property name 1 is not a string",),
        ),
        (
            lambda: SchemaProp("object", items=SchemaProp("string")),
            ('items: only allowed when type is "array"',),
        ),
        (
            lambda: SchemaProp("array", items={"type": "string"}),
            ("items: expected SchemaProp, got object",),
        ),
        (lambda: SchemaProp("string", required=1), ("required: expected boolean, got number",)),
        (
            lambda: SchemaProp("string", description=b"x"),
            ("description: expected string, got non-JSON bytes",),
        ),
        (
            lambda: SchemaProp("string", required=True, default="x"),
            ("default: not allowed on a required property (it would never be used)",),
        ),
        (lambda: SchemaProp("string", default=None), ("default: expected string, got null",)),
        (
            lambda: SchemaProp("number", default=math.nan),
            ("default: expected JSON value, got NaN",),
        ),
        (
            lambda: SchemaProp("object", default={"a": [math.inf]}),
            ("default/a/0: expected JSON value, got Infinity",),
        ),
        (
            lambda: SchemaProp("array", default={1}),
            ("default: expected JSON value, got non-JSON set",),
        ),
        (
            lambda: SchemaProp("string", enum=["a"], default="b"),
            ('default: expected one of "a", got "b"',),
        ),
        (
            lambda: SchemaProp("array", items=FILE, default=[{"path": 1}]),
            ("default/0/path: expected string, got number",),
        ),
        (
            lambda: SchemaProp("number", required="yes", description=3, enum=[], items=FILE),
            (
                "required: expected boolean, got string",
                "description: expected string, got number",
                'enum: only allowed when type is "string"',
                "enum: must not be empty",
                'items: only allowed when type is "array"',
            ),
        ),
    ],
)
def test_prop_rejects_malformed(make: Any, problems: tuple[str, ...]) -> None:
    assert spec_problems(make) == problems


def test_spec_error_message_lists_every_problem() -> None:
    with pytest.raises(SchemaSpecError) as info:
        SchemaProp("number", enum=[])
    assert str(info.value) == (
        "Invalid schema spec:\n"
        '- enum: only allowed when type is "string"\n'
        "- enum: must not be empty"
    )
    assert isinstance(info.value, ValueError)


# --- coerce_spec -----------------------------------------------------------------------------


def test_coerce_spec_plain_dict_form() -> None:
    plain = {
        "path": {"type": "string", "required": True, "description": "File to read"},
        "offset": {"type": "integer", "default": 1},
        "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
        "ratio": {"type": "number"},
        "flag": SchemaProp("boolean"),
        "files": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"path": {"type": "string", "required": True}},
            },
        },
    }
    assert coerce_spec(plain) == SPEC
    assert list(coerce_spec(plain)) == list(SPEC)
    assert coerce_spec(SPEC) == SPEC


def test_coerce_spec_reports_every_problem_with_its_path() -> None:
    problems = spec_problems(
        lambda: coerce_spec(
            {
                "a": {"type": "str", "colour": "red"},
                "b": {"required": True},
                "c": {"type": "number", "enum": "x"},
                "d": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"p/q": {"type": 1}}},
                },
                "e": {"type": "string", "enum": ["x"], "default": "y"},
                "f": "string",
                "g": {"type": "object", "properties": [1]},
                7: {"type": "string"},
            }
        )
    )
    assert problems == (
        "/a/colour: unknown keyword",
        f'/a/type: expected one of {TYPES_MESSAGE}, got "str"',
        "/b/type: required keyword missing",
        "/c/enum: expected an array of strings, got string",
        f"/d/items/properties/p~1q/type: expected one of {TYPES_MESSAGE}, got number",
        '/e/default: expected one of "x", got "y"',
        "/f: expected a SchemaProp or a mapping, got string",
        "/g/properties: expected a mapping of property names to props, got array",
        "/: property name 7 is not a string",
    )


def test_coerce_spec_rejects_non_mapping() -> None:
    assert spec_problems(lambda: coerce_spec(["path"])) == (
        "/: expected a mapping of property names to props, got array",
    )


# --- JSON Schema -----------------------------------------------------------------------------


def test_json_schema_of_spec() -> None:
    assert schema_spec_to_json_schema(SPEC) == {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to read"},
            "offset": {"type": "integer", "default": 1},
            "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "files": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }


def test_json_schema_omits_empty_required_and_keeps_free_form_open() -> None:
    spec = {
        "meta": SchemaProp("object", default={"k": [1]}),
        "tags": SchemaProp("array"),
        "none": SchemaProp("object", properties={}),
    }
    schema = schema_spec_to_json_schema(spec)
    assert schema == {
        "type": "object",
        "properties": {
            "meta": {"type": "object", "default": {"k": [1]}},
            "tags": {"type": "array"},
            "none": {"type": "object", "properties": {}, "additionalProperties": False},
        },
        "additionalProperties": False,
    }
    assert type(schema["properties"]["meta"]["default"]["k"]) is list
    jsonschema.Draft202012Validator.check_schema(schema)


def test_json_schema_is_a_fresh_copy_and_required_follows_spec_order() -> None:
    spec = {"z": SchemaProp("string", required=True), "a": SchemaProp("string", required=True)}
    first = schema_spec_to_json_schema(spec)
    assert first["required"] == ["z", "a"]
    first["properties"]["z"]["type"] = "number"
    assert schema_spec_to_json_schema(spec)["properties"]["z"]["type"] == "string"
    assert compile_spec(spec).json_schema() == schema_spec_to_json_schema(spec)


def test_json_schema_rejects_plain_dict_props() -> None:
    assert spec_problems(lambda: schema_spec_to_json_schema({"a": {"type": "string"}})) == (
        "/a: expected SchemaProp, got object (use coerce_spec for the plain-dict form)",
    )
    assert spec_problems(lambda: compile_spec([])) == (  # type: ignore[arg-type]
        "/: expected a mapping of property names to SchemaProp, got array",
    )


# --- validate_args: acceptance and narrowing --------------------------------------------------


def test_valid_args_are_narrowed_frozen_and_defaulted() -> None:
    args = {"path": "x", "offset": 3.0, "ratio": 2, "files": [{"path": "a"}], "flag": False}
    result = validate_args(SPEC, args)
    assert result == {
        "path": "x",
        "offset": 3,
        "mode": "a",
        "ratio": 2,
        "flag": False,
        "files": ({"path": "a"},),
    }
    assert list(result) == ["path", "offset", "mode", "ratio", "flag", "files"]
    assert type(result) is FrozenDict
    assert type(result["offset"]) is int
    assert type(result["files"]) is tuple
    assert type(result["files"][0]) is FrozenDict
    assert args == {"path": "x", "offset": 3.0, "ratio": 2, "files": [{"path": "a"}], "flag": False}
    with pytest.raises(TypeError):
        result["path"] = "y"
    with pytest.raises(TypeError):
        result["files"][0]["path"] = "y"


def test_frozen_input_is_accepted_and_result_detached() -> None:
    frozen = FrozenDict({"path": "x", "files": ({"path": "a"},)})
    result = validate_args(SPEC, frozen)
    assert result is not frozen
    assert result["files"] == ({"path": "a"},)


def test_nested_defaults_filled_only_where_the_parent_is_present() -> None:
    spec = {
        "opts": SchemaProp(
            "object",
            properties={"depth": SchemaProp("integer", default=2), "name": SchemaProp("string")},
        ),
        "list": SchemaProp(
            "array",
            items=SchemaProp("object", properties={"on": SchemaProp("boolean", default=True)}),
        ),
    }
    assert validate_args(spec, {}) == {}
    assert validate_args(spec, {"opts": {}, "list": [{}, {"on": False}]}) == {
        "opts": {"depth": 2},
        "list": ({"on": True}, {"on": False}),
    }


def test_number_and_integer_rules() -> None:
    spec = {"n": SchemaProp("number"), "i": SchemaProp("integer")}
    assert validate_args(spec, {"n": 1, "i": 1}) == {"n": 1, "i": 1}
    assert type(validate_args(spec, {"n": 1.5})["n"]) is float
    assert validate_args(spec, {"n": -0.0, "i": -2.0}) == {"n": 0.0, "i": -2}
    assert type(validate_args(spec, {"i": 1e20})["i"]) is int
    assert violations_of(spec, {"n": True, "i": False}) == (
        "/n: expected number, got boolean",
        "/i: expected integer, got boolean",
    )
    assert violations_of(spec, {"n": math.nan, "i": 2.5}) == (
        "/n: expected number, got NaN",
        "/i: expected integer, got number",
    )
    assert violations_of(spec, {"n": math.inf, "i": -math.inf}) == (
        "/n: expected number, got Infinity",
        "/i: expected integer, got -Infinity",
    )
    assert violations_of(spec, {"n": "1", "i": "1"}) == (
        "/n: expected number, got string",
        "/i: expected integer, got string",
    )


def test_free_form_values_accept_any_lossless_json() -> None:
    spec = {"meta": SchemaProp("object"), "tags": SchemaProp("array")}
    result = validate_args(spec, {"meta": {"a": [1, {"b": None}]}, "tags": [1, "x", [True]]})
    assert result == {"meta": {"a": (1, {"b": None})}, "tags": (1, "x", (True,))}
    assert type(result["meta"]["a"][1]) is FrozenDict
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    assert violations_of(spec, {"meta": {"a": [math.nan], 1: "x"}, "tags": [{1, 2}, cyclic]}) == (
        "/meta/a/0: expected JSON value, got NaN",
        "/meta: property name 1 is not a string",
        "/tags/0: expected JSON value, got non-JSON set",
        "/tags/1/self: cycle",
    )
    assert violations_of(spec, {"meta": [], "tags": {}}) == (
        "/meta: expected object, got array",
        "/tags: expected array, got object",
    )


# --- validate_args: violations ---------------------------------------------------------------


def test_every_violation_listed_in_order() -> None:
    args = {
        "extra": 1,
        "mode": "c",
        "files": [{"path": "a"}, {"path": "b"}, {"path": 3, "x": 0}, "f"],
        "ratio": None,
        "flag": "yes",
        "offset": [],
    }
    assert violations_of(SPEC, args) == (
        "/path: required property missing",
        "/offset: expected integer, got array",
        '/mode: expected one of "a", "b", got "c"',
        "/ratio: expected number, got null",
        "/flag: expected boolean, got string",
        "/files/2/path: expected string, got number",
        "/files/2/x: unexpected property",
        "/files/3: expected object, got string",
        "/extra: unexpected property",
    )


def test_tool_args_error_message_and_code() -> None:
    with pytest.raises(ToolArgsError) as info:
        validate_args(SPEC, {"mode": 1})
    assert str(info.value) == (
        "Invalid arguments:\n"
        "- /path: required property missing\n"
        "- /mode: expected string, got number"
    )
    assert info.value.code == "INVALID_ARGS"


@pytest.mark.parametrize(
    ("args", "violation"),
    [
        ([], "/: expected object, got array"),
        ("{}", "/: expected object, got string"),
        (None, "/: expected object, got null"),
        (OrderedDict(path="x"), "/: expected object, got non-JSON OrderedDict"),
        ({"path": b"x"}, "/path: expected string, got non-JSON bytes"),
        ({"path": "x", 3: 1}, "/: property name 3 is not a string"),
    ],
)
def test_non_json_and_non_object_args(args: object, violation: str) -> None:
    assert violations_of(SPEC, args) == (violation,)


def test_pointer_escaping_and_long_values_cut() -> None:
    spec = {"a/b": SchemaProp("string"), "c~d": SchemaProp("string", enum=["x"])}
    assert violations_of(spec, {"a/b": 1, "c~d": "y" * 100, "e/~": 0}) == (
        "/a~1b: expected string, got number",
        '/c~0d: expected one of "x", got "' + "y" * 64 + '…"',
        "/e~1~0: unexpected property",
    )


def test_validate_args_accepts_compiled_and_caches_plain_specs() -> None:
    compiled = compile_spec(SPEC)
    assert isinstance(compiled, CompiledSpec)
    assert validate_args(compiled, {"path": "x"}) == validate_args(SPEC, {"path": "x"})
    assert validate_args(SPEC, {"path": "y"})["path"] == "y"
    assert spec_problems(lambda: validate_args({"a": {"type": "string"}}, {})) == (
        "/a: expected SchemaProp, got object (use coerce_spec for the plain-dict form)",
    )


def test_empty_spec_accepts_only_the_empty_object() -> None:
    assert validate_args({}, {}) == {}
    assert violations_of({}, {"a": 1}) == ("/a: unexpected property",)


# --- properties ------------------------------------------------------------------------------

NAMES = st.text(alphabet="ab~/", min_size=1, max_size=3)
SCALARS = st.one_of(
    st.sampled_from(["string", "number", "integer", "boolean"]).map(SchemaProp),
    st.lists(st.text(alphabet="abc", max_size=3), min_size=1, max_size=3, unique=True).map(
        lambda members: SchemaProp("string", enum=members)
    ),
)


def _fields(children: st.SearchStrategy[SchemaProp]) -> st.SearchStrategy[dict[str, SchemaProp]]:
    return st.dictionaries(NAMES, st.tuples(children, st.booleans()), max_size=3).map(
        lambda named: {name: attrs.evolve(p, required=r) for name, (p, r) in named.items()}
    )


PROPS = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        _fields(children).map(lambda fields: SchemaProp("object", properties=fields)),
        children.map(lambda item: SchemaProp("array", items=item)),
    ),
    max_leaves=6,
)
SPECS = _fields(PROPS)
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def values_for(prop: SchemaProp) -> st.SearchStrategy[Any]:
    match prop.type:
        case "string":
            return st.text(max_size=4) if prop.enum is None else st.sampled_from(prop.enum)
        case "number":
            return st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False))
        case "integer":
            return st.integers()
        case "boolean":
            return st.booleans()
        case "object":
            assert prop.properties is not None
            return object_values(prop.properties)
        case "array":
            assert prop.items is not None
            return st.lists(values_for(prop.items), max_size=3)


def object_values(spec: dict[str, SchemaProp] | Any) -> st.SearchStrategy[dict[str, Any]]:
    required = {name: values_for(p) for name, p in spec.items() if p.required}
    optional = {name: values_for(p) for name, p in spec.items() if not p.required}
    return st.fixed_dictionaries(required, optional=optional)


def specs_with_values() -> st.SearchStrategy[tuple[dict[str, SchemaProp], dict[str, Any]]]:
    return SPECS.flatmap(lambda spec: st.tuples(st.just(spec), object_values(spec)))


def canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def pointer(keys: tuple[str | int, ...]) -> str:
    return "".join("/" + str(k).replace("~", "~0").replace("/", "~1") for k in keys)


def nodes(prop: SchemaProp, value: Any, keys: tuple[str | int, ...]) -> Any:
    """Every (keys, prop, value) in a valid value, the root included."""
    yield keys, prop, value
    if prop.type == "object" and prop.properties is not None:
        for name, item in value.items():
            yield from nodes(prop.properties[name], item, (*keys, name))
    elif prop.type == "array" and prop.items is not None:
        for index, item in enumerate(value):
            yield from nodes(prop.items, item, (*keys, index))


def replaced(value: Any, keys: tuple[str | int, ...], new: object) -> Any:
    if not keys:
        return new
    value = copy.deepcopy(value)
    holder = value
    for key in keys[:-1]:
        holder = holder[key]
    holder[keys[-1]] = new
    return value


WRONG: dict[str, tuple[object, str]] = {
    "string": (7, "expected string, got number"),
    "number": ("x", "expected number, got string"),
    "integer": (0.5, "expected integer, got number"),
    "boolean": (0, "expected boolean, got number"),
    "object": ([], "expected object, got array"),
    "array": ({}, "expected array, got object"),
}


@FAST
@given(specs_with_values())
def test_generated_values_pass_frozen_and_round_trip(case: Any) -> None:
    spec, value = case
    jsonschema.validate(value, schema_spec_to_json_schema(spec))
    result = validate_args(spec, value)
    assert canonical(result) == canonical(value)
    assert json.loads(json.dumps(result)) == thaw(result)
    assert canonical(json.loads(json.dumps(result))) == canonical(value)
    root = SchemaProp("object", properties=spec)
    for _keys, _prop, node in nodes(root, result, ()):
        assert type(node) not in (dict, list)
        if type(node) is FrozenDict:
            with pytest.raises(TypeError):
                node["new"] = 1
    assert validate_args(spec, result) == result


@FAST
@given(specs_with_values(), st.data())
def test_wrong_type_at_a_random_path_is_named(case: Any, data: st.DataObject) -> None:
    spec, value = case
    root = SchemaProp("object", properties=spec)
    keys, prop, _node = data.draw(st.sampled_from(list(nodes(root, value, ()))))
    if prop.enum is not None:
        new, message = (
            "zzzz",
            f'expected one of {", ".join(json.dumps(m) for m in prop.enum)}, got "zzzz"',
        )
    else:
        new, message = WRONG[prop.type]
    mutated = replaced(value, keys, new)
    assert violations_of(spec, mutated) == (f"{pointer(keys) or '/'}: {message}",)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(mutated, schema_spec_to_json_schema(spec))


@FAST
@given(specs_with_values(), st.data())
def test_missing_and_unknown_properties_are_named(case: Any, data: st.DataObject) -> None:
    spec, value = case
    root = SchemaProp("object", properties=spec)
    objects = [
        (keys, prop, node)
        for keys, prop, node in nodes(root, value, ())
        if prop.type == "object" and prop.properties is not None
    ]
    keys, prop, node = data.draw(st.sampled_from(objects))
    schema = schema_spec_to_json_schema(spec)
    extra = replaced(value, keys, {**node, "zz": 1})
    assert violations_of(spec, extra) == (f"{pointer((*keys, 'zz'))}: unexpected property",)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(extra, schema)
    required = [name for name, p in prop.properties.items() if p.required]
    if required:
        name = data.draw(st.sampled_from(required))
        missing = replaced(value, keys, {k: v for k, v in node.items() if k != name})
        assert violations_of(spec, missing) == (
            f"{pointer((*keys, name))}: required property missing",
        )
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(missing, schema)
