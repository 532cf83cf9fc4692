"""A stdio MCP server with a great many tools (run as a script), written without the SDK so
that it answers a listing of 40,000 tools at once.

``crowd_peer.py [--tools N] [--pages P] [--bad K] [--churn SECONDS] [--salt TEXT] [--plain]
[--describe BYTES]``

- ``--tools N`` (default 100): tools ``tool_0`` … each with a schema of its own (a few typed
  properties, values that differ from tool to tool), declared read-only and closed-world;
  the first ``K`` (``--bad``) have a schema no validator can use. ``--salt`` goes into every
  schema, so that schemas checked before (by another test) are new ones; ``--plain`` gives
  every good tool the same schema instead (checked once). ``--describe BYTES``: each tool's
  description is that long.
- ``--pages P`` (default 1): ``tools/list`` spread over P pages (cursors ``"1"``, ``"2"``, …).
- ``--churn SECONDS``: once initialized, renames one tool (the last bad one, else the first)
  and sends ``notifications/tools/list_changed``, again every SECONDS, for as long as it runs.
- The tool ``stats`` (listed first) answers ``{"lists": …, "pages": …, "notified": …}``:
  complete listings served (their first page asked for), pages served, notifications sent;
  ``--stats PATH`` also writes them to PATH after every listing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any

_lock = threading.Lock()
_counts = {"lists": 0, "pages": 0, "notified": 0}
_renamed = 0


def send(message: dict[str, Any]) -> None:
    line = json.dumps(message, separators=(",", ":")).encode() + b"\n"
    with _lock:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def schema(index: int, bad: bool) -> dict[str, Any]:
    if bad:
        return {"type": "object", "properties": {"x": {"type": "no-such-type"}}}
    if _options.plain:
        return {"type": "object", "properties": {"path": {"type": "string"}}}
    return {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": f"The file tool {index} works on.{_options.salt}",
            },
            "count": {"type": "integer", "minimum": 0, "maximum": 1000 + index},
            "mode": {"type": "string", "enum": ["fast", "slow", f"mode{index}"]},
            "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}},
        },
        "required": ["path"],
        "additionalProperties": False,
    }


def tool(index: int, bad: bool) -> dict[str, Any]:
    renamed = _renamed and index == max(_options.bad - 1, 0)
    return {
        "name": f"tool_{index}_v{_renamed}" if renamed else f"tool_{index}",
        "description": f"Tool number {index}: reads a file of the workspace.".ljust(
            _options.describe, "."
        ),
        "inputSchema": schema(index, bad),
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    }


_options = argparse.Namespace()

STATS = {"name": "stats", "description": "What this server did.", "inputSchema": {"type": "object"}}


def page(cursor: str | None) -> dict[str, Any]:
    number = int(cursor or 0)
    per_page = -(-_options.tools // _options.pages)
    start = number * per_page
    tools = [tool(i, i < _options.bad) for i in range(start, min(start + per_page, _options.tools))]
    with _lock:
        _counts["pages"] += 1
        _counts["lists"] += cursor is None
        if _options.stats:  # whole or not at all, for a reader at any moment
            with open(_options.stats + ".new", "w", encoding="utf-8") as file:
                json.dump(_counts, file)
            os.replace(_options.stats + ".new", _options.stats)
    result: dict[str, Any] = {"tools": ([STATS] if number == 0 else []) + tools}
    if number + 1 < _options.pages:
        result["nextCursor"] = str(number + 1)
    return result


def churn(every: float) -> None:
    global _renamed
    while True:
        _renamed += 1
        with _lock:
            _counts["notified"] += 1
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        time.sleep(every)


def answer(message: dict[str, Any]) -> dict[str, Any]:
    method = message["method"]
    params = message.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "crowd", "version": "0"},
        }
    if method == "tools/list":
        return page(params.get("cursor"))
    if method == "tools/call" and params.get("name") == "stats":
        with _lock:
            text = json.dumps(_counts)
        return {"content": [{"type": "text", "text": text}]}
    return {}


def main() -> None:
    global _options
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=100)
    parser.add_argument("--pages", type=int, default=1)
    parser.add_argument("--bad", type=int, default=0)
    parser.add_argument("--churn", type=float, default=None)
    parser.add_argument("--salt", default="")
    parser.add_argument("--plain", action="store_true")
    parser.add_argument("--describe", type=int, default=0)
    parser.add_argument("--stats", default=None)
    _options = parser.parse_args()
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if message.get("method") == "notifications/initialized" and _options.churn is not None:
            threading.Thread(target=churn, args=(_options.churn,), daemon=True).start()
        if "id" in message and "method" in message:
            send({"jsonrpc": "2.0", "id": message["id"], "result": answer(message)})


if __name__ == "__main__":
    main()
