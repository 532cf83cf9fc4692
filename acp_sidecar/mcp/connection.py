"""One connection to one MCP server, made and driven by the official MCP SDK's client.

The connection lives in a task of its own: the SDK's context managers must be entered and
exited by the same task. Invariants: when it ends, a stdio server's whole process group is
stopped; callers see only :mod:`.errors`; re-lists are coalesced (a gap that doubles).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, Final

import anyio
import httpx2
import mcp_types as types
from mcp.client.client import Client
from mcp.client.session import IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from acp_sidecar.mcp.callbacks import ProgressCallback
from acp_sidecar.mcp.client_requests import ClientCallbacks
from acp_sidecar.mcp.client_side import ClientSideHooks
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
from acp_sidecar.mcp.launch import ServerProcess, launch, server_environment
from acp_sidecar.mcp.listing import ListedTool, Listing, read_listing
from acp_sidecar.mcp.stdio import process_streams
from acp_sidecar.mcp.streams import WatchedReadStream
from acp_sidecar.throttle import Throttle

logger = logging.getLogger(__name__)
_INVALID_LINES: Final = Throttle()
"""Warnings for lines of a server's stdout that are no message: a server printing junk in a
loop costs a few lines a minute (:mod:`acp_sidecar.throttle`), not a flood."""
RELIST_TIMEOUT: Final = 30.0
"""A re-list after ``notifications/tools/list_changed`` that takes longer is given up (the
old tools stay)."""
RELIST_GAP: Final = 1.0
"""Seconds from one re-list to the next at least (while notifications come now and then)."""
RELIST_GAP_MAX: Final = 30.0
"""The longest gap, reached while a server keeps saying its tools changed."""
HTTP_TIMEOUT: Final = httpx2.Timeout(30.0, read=300.0)
"""Connect/write 30 s; a response stream may stay open (read) for 300 s."""
CLIENT_INFO: Final = types.Implementation(name="acp-sidecar", version="0.1.0")


class McpConnection:
    """A live connection to one MCP server (see the module invariants).

    Made by :class:`acp_sidecar.mcp.servers.McpServers`; ``tools`` is the latest complete
    ``tools/list`` answer, each tool with its verdict.
    """

    def __init__(
        self,
        config: McpServerConfig,
        hooks: ClientSideHooks,
        *,
        on_tools_changed: Callable[[McpConnection], None],
        on_gone: Callable[[McpConnection, str], None],
        process: ServerProcess | OSError | None = None,
    ) -> None:
        """``process``: a stdio server's process already started for this connection (or
        why it could not be), which it now owns; None -> it starts its own."""
        self.name: str = config.name
        self.config: Final = config
        self._callbacks = ClientCallbacks(config.name, hooks)
        self._on_tools_changed = on_tools_changed
        self._on_gone = on_gone
        self._listing = Listing()
        self._client: Client | None = None
        self._scope = anyio.CancelScope()
        self._wake = asyncio.Event()
        self._relist = False
        self._relist_gap = RELIST_GAP
        self._next_relist = 0.0
        """``time.monotonic()`` before which no re-list starts."""
        self._gone = False
        self._gone_reported = False
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._process = process
        self._grace: float | None = None
        self.started_at: float | None = None
        """``time.monotonic()`` once ``initialize`` was answered and the tools listed."""

    @property
    def tools(self) -> tuple[ListedTool, ...]:
        """The latest tools/list, within its bounds."""
        return self._listing.tools

    @property
    def notes(self) -> tuple[str, ...]:
        """Why part of the latest tools/list is not used (its bounds), one line each."""
        return self._listing.notes

    @property
    def remote(self) -> bool:
        """Whether the server is reached over the network (HTTP, SSE)."""
        return isinstance(self.config, HttpServerConfig | SseServerConfig)

    @property
    def alive(self) -> bool:
        """Whether requests can still reach the server."""
        return self._client is not None and not self._gone and not self._stopping

    @property
    def process_group(self) -> int | None:
        """A stdio server's process group (its pid), once started; None for HTTP/SSE."""
        process = self._process
        return process.pid if isinstance(process, ServerProcess) else None

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
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressCallback | None = None,
        call_id: str | None = None,
    ) -> types.CallToolResult:
        """Cancelling the awaiting task sends `notifications/cancelled` for the request
        (SDK >= 2.3) and raises CancelledError. Raises McpServerGone / McpCallError.
        While it runs, the server may ask the user for input (``call_id``: the tool call's
        id, which the question names)."""
        client = self._client
        if client is None or not self.alive:
            raise McpServerGone(f"MCP server {self.name!r} is not running")
        forward = None
        if progress is not None:
            report = progress

            async def forward(progress: float, total: float | None, message: str | None) -> None:
                await report(progress, total, message)

        try:
            with self._callbacks.gate.call(call_id):
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

    async def aclose(self, grace: float | None = None) -> None:
        """Stops the server and waits until its task is over (and its process group gone).
        Idempotent. Cancelling the caller cancels the wait (CancelledError propagates), not
        the winding down; the task's own outcome (reported by it) is never raised here.

        ``grace``: a stdio server's whole stop takes about this long at most (see
        :meth:`~acp_sidecar.mcp.launch.ServerProcess.stop`); None -> the gentle default."""
        if grace is not None:
            self._grace = grace if self._grace is None else min(grace, self._grace)
        self._stop()
        if self._task is not None:
            await asyncio.wait((self._task,))
            if not self._task.cancelled():
                self._task.exception()  # retrieved: its outcome is not the caller's
        elif isinstance(self._process, ServerProcess):  # never opened
            await self._process.stop(self._grace)

    def _stop(self) -> None:
        self._stopping = True
        self._scope.cancel()

    async def _run(self, ready: asyncio.Future[None]) -> None:
        reason = "it stopped"
        try:
            with self._scope:
                async with AsyncExitStack() as stack:
                    self._client = await self._connect(stack)
                    self._listing = await read_listing(self._client, self.name)
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
            if isinstance(self._process, ServerProcess):
                await self._process.stop(self._grace)

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
                if not await self._relist_gap_passed():
                    continue
                self._relist = False
                try:
                    with anyio.fail_after(RELIST_TIMEOUT):
                        self._listing = await read_listing(client, self.name)
                except Exception as error:
                    if not self.alive:
                        continue
                    logger.warning(
                        "MCP server %r: re-listing its tools failed: %s",
                        self.name,
                        describe_failure(error, self.config),
                    )
                    continue
                finally:
                    self._next_relist = time.monotonic() + self._relist_gap
                self._on_tools_changed(self)

    def _report_gone(self, reason: str) -> None:
        """Tells the owner once that the server ended on its own (never after a stop)."""
        if not self._stopping and not self._gone_reported:
            self._gone_reported = True
            self._on_gone(self, reason)

    async def _relist_gap_passed(self) -> bool:
        """Waits out the gap since the last re-list ended; False when the server ended
        meanwhile."""
        delay = self._next_relist - time.monotonic()
        if delay > 0:
            with anyio.move_on_after(delay):
                while not self._gone:
                    self._wake.clear()
                    await self._wake.wait()
            if self._gone:
                self._wake.set()
                return False
            self._relist_gap = min(self._relist_gap * 2, RELIST_GAP_MAX)
        else:
            self._relist_gap = RELIST_GAP
        return True

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._relist = True
            self._wake.set()
        elif isinstance(message, Exception):  # a line that is no message: its server's fault
            _INVALID_LINES.log(
                logger,
                logging.WARNING,
                "an invalid line from an MCP server",
                "MCP server %r sent an invalid line: %s",
                self.name,
                one_line(message),
            )

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
        if self._process is None:
            self._process = await launch(config)
        process = self._process
        if isinstance(process, OSError):
            raise process
        unwatch = process.on_exit(self._ended)
        try:
            async with process_streams(process) as (read, write):
                yield WatchedReadStream(read, self._ended), write
        finally:
            unwatch()

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


__all__ = ["McpConnection", "ProgressCallback", "server_environment"]
