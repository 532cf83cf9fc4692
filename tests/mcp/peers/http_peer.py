"""The stdio peer's tools over streamable HTTP on 127.0.0.1, on a port the OS picks.

Run as a script: prints ``PORT <n>`` on stdout once it listens, then serves until killed.
With ``--sse`` it serves the older HTTP+SSE transport instead (endpoint ``/sse``).
With ``--require-header NAME=VALUE`` every request without that header gets HTTP 401.
With ``--markdir DIR`` a cancelled ``slow`` call writes ``DIR/cancelled``.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import anyio
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from tests.mcp.peers.peer_tools import build


def guarded(app: ASGIApp, name: str, value: str) -> ASGIApp:
    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(name.lower().encode()) != value.encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"no"})
                return
        await app(scope, receive, send)

    return guard


async def main() -> None:
    markdir = Path(sys.argv[sys.argv.index("--markdir") + 1]) if "--markdir" in sys.argv else None
    server = build(markdir)
    app: ASGIApp = server.sse_app() if "--sse" in sys.argv else server.streamable_http_app()
    if "--require-header" in sys.argv:
        name, value = sys.argv[sys.argv.index("--require-header") + 1].split("=", 1)
        app = guarded(app, name, value)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    # Listen before telling the port: a client that connects before uvicorn starts waits in
    # the backlog instead of being refused (the suite under load saw "connection failed").
    sock.listen(128)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


if __name__ == "__main__":
    anyio.run(main)
