"""The MCP SDK's stdio transport, for a server process we started ourselves.

It moves whole JSON-RPC messages between the pipes and the SDK's streams; the protocol stays
the SDK's. A line is at most :data:`MAX_LINE` bytes; the read stream ends when the server's
stdout does or writing to it fails, so no request hangs.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Container
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
import mcp_types as types
import pydantic_core
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from acp_sidecar.mcp.launch import ServerProcess
from acp_sidecar.mcp.listing import MAX_TOOLS

FLUSH_TIMEOUT_S: Final = 0.5
CHUNK: Final = 65536
MAX_LINE: Final = 64 * 1024 * 1024
"""The longest line of a server's stdout read, in bytes (the newline not counted): the same
bound as the ACP wire's own (``server.framing.DEFAULT_LINE_LIMIT``; a test keeps them equal),
kept here so this package does not import the server's."""
BIG_LINE: Final = 1024 * 1024
"""Lines longer than this are parsed in two steps (see the module)."""
LISTINGS_KEPT: Final = 64
"""The most ``tools/list`` requests waiting for their answers that are remembered."""


class LineSplitter:
    """Splits a byte stream into its lines (see the module invariants): :meth:`feed` each
    chunk, get the lines it completed, or a ValueError for each line over ``limit``."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._pending = bytearray()
        """The current line so far (never more than ``limit`` bytes)."""
        self._skipping = False
        """The current line is over the limit (already reported): dropped to its newline."""

    def feed(self, chunk: bytes) -> list[bytes | ValueError]:
        """The lines ``chunk`` completes, in order (a newline ends each)."""
        items: list[bytes | ValueError] = []
        view = memoryview(chunk)
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if self._skipping:
                self._skipping = False
            elif len(self._pending) + end - start > self._limit:
                items.append(self._too_long())
            elif self._pending:
                self._pending += view[start:end]
                items.append(bytes(self._pending))
                self._pending.clear()
            else:
                items.append(chunk[start:end])
            start = end + 1
        if not self._skipping and start < len(chunk):
            if len(self._pending) + len(chunk) - start > self._limit:
                items.append(self._too_long())
                self._skipping = True
            else:
                self._pending += view[start:]
        return items

    def _too_long(self) -> ValueError:
        self._pending.clear()
        return ValueError(f"a line longer than {self._limit} bytes was dropped")


def parse_line(
    line: bytes, listings: Container[object] = (), *, big: int = BIG_LINE
) -> SessionMessage | Exception:
    """One line of the server's stdout as the SDK's message, or why it is none.
    ``listings``: the ids of our ``tools/list`` requests still unanswered."""
    adapter = types.jsonrpc_message_adapter
    try:
        if len(line) <= big:
            message = adapter.validate_json(line, by_name=False)
        else:
            value = pydantic_core.from_json(line)
            _cut_listing(value, listings)
            message = adapter.validate_python(value, by_name=False)
    except ValueError as error:
        return error
    return SessionMessage(message)


def _cut_listing(value: Any, listings: Container[object]) -> None:
    """Drops the tools past ``MAX_TOOLS + 1`` of an answer to one of ``listings``."""
    if not isinstance(value, dict) or not isinstance(value.get("id"), int | str):
        return
    result = value.get("result")
    if value["id"] in listings and isinstance(result, dict):
        tools = result.get("tools")
        if isinstance(tools, list) and len(tools) > MAX_TOOLS + 1:
            del tools[MAX_TOOLS + 1 :]


def encode(message: SessionMessage) -> bytes:
    """One message as the line the server reads."""
    return message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


@asynccontextmanager
async def process_streams(process: ServerProcess) -> AsyncIterator[TransportStreams]:
    """The SDK's read and write streams over ``process``'s stdout and stdin."""
    to_client, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_client = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    listings: dict[types.RequestId, None] = {}
    """Our ``tools/list`` requests not answered yet, oldest first."""

    async def read_stdout() -> None:
        async with to_client:
            lines = LineSplitter(MAX_LINE)
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                while chunk := await process.stdout.read(CHUNK):
                    for line in lines.feed(chunk):
                        if isinstance(line, ValueError):
                            await to_client.send(line)
                        elif line.strip():
                            parsed = parse_line(line, listings)
                            answer = parsed.message if isinstance(parsed, SessionMessage) else None
                            if isinstance(answer, types.JSONRPCResponse | types.JSONRPCError):
                                listings.pop(answer.id, None)  # type: ignore[arg-type]
                            await to_client.send(parsed)

    async def write_stdin() -> None:
        try:
            async with from_client:
                async for message in from_client:
                    request = message.message
                    if isinstance(request, types.JSONRPCRequest) and request.method == "tools/list":
                        listings[request.id] = None
                        while len(listings) > LISTINGS_KEPT:
                            del listings[next(iter(listings))]
                    process.stdin.write(encode(message))
                    await process.stdin.drain()
        except (OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            # The server is gone or going: end the read side, so no request waits forever.
            await to_client.aclose()
        finally:
            writer_done.set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_stdout)
        tasks.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                with anyio.move_on_after(FLUSH_TIMEOUT_S):
                    await writer_done.wait()
            tasks.cancel_scope.cancel()


__all__ = ["BIG_LINE", "MAX_LINE", "LineSplitter", "encode", "parse_line", "process_streams"]
