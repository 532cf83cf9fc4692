"""Test tools with every kind of card, loadable with ``acp-sidecar --tools tests.tooling:TOOLS``."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import attrs

from acp_sidecar.tools import (
    DiffCallView,
    DiffResultView,
    FileDiff,
    GenericCallView,
    TerminalCallView,
    TerminalResultView,
    ToolDefinition,
    ToolExecution,
    ToolOutput,
    ToolResult,
    define_tool,
)


@attrs.frozen
class NoteArgs:
    path: Annotated[str, "The file to change"]
    old: Annotated[str, "Text before"] = ""
    new: Annotated[str, "Text after"] = ""


async def note(args: NoteArgs, execution: ToolExecution) -> ToolOutput:
    return ToolOutput(f"changed {args.path}", meta={"before": args.old, "after": args.new})


NOTE = define_tool(
    name="note",
    description="Pretend to edit a file (a diff card).",
    parameters=NoteArgs,
    execute=note,
    present_call=lambda a: DiffCallView(
        card="diff", title=f"Edit {a.path}", diffs=[FileDiff(a.path, a.old or None, a.new)]
    ),
    present_result=lambda a, r: (
        DiffResultView(
            card="diff",
            title=f"Edited {a.path}",
            diffs=[FileDiff(a.path, str(r.meta["before"]) or None, str(r.meta["after"]))],  # type: ignore[index]
        )
        if not r.is_error
        else None
    ),
)


@attrs.frozen
class StreamArgs:
    command: Annotated[str, "What to pretend to run"]
    lines: Annotated[int, "How many lines to print"] = 5
    delay_ms: Annotated[int, "Pause between lines"] = 0
    exit_code: Annotated[int, "The exit code"] = 0


async def stream(args: StreamArgs, execution: ToolExecution) -> ToolOutput:
    written: list[str] = []
    for index in range(args.lines):
        if execution.signal is not None and execution.signal.cancelled:
            return ToolOutput(
                "".join(written), meta={"output": "".join(written), "signal": "SIGTERM"}
            )
        line = f"{args.command} {index}\n"
        written.append(line)
        await execution.write_output(line)
        if args.delay_ms:
            await asyncio.sleep(args.delay_ms / 1000)
    output = "".join(written)
    return ToolOutput(output, meta={"output": output, "exit_code": args.exit_code})


def present_stream_result(args: StreamArgs, result: ToolResult) -> TerminalResultView:
    meta: Any = result.meta or {}
    return TerminalResultView(
        card="terminal",
        output=meta.get("output"),
        exit_code=meta.get("exit_code"),
        signal=meta.get("signal"),
    )


STREAM = define_tool(
    name="stream",
    description="Pretend to run a command that prints lines (a terminal card).",
    parameters=StreamArgs,
    execute=stream,
    present_call=lambda a: TerminalCallView(
        card="terminal", title=a.command, description="streaming"
    ),
    present_result=present_stream_result,
)


@attrs.frozen
class LookArgs:
    path: Annotated[str, "What to look at"]


async def look(args: LookArgs, execution: ToolExecution) -> str:
    await execution.report_progress("looking")
    return f"looked at {args.path}"


LOOK = define_tool(
    name="look",
    description="Look at something (a read card).",
    parameters=LookArgs,
    execute=look,
    present_call=lambda a: GenericCallView(card="generic", title=f"Look at {a.path}", kind="read"),
    read_only=True,
)


def _broken(args: Any) -> Any:
    raise RuntimeError("presenter bug")


async def fragile(args: Any, execution: ToolExecution) -> str:
    return "worked anyway"


FRAGILE = ToolDefinition(
    name="fragile",
    description="A tool whose presenters are broken.",
    parameters={"type": "object", "properties": {}},  # type: ignore[arg-type]
    execute=fragile,
    present_call=_broken,
    present_result=lambda args, result: "not a view",
)

TOOLS: list[ToolDefinition] = [NOTE, STREAM, LOOK, FRAGILE]


@attrs.frozen
class EraseArgs:
    path: Annotated[str, "The file to delete, relative to the workspace"]


async def erase(args: EraseArgs, execution: ToolExecution) -> str:
    # What a user's own tool may well look like: no presenter, no declaration, a deletion.
    from pathlib import Path

    from acp_sidecar.tools import tool_context

    Path(tool_context(execution).cwd, args.path).unlink()
    return f"deleted {args.path}"


ERASE = define_tool(
    name="erase",
    description="Delete a file (declares nothing).",
    parameters=EraseArgs,
    execute=erase,
)

ERASING: list[ToolDefinition] = [ERASE]
"""Loadable with ``--tools tests.tooling:ERASING``."""
