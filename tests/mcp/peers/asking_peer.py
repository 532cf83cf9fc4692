"""A stdio MCP server that asks its client for input, when and how it likes (run as a script),
written without the SDK so that it can send whatever ``elicitation/create`` it wants.

``asking_peer.py [--unprompted N]``

- ``--unprompted N``: once initialized, sends N form elicitations at once, outside any call.
- Tool ``ask(requests)``: sends each of ``requests`` (``elicitation/create`` params) to the
  client at once, during the call, and answers the list of what came back (each response's
  ``result``, or ``{"error": …}``), in the order of ``requests``; progress is the number of
  answers so far (when the call asked for progress).
- Tool ``answers``: what came back for the unprompted ones so far (in arrival order).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import threading
from typing import Any

_lock = threading.Lock()
_ids = itertools.count()
_pending: dict[str, tuple[threading.Event, list[dict[str, Any]]]] = {}
_unprompted: list[dict[str, Any]] = []
FORM = {
    "mode": "form",
    "message": "Your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}
TOOLS = [
    {
        "name": "ask",
        "inputSchema": {"type": "object", "properties": {"requests": {"type": "array"}}},
    },
    {"name": "answers", "inputSchema": {"type": "object"}},
]


def send(message: dict[str, Any]) -> None:
    line = json.dumps(message).encode() + b"\n"
    with _lock:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def ask_client(params: dict[str, Any]) -> dict[str, Any]:
    """One ``elicitation/create`` to the client; its response's result (or error)."""
    msg_id = f"e{next(_ids)}"
    done = threading.Event()
    box: list[dict[str, Any]] = []
    _pending[msg_id] = (done, box)
    send({"jsonrpc": "2.0", "id": msg_id, "method": "elicitation/create", "params": params})
    if not done.wait(60):
        return {"error": "no answer"}
    response = box[0]
    return response.get("result") or {"error": response.get("error")}


def ask_all(requests: list[dict[str, Any]], token: object) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = [{} for _ in requests]
    answered = itertools.count(1)

    def one(index: int, params: dict[str, Any]) -> None:
        results[index] = ask_client(params)
        if token is not None:
            progress = {"progressToken": token, "progress": next(answered), "total": len(requests)}
            send({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})

    threads = [threading.Thread(target=one, args=pair) for pair in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def unprompted(count: int) -> None:
    def one() -> None:
        result = ask_client(FORM)
        with _lock:
            _unprompted.append(result)

    for _ in range(count):
        threading.Thread(target=one, daemon=True).start()


def call(message: dict[str, Any]) -> None:
    params = message["params"]
    if params["name"] == "ask":
        token = (params.get("_meta") or {}).get("progressToken")
        text = json.dumps(ask_all(params.get("arguments", {}).get("requests", []), token))
    else:
        with _lock:
            text = json.dumps(_unprompted)
    result = {"content": [{"type": "text", "text": text}]}
    send({"jsonrpc": "2.0", "id": message["id"], "result": result})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--unprompted", type=int, default=0)
    options = parser.parse_args()
    for line in sys.stdin.buffer:
        message = json.loads(line)
        method = message.get("method")
        if method is None:  # a response to one of ours
            entry = _pending.pop(str(message.get("id")), None)
            if entry is not None:
                entry[1].append(message)
                entry[0].set()
        elif method == "notifications/initialized":
            unprompted(options.unprompted)
        elif "id" not in message:
            continue
        elif method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "asking", "version": "0"},
            }
            send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": TOOLS}})
        elif method == "tools/call":
            threading.Thread(target=call, args=(message,), daemon=True).start()
        else:
            send({"jsonrpc": "2.0", "id": message["id"], "result": {}})


if __name__ == "__main__":
    main()
