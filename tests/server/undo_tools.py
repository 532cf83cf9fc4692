"""Plugin tools that declare their file effects, for the undo tests: ``remove`` deletes a
file, ``put_bytes`` writes any bytes (a binary file). Load with
``--tools tests.server.undo_tools:TOOLS``."""

from __future__ import annotations

import base64
import os
from typing import Annotated

import attrs

from acp_sidecar.tools import FileEffect, ToolExecution, define_tool, tool_context


@attrs.frozen
class RemoveArgs:
    path: Annotated[str, "The file to delete, relative to the workspace root"]


async def remove(args: RemoveArgs, execution: ToolExecution) -> str:
    os.unlink(os.path.join(tool_context(execution).cwd, args.path))
    return f"removed {args.path}"


@attrs.frozen
class PutArgs:
    path: Annotated[str, "The file to write, relative to the workspace root"]
    data: Annotated[str, "Its content, base64"]


async def put_bytes(args: PutArgs, execution: ToolExecution) -> str:
    with open(os.path.join(tool_context(execution).cwd, args.path), "wb") as stream:
        stream.write(base64.b64decode(args.data))
    return f"wrote {args.path}"


TOOLS = [
    define_tool(
        name="remove",
        description="Delete a file.",
        parameters=RemoveArgs,
        execute=remove,
        file_effects=lambda args: [FileEffect(args.path, "delete")],
    ),
    define_tool(
        name="put_bytes",
        description="Write bytes to a file.",
        parameters=PutArgs,
        execute=put_bytes,
        file_effects=lambda args: [FileEffect(args.path)],
    ),
]
