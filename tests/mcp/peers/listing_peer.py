"""A stdio MCP server (low-level SDK API) whose tools/list comes in pages (run as a script).

``pages``: five tools over three pages (cursors ``"2"`` and ``"3"``), one of them with an
input schema no validator can use (``{"type": "no-such-type"}``), as a server may send.
``broken``: a tools/list answer that is not MCP (a tool without ``inputSchema``). The SDK's
server side refuses to send one, so this mode writes its JSON-RPC lines itself.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
PAGES: dict[str | None, tuple[list[types.Tool], str | None]] = {
    None: (
        [types.Tool(name="one", input_schema=OBJECT), types.Tool(name="two", input_schema=OBJECT)],
        "2",
    ),
    "2": (
        [
            types.Tool(name="three", input_schema=OBJECT),
            types.Tool(
                name="odd-schema",
                input_schema={"type": "object", "properties": {"x": {"type": "no-such-type"}}},
            ),
        ],
        "3",
    ),
    "3": ([types.Tool(name="five", input_schema=OBJECT)], None),
}


async def list_pages(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    tools, cursor = PAGES[params.cursor if params else None]
    return types.ListToolsResult(tools=tools, next_cursor=cursor)


def serve_broken() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message["method"] == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "broken", "version": "0"},
            }
        else:
            result = {"tools": [{"name": "no-schema"}]}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)


async def main() -> None:
    server: Server[Any] = Server("listing", on_list_tools=list_pages)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    if sys.argv[1] == "broken":
        serve_broken()
    else:
        anyio.run(main)
