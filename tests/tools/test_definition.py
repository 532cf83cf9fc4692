"""``define_tool``: the typed way to write a tool, validated before the body runs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import attrs
import pytest

from acp_sidecar.tools import (
    GenericCallView,
    GenericResultView,
    SchemaProp,
    TextContent,
    ToolExecution,
    ToolExecutionInput,
    ToolRegistry,
    ToolResult,
    define_tool,
)
from acp_sidecar.tools.json_values import FrozenDict
from acp_sidecar.tools.schema import SchemaSpecError


@attrs.frozen
class Region:
    start: Annotated[int, "First line"]
    end: Annotated[int, "Last line"]


@attrs.frozen
class ReadArgs:
    path: Annotated[str, "File to read"]
    mode: Literal["text", "lines"] = "text"
    regions: list[Region] = attrs.field(factory=list)


async def read_execute(args: ReadArgs, execution: ToolExecution) -> str:
    # No casts: attribute access is typed.
    spans = ",".join(f"{r.start}-{r.end}" for r in args.regions)
    return f"{args.path}:{args.mode}:{spans}"


def present_read(args: ReadArgs) -> GenericCallView:
    return GenericCallView(card="generic", title=f"Read {args.path}", kind="read")


def present_read_result(args: ReadArgs, result: ToolResult) -> GenericResultView:
    return GenericResultView(card="generic", title=f"Read {args.path} ({len(result.content)})")


READ = define_tool(
    name="read",
    description="Read a file",
    parameters=ReadArgs,
    execute=read_execute,
    present_call=present_read,
    present_result=present_read_result,
)


async def run(registry: ToolRegistry, name: str, arguments: Any) -> Any:
    return await registry.execute(ToolExecutionInput(call_id="1", name=name, arguments=arguments))


def test_an_attrs_class_becomes_the_json_schema_the_model_sees() -> None:
    registry = ToolRegistry()
    registry.register(READ)
    assert registry.schemas() == [
        {
            "name": "read",
            "description": "Read a file",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File to read"},
                    "mode": {"type": "string", "enum": ["text", "lines"], "default": "text"},
                    "regions": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "start": {"type": "integer", "description": "First line"},
                                "end": {"type": "integer", "description": "Last line"},
                            },
                            "required": ["start", "end"],
                            "additionalProperties": False,
                        },
                    },
                },
                "required": ["path"],
                "additionalProperties": False,
            },
        }
    ]


async def test_execute_receives_a_structured_instance() -> None:
    registry = ToolRegistry()
    registry.register(READ)
    result = await run(registry, "read", {"path": "a.py", "regions": [{"start": 1, "end": 2.0}]})
    assert not result.is_error
    assert result.content == (TextContent("a.py:text:1-2"),)


async def test_invalid_arguments_list_every_violation_for_the_model() -> None:
    registry = ToolRegistry()
    registry.register(READ)
    result = await run(registry, "read", {"mode": "bytes", "regions": [{"start": "1"}], "extra": 1})
    assert result.is_error
    assert result.error is not None
    assert (result.error.name, result.error.code) == ("ToolArgsError", "INVALID_ARGS")
    message = result.content[0].text
    for violation in (
        "/path: ",
        "/mode: ",
        "/regions/0/start: expected integer, got string",
        "/regions/0/end: ",
        "/extra: ",
    ):
        assert violation in message, message


async def test_a_schema_spec_tool_gets_a_frozen_narrowed_dict_with_defaults() -> None:
    seen: list[Any] = []

    async def execute(args: FrozenDict, execution: ToolExecution) -> str:
        seen.append(args)
        return "ok"

    tool = define_tool(
        name="grep",
        description="Search",
        parameters={
            "pattern": SchemaProp(type="string", required=True),
            "max_results": {"type": "integer", "default": 100},
        },
        execute=execute,
    )
    registry = ToolRegistry()
    registry.register(tool)
    result = await run(registry, "grep", {"pattern": "x"})
    assert not result.is_error
    assert seen == [{"pattern": "x", "max_results": 100}]
    assert isinstance(seen[0], FrozenDict)


def test_presenters_receive_narrowed_arguments_and_fall_back_on_bad_ones() -> None:
    assert READ.present_call is not None and READ.present_result is not None
    view = READ.present_call({"path": "src/a.py"})
    assert view == GenericCallView(card="generic", title="Read src/a.py", kind="read")
    assert READ.present_call({"path": 3}) is None
    result = ToolResult(content=(TextContent("x"),), is_error=False)
    assert READ.present_result({"path": "b"}, result) == GenericResultView(
        card="generic", title="Read b (1)"
    )
    assert READ.present_result({}, result) is None


def test_a_calls_frozen_arguments_are_narrowed_once_for_both_presenters() -> None:
    narrowed: list[object] = []

    def count(path: str) -> str:
        narrowed.append(path)
        return path

    @attrs.frozen
    class Counted:
        path: str = attrs.field(converter=count)

    tool = define_tool(
        name="counted",
        description="x",
        parameters=Counted,
        execute=read_execute,
        present_call=lambda args: GenericCallView(title=args.path),
        present_result=lambda args, result: GenericResultView(title=args.path),
    )
    assert tool.present_call is not None and tool.present_result is not None
    result = ToolResult(content=(), is_error=False)
    stored = FrozenDict({"path": "a"})
    assert tool.present_call(stored) == GenericCallView(title="a")
    assert tool.present_result(stored, result) == GenericResultView(title="a")
    assert narrowed == ["a"]
    other = FrozenDict({"path": "a"})  # equal, but another call's: narrowed anew
    tool.present_result(other, result)
    assert narrowed == ["a", "a"]
    mutable = {"path": "b"}  # could change between the two: narrowed each time
    tool.present_call(mutable)
    mutable["path"] = "c"
    assert tool.present_result(mutable, result) == GenericResultView(title="c")
    assert narrowed == ["a", "a", "b", "c"]
    assert tool.present_call({"path": 3}) is None  # refused arguments are not kept
    assert tool.present_result(FrozenDict({"path": 3}), result) is None


def test_a_malformed_spec_is_refused_when_the_tool_is_defined() -> None:
    async def execute(args: FrozenDict, execution: ToolExecution) -> str:
        return ""

    with pytest.raises(SchemaSpecError) as info:
        define_tool(
            name="bad",
            description="bad",
            parameters={"n": {"type": "float"}, "e": {"type": "integer", "enum": ["a"]}},
            execute=execute,
        )
    assert "/n/type" in str(info.value)
    assert "/e" in str(info.value)


def test_an_unsupported_attrs_field_type_is_refused_when_the_tool_is_defined() -> None:
    @attrs.frozen
    class Bad:
        when: complex

    async def execute(args: Bad, execution: ToolExecution) -> str:
        return ""

    with pytest.raises(TypeError, match="when"):
        define_tool(name="bad", description="bad", parameters=Bad, execute=execute)


def test_everything_a_tool_author_needs_is_importable_from_one_module() -> None:
    import acp_sidecar.tools as tools

    for name in (
        "define_tool",
        "ToolDefinition",
        "ToolRegistry",
        "ToolExecutionInput",
        "ToolExecutionResult",
        "ToolErrorInfo",
        "ToolOutput",
        "TextContent",
        "ImageContent",
        "Allow",
        "Deny",
        "Ask",
        "Accept",
        "Block",
        "ToolArgsError",
        "ToolNotFoundError",
        "OutputSchemaError",
        "SchemaProp",
        "SchemaSpec",
        "schema_spec_to_json_schema",
        "validate_args",
        "assert_supported_output_schema",
        "validate_structured_value",
        "CancelSignal",
        "SchemaSpecError",
        "JsonValueError",
    ):
        assert name in tools.__all__, name
        assert getattr(tools, name) is not None, name
    assert len(set(tools.__all__)) == len(tools.__all__)
    for name in tools.__all__:
        assert getattr(tools, name) is not None, name
    with pytest.raises(AttributeError):
        tools.no_such_name  # noqa: B018
