"""The MCP SDK's stdio transport, for a server process we started ourselves.

The SDK's ``stdio_client`` spawns the server itself, which it can only do once the SDK is
imported; we start the process earlier (:mod:`acp_sidecar.mcp.launch`) and hand its pipes to
the SDK's client here. This is a transport, not an MCP client: it moves whole JSON-RPC
messages between the pipes and the SDK's own streams of ``SessionMessage``, and the protocol
on top stays the SDK's.

Invariants:
- As the SDK's stdio transport does: one message per line of the server's stdout, validated
  with the SDK's own JSON-RPC model; a line that is not a valid message is passed on as the
  exception (the SDK reports it and reads on); each message we send is its JSON on one line
  (by alias, unset fields left out). Blank lines are skipped.
- The read stream ends when the server's stdout does, or when writing to its stdin fails
  (the server is gone): the SDK's session sees the connection end instead of a request
  hanging.
- Leaving the context stops the traffic (messages already accepted get
  :data:`FLUSH_TIMEOUT_S` to be written) but not the process: its owner stops it
  (:meth:`acp_sidecar.mcp.launch.ServerProcess.stop`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

import anyio
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from acp_sidecar.mcp.launch import ServerProcess

FLUSH_TIMEOUT_S: Final = 0.5
CHUNK: Final = 65536


def parse_line(line: bytes) -> SessionMessage | Exception:
    """One line of the server's stdout as the SDK's message, or why it is none."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError as error:
        return error
    return SessionMessage(message)


def encode(message: SessionMessage) -> bytes:
    """One message as the line the server reads."""
    return message.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"


@asynccontextmanager
async def process_streams(process: ServerProcess) -> AsyncIterator[TransportStreams]:
    """The SDK's read and write streams over ``process``'s stdout and stdin."""
    to_client, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_client = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def read_stdout() -> None:
        async with to_client:
            pending = b""
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                while chunk := await process.stdout.read(CHUNK):
                    *lines, pending = (pending + chunk).split(b"\n")
                    for line in lines:
                        if line.strip():
                            await to_client.send(parse_line(line))

    async def write_stdin() -> None:
        try:
            async with from_client:
                async for message in from_client:
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


__all__ = ["encode", "parse_line", "process_streams"]
