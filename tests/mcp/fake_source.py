"""A ToolSource in process: real ``mcp.types`` tools (each judged as a listing judges it),
calls answered by a handler the test gives, and a record of each call (and whether its task
was cancelled, which is when the SDK would send ``notifications/cancelled``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import mcp.types as m

from acp_sidecar.mcp.callbacks import ProgressCallback
from acp_sidecar.mcp.listing import ListedTool
from acp_sidecar.mcp.schemas import usable_schema

Handler = Callable[[str, dict[str, Any], ProgressCallback | None], Awaitable[m.CallToolResult]]


async def echo(
    tool: str, arguments: dict[str, Any], progress: ProgressCallback | None
) -> m.CallToolResult:
    return m.CallToolResult(content=[m.TextContent(text=f"{tool} {arguments}")])


@attrs.define
class Call:
    tool: str
    arguments: dict[str, Any]
    cancelled: bool = False


@attrs.define
class FakeSource:
    name: str
    listed: tuple[m.Tool, ...]
    handler: Handler = echo
    calls: list[Call] = attrs.field(factory=list)
    started: asyncio.Event = attrs.field(factory=asyncio.Event)
    notes: tuple[str, ...] = ()
    remote: bool = False

    @property
    def tools(self) -> tuple[ListedTool, ...]:
        return tuple(ListedTool(tool, usable_schema(tool)) for tool in self.listed)

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressCallback | None = None,
        call_id: str | None = None,
    ) -> m.CallToolResult:
        call = Call(tool, arguments)
        self.calls.append(call)
        self.started.set()
        try:
            return await self.handler(tool, arguments, progress)
        except asyncio.CancelledError:
            call.cancelled = True
            raise


def tool(
    name: str,
    *,
    schema: dict[str, Any] | None = None,
    title: str | None = None,
    description: str | None = None,
    annotations: m.ToolAnnotations | None = None,
) -> m.Tool:
    """A real MCP tool value, as ``tools/list`` gives it."""
    return m.Tool(
        name=name,
        title=title,
        description=description,
        input_schema={"type": "object", "properties": {"q": {"type": "string"}}}
        if schema is None
        else schema,
        annotations=annotations,
    )


READ_LOCAL = m.ToolAnnotations(read_only_hint=True, open_world_hint=False)
READ_WORLD = m.ToolAnnotations(read_only_hint=True)
