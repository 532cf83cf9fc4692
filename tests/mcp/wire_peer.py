"""An MCP server (the MCP SDK's server side, over stdio) for the end-to-end tests of the
sidecar's MCP wiring: tools that say what the sidecar did with them.

``python wire_peer.py STATE_DIR``: writes its pid to ``STATE_DIR/pid`` at start, then serves
- ``echo`` (read-only, closed world): returns its ``text``;
- ``touch`` (no annotations: may change things): creates ``STATE_DIR/<name>``;
- ``slow``: waits up to 30 s; when the call is cancelled, writes ``STATE_DIR/cancelled``;
- ``roots``: the roots the client gave, one URI a line;
- ``ask``: elicits a ``branch`` from the user; returns ``<action> <branch>``;
- ``grow``: adds a tool ``grown`` and tells the client its tools changed;
- ``die``: the process exits in the middle of the call.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations
from pydantic import BaseModel

STATE = Path(sys.argv[1])
server = MCPServer("wire-peer")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
def echo(text: str) -> str:
    """Return the text. Nothing else happens."""
    return text


@server.tool()
def touch(name: str) -> str:
    """Create a file in the peer's state directory."""
    (STATE / name).write_text("touched\n", encoding="utf-8")
    return f"created {name}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
async def slow() -> str:
    """Wait until cancelled (30 s at most)."""
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        (STATE / "cancelled").write_text("cancelled\n", encoding="utf-8")
        raise
    return "done"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
async def roots(ctx: Context) -> str:
    """The roots the client gave."""
    listed = await ctx.session.list_roots()
    return "\n".join(str(root.uri) for root in listed.roots)


class Branch(BaseModel):
    branch: str


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
async def ask(ctx: Context) -> str:
    """Ask the user for a branch."""
    answer = await ctx.elicit("Which branch?", Branch)
    data = getattr(answer, "data", None)
    return f"{answer.action} {data.branch if data is not None else '-'}"


def grown() -> str:
    """A tool that appeared later."""
    return "grown"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
async def grow(ctx: Context) -> str:
    """Add the tool ``grown`` and tell the client."""
    server.add_tool(grown, annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
    await ctx.session.send_tool_list_changed()
    return "grew"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
def die() -> str:
    """Exit mid-call."""
    os._exit(1)


if __name__ == "__main__":
    (STATE / "pid").write_text(str(os.getpid()), encoding="utf-8")
    server.run()
