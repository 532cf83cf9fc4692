"""A minimal stdio MCP server that records that a client connected.

``python mcp_marker.py MARKER``: answers MCP's ``initialize`` (writing MARKER when it
arrives), ``tools/list`` (no tools) and ``ping`` on stdin/stdout, one JSON-RPC message per
line, until its input ends.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def answer(request: dict[str, Any], marker: Path) -> dict[str, Any] | None:
    method, msg_id = request.get("method"), request.get("id")
    if msg_id is None:
        return None  # notifications (notifications/initialized) need no answer
    if method == "initialize":
        marker.write_text("initialize\n", encoding="utf-8")
        result: dict[str, Any] = {
            "protocolVersion": request.get("params", {}).get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "marker", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": []}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32601, "message": method}}
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def main() -> None:
    marker = Path(sys.argv[1])
    for line in sys.stdin:
        if line.strip():
            reply = answer(json.loads(line), marker)
            if reply is not None:
                sys.stdout.write(json.dumps(reply) + "\n")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
