"""One connection to one MCP server, made and driven by the official MCP SDK's client.

An :class:`McpConnection` lives in a task of its own (:meth:`McpConnection.open` starts it):
the SDK's context managers own task groups that must be entered and exited by the same task,
so that task enters the transport and the SDK's ``Client``, lists the tools, then waits for
work (a ``notifications/tools/list_changed`` to re-list, the server's end, or a stop) and
finally leaves them again. Requests (:meth:`McpConnection.call_tool`) are made from the
callers' own tasks, which the SDK allows.

Invariants:
- The handshake is MCP's ``initialize`` (the SDK's ``legacy`` mode): every server in use
  today speaks it, and it keeps ``roots/list``, ``notifications/tools/list_changed`` and
  ``notifications/cancelled`` on the wire as the issue asks.
- A stdio server gets :func:`server_environment`: a minimal base taken from the sidecar's
  environment by name (:data:`BASE_VARIABLES`, ``LC_*``), then the editor's ``env`` entries
  over it. Nothing else of the sidecar's — no API key, no ``ACP_SIDECAR_*`` — reaches it.
- A stdio server's stderr goes through a pipe of ours to :data:`stderr_log`, line by line; it
  never shares our stdout (the wire).
- A stdio server runs in a new session, hence a process group of its own (the SDK starts it
  with ``start_new_session``). When its connection ends, the SDK closes its stdin and, if it
  lingers, kills its group; then whatever is left of the group (a grandchild of a server
  that exited on its own) is ended here too, so no orphan outlives the connection.
- Cancelling a task awaiting :meth:`McpConnection.call_tool` makes the SDK send
  ``notifications/cancelled`` for the request; the cancellation propagates.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, BinaryIO, Final

import anyio
import httpx2
import mcp_types as types
from mcp.client.client import Client
from mcp.client.session import IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from acp_sidecar.mcp.callbacks import ProgressCallback
from acp_sidecar.mcp.client_side import ClientCallbacks, ClientSideHooks
from acp_sidecar.mcp.config import (
    HttpServerConfig,
    McpServerConfig,
    SseServerConfig,
    StdioServerConfig,
)
from acp_sidecar.mcp.errors import (
    McpCallError,
    McpError,
    McpServerGone,
    describe_failure,
    innermost,
    one_line,
)
from acp_sidecar.mcp.processes import child_with_stderr, end_group, watch_exit
from acp_sidecar.mcp.streams import WatchedReadStream

logger = logging.getLogger(__name__)
stderr_log: Final = logging.getLogger("acp_sidecar.mcp.stderr")
"""Where the lines a stdio server writes to its stderr go (``[server] line``)."""

BASE_VARIABLES: Final = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
)
"""Variables of the sidecar's environment a stdio server inherits (plus every ``LC_*``)."""

MAX_LIST_PAGES: Final = 100
"""A ``tools/list`` that is still paginating after this many pages stops there."""
RELIST_TIMEOUT: Final = 30.0
"""A re-list after ``notifications/tools/list_changed`` that takes longer is given up (the
old tools stay)."""
MAX_STDERR_LINE: Final = 4000
"""A longer stderr line is logged cut to this many characters."""
HTTP_TIMEOUT: Final = httpx2.Timeout(30.0, read=300.0)
"""Connect/write 30 s; a response stream may stay open (read) for 300 s."""
CLIENT_INFO: Final = types.Implementation(name="acp-sidecar", version="0.1.0")


def server_environment(
    config: StdioServerConfig, source: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The whole environment a stdio server starts with (see the module invariants)."""
    source = os.environ if source is None else source
    env = {
        name: value
        for name, value in source.items()
        if (name in BASE_VARIABLES or name.startswith("LC_")) and not value.startswith("()")
    }
    env.update(config.env)
    return env


class McpConnection:
    """A live connection to one MCP server (see the module invariants).

    Made by :class:`acp_sidecar.mcp.servers.McpServers`; ``tools`` is the latest complete
    ``tools/list`` answer.
    """

    def __init__(
        self,
        config: McpServerConfig,
        hooks: ClientSideHooks,
        *,
        on_tools_changed: Callable[[McpConnection], None],
        on_gone: Callable[[McpConnection, str], None],
    ) -> None:
        self.name: str = config.name
        self.config: Final = config
        self._callbacks = ClientCallbacks(config.name, hooks)
        self._on_tools_changed = on_tools_changed
        self._on_gone = on_gone
        self._tools: tuple[types.Tool, ...] = ()
        self._client: Client | None = None
        self._scope = anyio.CancelScope()
        self._wake = asyncio.Event()
        self._relist = False
        self._gone = False
        self._gone_reported = False
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._pgid: int | None = None
        self.started_at: float | None = None
        """``time.monotonic()`` once ``initialize`` was answered and the tools listed."""

    @property
    def tools(self) -> tuple[types.Tool, ...]:
        """The latest tools/list."""
        return self._tools

    @property
    def alive(self) -> bool:
        """Whether requests can still reach the server."""
        return self._client is not None and not self._gone and not self._stopping

    @property
    def process_group(self) -> int | None:
        """A stdio server's process group (its pid), once started; None for HTTP/SSE."""
        return self._pgid

    async def open(self, timeout: float) -> None:
        """Starts the connection's task and waits until the tools are listed.

        Raises McpError(reason) when the server fails to start or does not within
        ``timeout``; the task then winds down on its own (:meth:`aclose` awaits it).
        """
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._run(ready), name=f"mcp server {self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            self._stop()
            raise McpError(f"it did not finish starting within {timeout:g} s") from None
        except BaseException:
            self._stop()
            raise

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> types.CallToolResult:
        """Cancelling the awaiting task sends `notifications/cancelled` for the request
        (SDK >= 2.3) and raises CancelledError. Raises McpServerGone / McpCallError."""
        client = self._client
        if client is None or not self.alive:
            raise McpServerGone(f"MCP server {self.name!r} is not running")
        forward = None
        if progress is not None:
            report = progress

            async def forward(progress: float, total: float | None, message: str | None) -> None:
                await report(progress, total, message)

        try:
            return await client.call_tool(tool, arguments, progress_callback=forward)
        except MCPError as error:
            if error.code == types.CONNECTION_CLOSED or self._gone:
                raise self._lost() from None
            raise McpCallError(
                f"MCP server {self.name!r} answered an error: {one_line(error.message)} "
                f"(code {error.code})"
            ) from None
        except (ValidationError, RuntimeError) as error:
            raise McpCallError(
                f"MCP server {self.name!r} answered something unusable: {one_line(error)}"
            ) from None
        except (httpx2.TransportError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise self._lost() from None
        except Exception as error:
            if self._gone or self._client is None:
                raise self._lost() from None
            raise McpCallError(
                f"MCP server {self.name!r}: {describe_failure(error, self.config)}"
            ) from None

    def _lost(self) -> McpServerGone:
        """The connection failed under a request: the server is gone (a stateful HTTP
        session does not survive its server either), unless we are stopping it."""
        self._ended()
        return McpServerGone(f"MCP server {self.name!r} stopped during the call")

    async def aclose(self) -> None:
        """Stops the server and waits until its task is over (and its process group gone).
        Idempotent. Cancelling the caller cancels the wait (CancelledError propagates), not
        the winding down; the task's own outcome (reported by it) is never raised here."""
        self._stop()
        if self._task is not None:
            await asyncio.wait((self._task,))
            if not self._task.cancelled():
                self._task.exception()  # retrieved: its outcome is not the caller's

    def _stop(self) -> None:
        self._stopping = True
        self._scope.cancel()

    async def _run(self, ready: asyncio.Future[None]) -> None:
        reason = "it stopped"
        try:
            with self._scope:
                async with AsyncExitStack() as stack:
                    self._client = await self._connect(stack)
                    self._tools = await self._list_tools(self._client)
                    self.started_at = time.monotonic()
                    ready.set_result(None)
                    reason = await self._serve(self._client)
        except Exception as error:
            reason = describe_failure(innermost(error), self.config)
            logger.debug("MCP server %r: %s", self.name, reason, exc_info=True)
        except BaseException:
            reason = "its start was cancelled"
            raise
        finally:
            self._client = None
            if not ready.done():
                ready.set_exception(McpError(reason))
                ready.exception()  # retrieved: open() may have stopped waiting (timeout)
            else:
                self._report_gone(reason)
            if self._pgid is not None:
                await end_group(self._pgid)

    async def _connect(self, stack: AsyncExitStack) -> Client:
        client = Client(
            self._transport(),
            mode="legacy",
            cache=None,
            client_info=CLIENT_INFO,
            list_roots_callback=self._callbacks.list_roots,
            elicitation_callback=self._callbacks.elicit,
            message_handler=self._on_message,
        )
        return await stack.enter_async_context(client)

    async def _serve(self, client: Client) -> str:
        """Waits for work until the server ends; returns why it ended."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._gone:
                reason = "it exited or closed its connection"
                self._report_gone(reason)  # now, not after the transport has wound down
                return reason
            if self._relist:
                self._relist = False
                try:
                    with anyio.fail_after(RELIST_TIMEOUT):
                        self._tools = await self._list_tools(client)
                except Exception as error:
                    if not self.alive:
                        continue
                    logger.warning(
                        "MCP server %r: re-listing its tools failed: %s",
                        self.name,
                        describe_failure(error, self.config),
                    )
                    continue
                self._on_tools_changed(self)

    def _report_gone(self, reason: str) -> None:
        """Tells the owner once that the server ended on its own (never after a stop)."""
        if not self._stopping and not self._gone_reported:
            self._gone_reported = True
            self._on_gone(self, reason)

    async def _list_tools(self, client: Client) -> tuple[types.Tool, ...]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        else:
            logger.warning(
                "MCP server %r: tools/list still paginating after %d pages",
                self.name,
                MAX_LIST_PAGES,
            )
        return tuple(tools)

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._relist = True
            self._wake.set()
        elif isinstance(message, Exception):
            logger.debug("MCP server %r: transport error %r", self.name, message)

    def _ended(self) -> None:
        """The server's message stream ended, or its process exited (a grandchild may still
        hold its stdout open): it exited or closed the connection."""
        self._gone = True
        self._wake.set()

    def _transport(self) -> Any:
        match self.config:
            case StdioServerConfig() as stdio:
                return self._stdio(stdio)
            case HttpServerConfig() as http:
                return self._http(http)
            case SseServerConfig() as sse:
                return self._sse(sse)

    @asynccontextmanager
    async def _stdio(self, config: StdioServerConfig) -> AsyncIterator[Any]:
        params = StdioServerParameters(
            command=config.command, args=list(config.args), env=server_environment(config)
        )
        read_fd, write_fd = os.pipe()
        pipe = os.fstat(write_fd).st_ino
        errlog = os.fdopen(write_fd, "w")
        errpipe = os.fdopen(read_fd, "rb", buffering=0)
        reader = asyncio.create_task(_log_stderr(self.name, errpipe))
        unwatch: Callable[[], None] = _nothing
        try:
            async with stdio_client(params, errlog=errlog) as (read, write):
                errlog.close()  # the server holds its own copy
                self._pgid = child_with_stderr(pipe)
                if self._pgid is not None:
                    unwatch = watch_exit(self._pgid, pipe, self._ended)
                try:
                    yield WatchedReadStream(read, self._ended), write
                finally:
                    unwatch()
        finally:
            errlog.close()
            # EOF once every holder of the pipe is gone; a straggler is cut off at once.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(reader), 0.5)
            reader.cancel()
            errpipe.close()  # in case the reader never got to own it

    @asynccontextmanager
    async def _http(self, config: HttpServerConfig) -> AsyncIterator[Any]:
        async with (
            httpx2.AsyncClient(headers=dict(config.headers), timeout=HTTP_TIMEOUT) as http,
            streamable_http_client(config.url, http_client=http) as (read, write),
        ):
            yield WatchedReadStream(read, self._ended), write

    @asynccontextmanager
    async def _sse(self, config: SseServerConfig) -> AsyncIterator[Any]:
        async with sse_client(config.url, headers=dict(config.headers)) as (read, write):
            yield WatchedReadStream(read, self._ended), write


async def _log_stderr(server: str, pipe: BinaryIO) -> None:
    """Logs each line the server writes to its stderr, until EOF."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    pending = b""
    try:
        while chunk := await reader.read(65536):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                _log_line(server, line)
            if len(pending) > MAX_STDERR_LINE:
                _log_line(server, pending)
                pending = b""
        if pending:
            _log_line(server, pending)
    finally:
        transport.close()


def _log_line(server: str, line: bytes) -> None:
    text = line.decode("utf-8", "replace").rstrip("\r")
    stderr_log.info("[%s] %s", server, text[:MAX_STDERR_LINE])


def _nothing() -> None:
    return None


__all__ = ["McpConnection", "ProgressCallback", "server_environment"]
