"""A server's ``tools/list``: read page by page within bounds, each tool checked off the loop.
What a bound left out is said in one note of the listing; nothing is logged here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

import anyio
import attrs
import mcp_types as types
from mcp.client.client import Client

from acp_sidecar.mcp.schemas import usable_schema
from acp_sidecar.tools.json_values import FrozenDict

MAX_LIST_PAGES: Final = 100
"""A ``tools/list`` still paginating after this many pages is read no further."""
MAX_TOOLS: Final = 1000
"""The most tools of one server that are used."""
MAX_TOOL_BYTES: Final = 128 * 1024
"""The largest tool (its definition as JSON: name, description, schemas, annotations)."""
MAX_LISTING_BYTES: Final = 8 * 1024 * 1024
"""The most bytes of tool definitions of one server that are used."""

T = TypeVar("T")


@attrs.frozen
class ListedTool:
    """One tool of a listing and its verdict."""

    tool: types.Tool
    schema: FrozenDict | str
    """Its input schema deep-frozen, or why the tool cannot be used."""

    @property
    def name(self) -> str:
        """The tool's name, as the server gave it."""
        return self.tool.name


@attrs.frozen
class Listing:
    """A server's tools as read, and why part of its listing was not (one line each)."""

    tools: tuple[ListedTool, ...] = ()
    notes: tuple[str, ...] = ()


class _Stopped(Exception):
    """The read was cancelled: the worker thread gives up."""


@attrs.define
class _Budget:
    """What the pages read so far have used of the bounds."""

    tools: int = 0
    bytes: int = 0


async def read_listing(client: Client, server: str) -> Listing:
    """``server``'s tools, page by page, within the bounds (see the module)."""
    tools: list[ListedTool] = []
    budget = _Budget()
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        checked, full = await _in_thread(_check_page, page.tools, budget)
        tools.extend(checked)
        if full is not None:
            return Listing(tuple(tools), (_note(server, full, budget),))
        cursor = page.next_cursor
        if not cursor:
            return Listing(tuple(tools))
    note = (
        f"The MCP server {server!r} was still listing its tools after {MAX_LIST_PAGES} pages; "
        f"the {len(tools):,} tools of those pages are used."
    )
    return Listing(tuple(tools), (note,))


def _note(server: str, full: str, budget: _Budget) -> str:
    return (
        f"The MCP server {server!r} offers more than {full}; only its first "
        f"{budget.tools:,} tools are used."
    )


def _check_page(
    tools: Sequence[types.Tool], budget: _Budget, stop: threading.Event
) -> tuple[list[ListedTool], str | None]:
    """In a worker thread: the page's tools checked, until a bound is reached (then its
    name: what the server offers more than)."""
    checked: list[ListedTool] = []
    for tool in tools:
        if stop.is_set():
            raise _Stopped
        if budget.tools >= MAX_TOOLS:
            return checked, f"{MAX_TOOLS:,} tools"
        size = len(tool.model_dump_json(by_alias=True, exclude_none=True))
        if size > MAX_TOOL_BYTES:
            verdict: FrozenDict | str = (
                f"its definition takes {_kib(size)} (at most {_kib(MAX_TOOL_BYTES)} is used)"
            )
        elif budget.bytes + size > MAX_LISTING_BYTES:
            return checked, f"{_kib(MAX_LISTING_BYTES)} of tool definitions"
        else:
            verdict = usable_schema(tool)
            budget.bytes += size
        budget.tools += 1
        checked.append(ListedTool(tool, verdict))
    return checked, None


def _kib(size: int) -> str:
    return f"{size / 1024 / 1024:g} MiB" if size >= 1024 * 1024 else f"{-(-size // 1024):,} KiB"


async def _in_thread(
    work: Callable[[Sequence[types.Tool], _Budget, threading.Event], T],
    tools: Sequence[types.Tool],
    budget: _Budget,
) -> T:
    """``work(tools, budget, stop)`` in a worker thread; cancelling the caller sets ``stop``
    and returns at once (the thread stops at its next tool)."""
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(work, tools, budget, stop, abandon_on_cancel=True)
    finally:
        stop.set()


__all__ = [
    "MAX_LISTING_BYTES",
    "MAX_LIST_PAGES",
    "MAX_TOOLS",
    "MAX_TOOL_BYTES",
    "ListedTool",
    "Listing",
    "read_listing",
]
