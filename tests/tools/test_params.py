"""Attrs classes as tool parameters: derived JSON Schema, validation and typed structuring."""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import attrs
import cattrs
import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.params import (
    attrs_json_schema,
    is_attrs_parameters,
    structure_attrs_args,
)
from acp_sidecar.tools.schema import SchemaProp


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Number(enum.Enum):
    ONE = 1


@attrs.frozen
class FileRef:
    path: Annotated[str, "Path of the file"]
    line: int | None = None


@attrs.frozen
class ReadArgs:
    path: Annotated[str, "File to read, relative to the workspace"]
    offset: Annotated[int, "First line (1-based)"] = 1
    mode: Literal["text", "lines"] = "text"
    files: list[FileRef] = attrs.field(factory=list)
    limit: int | None = None


@attrs.frozen
class AllKinds:
    ratio: float
    flag: bool
    colour: Colour
    tags: tuple[str, ...]
    seq: Sequence[Annotated[int, "an item"]]
    note: Annotated[str | None, "ignored"] = attrs.field(
        default=None, metadata={"description": "From metadata"}
    )
    maybe: Annotated[int, "Maybe"] | None = attrs.field(default=None, kw_only=True)
    nullable: str | None = attrs.field(kw_only=True)
    ref: FileRef = FileRef("a")
    pair: tuple[int, ...] = (1, 2)
    hidden: int = attrs.field(init=False, default=0)


@attrs.frozen
class Painted:
    colour: Colour = Colour.RED


@attrs.frozen
class Positive:
    n: int = attrs.field(validator=attrs.validators.gt(0))


@attrs.define
class Node:
    children: list[Node]


@attrs.frozen
class Unresolved:
    x: Missing  # type: ignore[name-defined]  # noqa: F821


@attrs.frozen
class BadDefault:
    mode: Literal["a", "b"] = "c"  # type: ignore[assignment]


@attrs.frozen
class NotJsonDefault:
    value: float = float("nan")


def field_class(annotation: object) -> type:
    return attrs.make_class("Bad", {"field": attrs.field(type=annotation)})


def violations_of(cls: type, args: object) -> tuple[str, ...]:
    with pytest.raises(ToolArgsError) as info:
        structure_attrs_args(cls, args)
    return info.value.violations


FILE_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path of the file"},
        "line": {"type": "integer"},
    },
    "required": ["path"],
    "additionalProperties": False,
}


def test_json_schema_of_read_args() -> None:
    assert attrs_json_schema(ReadArgs) == {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File to read, relative to the workspace"},
            "offset": {"type": "integer", "description": "First line (1-based)", "default": 1},
            "mode": {"type": "string", "enum": ["text", "lines"], "default": "text"},
            "files": {"type": "array", "items": FILE_SCHEMA},
            "limit": {"type": "integer"},
        },
        "required": ["path"],
        "additionalProperties": False,
    }


def test_json_schema_of_every_supported_kind() -> None:
    schema = attrs_json_schema(AllKinds)
    assert schema == {
        "type": "object",
        "properties": {
            "ratio": {"type": "number"},
            "flag": {"type": "boolean"},
            "colour": {"type": "string", "enum": ["red", "blue"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "seq": {"type": "array", "items": {"type": "integer", "description": "an item"}},
            "note": {"type": "string", "description": "From metadata"},
            "maybe": {"type": "integer", "description": "Maybe"},
            "nullable": {"type": "string"},
            "ref": {**FILE_SCHEMA, "default": {"path": "a"}},
            "pair": {"type": "array", "items": {"type": "integer"}, "default": [1, 2]},
        },
        "required": ["ratio", "flag", "colour", "tags", "seq"],
        "additionalProperties": False,
    }
    jsonschema.Draft202012Validator.check_schema(schema)
    assert list(schema["properties"]["ref"]) == [
        "type",
        "default",
        "properties",
        "required",
        "additionalProperties",
    ]


def test_each_json_schema_is_a_fresh_document() -> None:
    first = attrs_json_schema(ReadArgs)
    first["properties"].clear()
    assert attrs_json_schema(ReadArgs)["properties"]


def test_structure_returns_typed_instances() -> None:
    args = {"path": "p", "offset": 2.0, "files": [{"path": "q", "line": 3}, {"path": "r"}]}
    result = structure_attrs_args(ReadArgs, args)
    assert result == ReadArgs(
        path="p", offset=2, files=[FileRef("q", 3), FileRef("r")], mode="text", limit=None
    )
    assert type(result.offset) is int
    assert type(result.files) is list
    assert type(result.files[0]) is FileRef
    bare = structure_attrs_args(ReadArgs, {"path": "p"})
    assert bare == ReadArgs(path="p")
    assert bare.files == []
    assert bare.files is not structure_attrs_args(ReadArgs, {"path": "p"}).files


def test_structure_every_kind() -> None:
    result = structure_attrs_args(
        AllKinds,
        {"ratio": 1, "flag": True, "colour": "blue", "tags": ["a"], "seq": [1, 2.0], "maybe": 4},
    )
    assert result == AllKinds(
        ratio=1.0,
        flag=True,
        colour=Colour.BLUE,
        tags=("a",),
        seq=(1, 2),
        maybe=4,
        nullable=None,
    )
    assert type(result.ratio) is float
    assert type(result.tags) is tuple
    assert result.ref == FileRef("a")
    assert result.pair == (1, 2)
    assert result.hidden == 0


def test_enum_default_is_emitted_as_its_value() -> None:
    assert attrs_json_schema(Painted)["properties"]["colour"] == {
        "type": "string",
        "enum": ["red", "blue"],
        "default": "red",
    }
    assert structure_attrs_args(Painted, {}) == Painted(Colour.RED)
    assert structure_attrs_args(Painted, {"colour": "blue"}).colour is Colour.BLUE


def test_structure_reports_every_violation_with_its_path() -> None:
    args = {
        "offset": "2",
        "mode": "bytes",
        "files": [{"path": 1}, {"line": True}],
        "limit": None,
        "extra": {},
    }
    assert violations_of(ReadArgs, args) == (
        "/path: required property missing",
        "/offset: expected integer, got string",
        '/mode: expected one of "text", "lines", got "bytes"',
        "/files/0/path: expected string, got number",
        "/files/1/path: required property missing",
        "/files/1/line: expected integer, got boolean",
        "/limit: expected integer, got null",
        "/extra: unexpected property",
    )
    assert violations_of(ReadArgs, []) == ("/: expected object, got array",)
    assert violations_of(AllKinds, {"ratio": 1, "flag": 1, "colour": "green", "tags": "a"}) == (
        "/flag: expected boolean, got number",
        '/colour: expected one of "red", "blue", got "green"',
        "/tags: expected array, got string",
        "/seq: required property missing",
    )


def test_own_validators_are_reported_as_args_errors() -> None:
    assert structure_attrs_args(Positive, {"n": 1}) == Positive(1)
    assert violations_of(Positive, {"n": 0}) == ("/: 'n' must be > 0: 0",)


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (
            dict[str, int],
            "Bad.field: unsupported type dict[str, int]; supported: str, int, float, bool, "
            "Literal[...] of strings, an Enum of strings, list[X], tuple[X, ...], Sequence[X], "
            "a nested attrs class, and X | None on a field",
        ),
        (int | str, "Bad.field: unsupported type int | str; supported: "),
        (int | str | None, "Bad.field: unsupported type typing.Union[int, str]; supported: "),
        (Any, "Bad.field: unsupported type typing.Any; supported: "),
        (list, "Bad.field: unsupported type <class 'list'>; supported: "),
        (tuple[int, str], "Bad.field: only tuple[X, ...] is supported, got tuple[int, str]"),
        (list[int | None], "Bad.field: None is only supported on a field, not in list[int | None]"),
        (Literal["a", 1], "Bad.field: Literal values must all be strings, got ('a', 1)"),
        (Number, "Bad.field: an Enum needs string values, Number has not"),
        (list[dict[str, int]], "Bad.field: unsupported type dict[str, int]; supported: "),
    ],
)
def test_unsupported_annotations_fail_at_definition(annotation: object, message: str) -> None:
    with pytest.raises(TypeError) as info:
        attrs_json_schema(field_class(annotation))
    assert str(info.value).startswith(message)


def test_definition_errors_name_the_class_or_field() -> None:
    with pytest.raises(TypeError, match=r"^Node: a recursive parameters class cannot be written"):
        attrs_json_schema(Node)
    with pytest.raises(TypeError) as info:
        attrs_json_schema(Unresolved)
    assert (
        str(info.value)
        == "Unresolved: cannot resolve its annotations: name 'Missing' is not defined"
    )
    with pytest.raises(TypeError) as info:
        attrs_json_schema(BadDefault)
    assert str(info.value) == (
        'BadDefault.mode: invalid default \'c\': default: expected one of "a", "b", got "c"'
    )
    with pytest.raises(TypeError) as info:
        attrs_json_schema(NotJsonDefault)
    assert (
        str(info.value)
        == "NotJsonDefault.value: default nan is not JSON: /: nan is not a JSON number"
    )
    described = attrs.make_class(
        "Described", {"x": attrs.field(type=int, metadata={"description": 1})}
    )
    with pytest.raises(TypeError, match=r"^Described.x: metadata 'description' must be a string$"):
        attrs_json_schema(described)
    untyped = attrs.make_class("Untyped", {"x": attrs.field()})
    with pytest.raises(TypeError, match=r"^Untyped.x: has no type annotation$"):
        attrs_json_schema(untyped)
    with pytest.raises(TypeError, match=r"^parameters must be an attrs class, got <class 'dict'>$"):
        structure_attrs_args(dict, {})


def test_is_attrs_parameters() -> None:
    assert is_attrs_parameters(ReadArgs)
    assert not is_attrs_parameters(ReadArgs(path="p"))
    assert not is_attrs_parameters({"path": SchemaProp("string")})
    assert not is_attrs_parameters(dict)


# --- properties ------------------------------------------------------------------------------

FINITE = st.floats(allow_nan=False, allow_infinity=False)
FILE_REFS = st.builds(FileRef, path=st.text(max_size=5), line=st.none() | st.integers())
READ_ARGS = st.builds(
    ReadArgs,
    path=st.text(max_size=5),
    offset=st.integers(),
    mode=st.sampled_from(["text", "lines"]),
    files=st.lists(FILE_REFS, max_size=3),
    limit=st.none() | st.integers(),
)
ALL_KINDS = st.builds(
    AllKinds,
    ratio=FINITE,
    flag=st.booleans(),
    colour=st.sampled_from(Colour),
    tags=st.lists(st.text(max_size=3), max_size=3).map(tuple),
    seq=st.lists(st.integers(), max_size=3).map(tuple),
    note=st.none() | st.text(max_size=3),
    maybe=st.none() | st.integers(),
    nullable=st.none() | st.text(max_size=3),
    ref=FILE_REFS,
    pair=st.lists(st.integers(), max_size=3).map(tuple),
)


def wire(value: Any) -> Any:
    """What a model sends for ``value``: JSON text, optional fields left out rather than null."""
    if isinstance(value, dict):
        return {key: wire(item) for key, item in value.items() if item is not None}
    if isinstance(value, list | tuple):
        return [wire(item) for item in value]
    return value


@settings(max_examples=40, deadline=None)
@given(st.one_of(READ_ARGS, ALL_KINDS))
def test_structuring_inverts_the_wire_form(instance: Any) -> None:
    cls = type(instance)
    sent = json.loads(json.dumps(wire(cattrs.Converter().unstructure(instance))))
    jsonschema.validate(sent, attrs_json_schema(cls))
    result = structure_attrs_args(cls, sent)
    assert result == instance
    assert type(result) is cls
