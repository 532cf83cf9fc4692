"""MCP tools from a server built with the MCP SDK's server side, reached through the SDK's
client over JSON-RPC in process: tools/list values as a real server lists them, progress
notifications, structured results, and a cancel the server hears (``notifications/cancelled``).

The adapter below is the smallest ToolSource over the SDK's client; the package's own
connection (with its process and error handling) is tested beside it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp.types as m
from mcp import Client
from mcp.server.mcpserver import Context, MCPServer

from acp_sidecar.bridge.context import CardContext
from acp_sidecar.bridge.policy import CallScope, SessionPolicy, install_policy
from acp_sidecar.bridge.runner import run_call
from acp_sidecar.mcp.callbacks import ProgressCallback
from acp_sidecar.mcp.listing import ListedTool, Listing, read_listing
from acp_sidecar.mcp.tools import mcp_tool_definitions
from acp_sidecar.tools import CancelSignal, ToolRegistry
from tests.fakes import Editor


def demo_server(heard: list[str], entered: asyncio.Event) -> MCPServer:
    server = MCPServer("demo")

    @server.tool(
        title="Count up",
        annotations=m.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    async def count(n: int, ctx: Context) -> str:
        """Count to n. Reports each step."""
        for step in range(1, n + 1):
            await ctx.report_progress(step, n, f"step {step}")
            await asyncio.sleep(0.08)  # past the card emitter's interval: each step shows
        return f"counted to {n}"

    @server.tool()
    async def weather(city: str) -> dict[str, Any]:
        """The weather in a city, as structured data."""
        return {"city": city, "celsius": 21}

    @server.tool()
    async def wait_forever() -> str:
        """Never answers."""
        entered.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            heard.append("cancelled")
            raise
        return "unreachable"

    return server


class ClientSource:
    """A ToolSource over the SDK's client (tests only)."""

    remote = False

    def __init__(self, name: str, client: Client, listing: Listing) -> None:
        self.name = name
        self._client = client
        self._listing = listing

    @property
    def tools(self) -> tuple[ListedTool, ...]:
        return self._listing.tools

    @property
    def notes(self) -> tuple[str, ...]:
        return self._listing.notes

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressCallback | None = None,
        call_id: str | None = None,
    ) -> m.CallToolResult:
        return await self._client.call_tool(tool, arguments, progress_callback=progress)


@asynccontextmanager
async def demo_session(
    mode: str = "auto",
) -> AsyncIterator[tuple[ToolRegistry, CallScope, Editor, list[str], asyncio.Event]]:
    heard: list[str] = []
    entered = asyncio.Event()
    # "legacy": the initialize handshake and JSON-RPC messages over in-memory streams.
    async with Client(demo_server(heard, entered), mode="legacy") as client:
        source = ClientSource("demo", client, await read_listing(client, "demo"))
        definitions, warnings = mcp_tool_definitions(source, taken=("read",))
        assert warnings == ()
        registry = ToolRegistry()
        for definition in definitions:
            registry.register(definition)
        install_policy(registry)
        editor = Editor("allow_once")
        scope = CallScope(
            session_id="s",
            cards=CardContext("/w"),
            policy=SessionPolicy(mode=mode),  # type: ignore[arg-type]
            send=editor.send,
            asker=editor,
            signal=CancelSignal(),
        )
        yield registry, scope, editor, heard, entered


async def test_listed_tools_become_definitions_with_their_declarations() -> None:
    async with demo_session() as (registry, _scope, _editor, _heard, _entered):
        count, weather, wait = registry.visible()
        assert (count.name, count.read_only, count.open_world) == ("mcp__demo__count", True, False)
        assert count.description == "Count to n. Reports each step."
        assert count.parameters["required"] == ("n",)
        assert (weather.name, weather.read_only, weather.open_world) == (
            "mcp__demo__weather",
            False,
            True,
        )
        assert wait.name == "mcp__demo__wait_forever"


async def test_progress_streams_and_the_result_completes_the_card_without_asking() -> None:
    async with demo_session("ask") as (registry, scope, editor, _heard, _entered):
        result = await run_call(registry, scope, "c1", "mcp__demo__count", {"n": 3})
        assert not editor.asked  # read-only, closed world: ask mode runs it
        assert result.content[0].text == "counted to 3"  # type: ignore[union-attr]
        cards = editor.cards("c1")
        assert (cards[0]["title"], cards[0]["kind"]) == ("Count up: 3", "read")
        shown = [
            c["content"]["text"]
            for u in cards[1:-1]
            for c in u.get("content", [])
            if c["content"]["type"] == "text"
        ]
        assert "1/3 — step 1" in shown and "3/3 — step 3" in shown
        assert cards[-1]["status"] == "completed"


async def test_structured_output_reaches_the_card() -> None:
    async with demo_session("ask") as (registry, scope, editor, _heard, _entered):
        result = await run_call(registry, scope, "c1", "mcp__demo__weather", {"city": "Oslo"})
        assert len(editor.asked) == 1  # no annotations: it may change things
        assert not result.is_error
        assert '"celsius": 21' in result.content[0].text  # type: ignore[union-attr]
        assert editor.cards("c1")[-1]["status"] == "completed"


async def test_a_cancelled_call_is_cancelled_on_the_server() -> None:
    async with demo_session("auto") as (registry, scope, editor, heard, entered):
        running = asyncio.create_task(
            run_call(registry, scope, "c1", "mcp__demo__wait_forever", {})
        )
        await asyncio.wait_for(entered.wait(), 30)  # hang guards
        scope.signal.cancel("the user pressed stop")
        result = await asyncio.wait_for(running, 30)
        assert result.error is not None and result.error.code == "CANCELLED"
        assert editor.cards("c1")[-1]["status"] == "failed"
        async with asyncio.timeout(30):
            while not heard:  # the server's handler ends when notifications/cancelled arrives
                await asyncio.sleep(0.01)
        assert heard == ["cancelled"]
