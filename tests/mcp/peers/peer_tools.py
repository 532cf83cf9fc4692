"""The tools of our SDK-built MCP server (:func:`build`), served over stdio by
``stdio_peer.py`` and over HTTP by ``http_peer.py``; ``stdio_peer.py`` lists the tools."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp.types import ToolAnnotations
from mcp_types import SamplingMessage, TextContent
from pydantic import BaseModel


def build(markdir: Path | None) -> MCPServer:
    server = MCPServer("peer")

    @server.tool()
    def noop() -> str:
        """Does nothing."""
        return "ok"

    @server.tool()
    def echo(text: str) -> str:
        """Answers its argument."""
        return text

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
    def peek() -> str:
        """Says it only looks (its annotations say so)."""
        return "peeked"

    @server.tool()
    async def slow(steps: int, ctx: Context) -> str:
        """Reports progress once per step."""
        try:
            for step in range(steps):
                await ctx.report_progress(step + 1, steps, f"step {step + 1}")
                await anyio.sleep(0.1)
        except anyio.get_cancelled_exc_class():
            if markdir is not None:
                (markdir / "cancelled").write_text("yes")
            raise
        return "done"

    @server.tool()
    async def die() -> str:
        """Exits mid-call."""
        await anyio.sleep(0.05)
        os._exit(7)

    class Name(BaseModel):
        name: str

    @server.tool()
    async def elicit(ctx: Context) -> str:
        """Asks the user for a name."""
        answer = await ctx.elicit("Your name?", Name)
        return f"{answer.action}:{answer.data.name if answer.action == 'accept' else ''}"

    @server.tool()
    async def sample(ctx: Context) -> str:
        """Asks the client's model."""
        message = SamplingMessage(role="user", content=TextContent(type="text", text="hi"))
        result = await ctx.session.create_message([message], max_tokens=5)
        return str(result)

    @server.tool()
    async def roots(ctx: Context) -> str:
        """The client's roots, as JSON."""
        listed = await ctx.session.list_roots()
        return json.dumps([str(root.uri) for root in listed.roots])

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Adds a tool and says so."""
        server.add_tool(lambda: "extra", name="extra", description="Added later.")
        await ctx.session.send_tool_list_changed()
        return "grown"

    @server.tool()
    def capabilities(ctx: Context) -> str:
        """What the client advertised, as JSON."""
        caps = ctx.client_capabilities
        return caps.model_dump_json(exclude_none=True) if caps else "{}"

    @server.tool()
    def environment() -> str:
        """Its environment."""
        return json.dumps(dict(os.environ))

    @server.tool()
    def complain(text: str) -> str:
        """Writes to stderr."""
        print(text, file=sys.stderr, flush=True)
        return "said"

    @server.tool()
    def fail(text: str) -> str:
        """Answers a JSON-RPC error carrying ``text``."""
        raise MCPError(code=7, message=text)

    @server.tool()
    async def nudge(n: int, ctx: Context) -> str:
        """Says n times that its tools changed, without changing them."""
        for _ in range(n):
            await ctx.session.send_tool_list_changed()
        return "nudged"

    return server
