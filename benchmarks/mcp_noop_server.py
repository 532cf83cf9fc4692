"""A stdio MCP server with one tool that does nothing: the peer of ``bench_mcp.py``.

Built with the MCP SDK's server side. ``noop`` is declared read-only and closed-world, so the
sidecar runs it without asking in the default ``ask`` mode.
"""

from __future__ import annotations

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("noop")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=False))
def noop() -> str:
    """Do nothing."""
    return "ok"


if __name__ == "__main__":
    server.run()
