"""An MCP server's tools as tool definitions: names, schemas, declarations, cards, execute.

Invariants:
- A tool's name is a pure function of (server, tool): ``mcp__<server>__<tool>``, or a
  sanitized form with a hash of both. A clash leaves tools out; nothing is renamed by order.
- Risk is declared from the annotations, never guessed from a missing one: a remote server's
  tools are open world whatever they say.
- The card is pure (the arguments alone); cancelling the call sends ``notifications/cancelled``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Collection
from typing import Any, ClassVar, Final, Protocol

import mcp.types

from acp_sidecar.mcp.callbacks import ProgressCallback
from acp_sidecar.mcp.errors import McpCallError, McpServerGone
from acp_sidecar.mcp.listing import ListedTool
from acp_sidecar.mcp.results import error_text, result_content
from acp_sidecar.tools.content import ToolOutput
from acp_sidecar.tools.definition import ToolDefinition, ToolReturn
from acp_sidecar.tools.errors import ToolArgsError, ToolCancelledError, ToolError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.json_values import FrozenDict, thaw
from acp_sidecar.tools.presentation import GenericCallView, ToolCallKind, ToolCallView

PREFIX: Final = "mcp__"
MAX_NAME: Final = 64
"""The registry's longest tool name."""
HASH_CHARS: Final = 10
"""Hex digits of the hash a sanitized, long or ambiguous name ends with."""
TITLE_MAX: Final = 80
"""The longest tool title a card shows, in characters."""
TITLE_ARGUMENTS_MAX: Final = 60
"""The longest short form of the arguments a card's title gets, in characters."""
PROGRESS_MESSAGE_MAX: Final = 200
"""The longest progress message a card shows, in characters."""
SHOWN_MAX: Final = 80
"""The longest tool name a warning quotes, in characters."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_HASHED = re.compile(rf"_[0-9a-f]{{{HASH_CHARS}}}\Z")


class ToolSource(Protocol):
    """An MCP server's tools and the way to call them (a connection implements it)."""

    name: str
    """The server's name, as the editor configured it."""

    @property
    def remote(self) -> bool:
        """Whether the server is reached over the network (HTTP, SSE), not started here."""
        ...

    @property
    def tools(self) -> tuple[ListedTool, ...]:
        """The server's latest ``tools/list``, each tool with its verdict."""
        ...

    @property
    def notes(self) -> tuple[str, ...]:
        """Why part of that listing is not used, one line each."""
        ...

    async def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        progress: ProgressCallback | None = None,
        call_id: str | None = None,
    ) -> mcp.types.CallToolResult:
        """Call one tool (for the tool call ``call_id``); cancelling the awaiting task
        cancels the request."""
        ...


class McpServerGoneError(ToolError):
    """The MCP server that owns the tool has exited or closed its connection."""

    code: ClassVar[str] = "MCP_SERVER_GONE"


class McpCallFailedError(ToolError):
    """The MCP server answered the call with a protocol (JSON-RPC) error."""

    code: ClassVar[str] = "MCP_CALL_FAILED"


class McpToolError(ToolError):
    """The MCP tool ran and reported an error (``isError``); the message is its content."""

    code: ClassVar[str] = "MCP_TOOL_ERROR"


def tool_name(server: str, tool: str) -> str:
    """The registry name of ``server``'s ``tool``: a pure function of the two (see the
    module)."""
    raw = f"{PREFIX}{server}__{tool}"
    plain = (
        len(raw) <= MAX_NAME
        and not _UNSAFE.search(raw)
        and "__" not in server
        and not server.endswith("_")
        and not _HASHED.search(raw)
    )
    if plain:
        return raw
    digest = hashlib.sha256(f"{server}\0{tool}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"{_UNSAFE.sub('_', raw)[: MAX_NAME - HASH_CHARS - 1]}_{digest[:HASH_CHARS]}"


def one_line(text: str, limit: int) -> str:
    """``text`` as one line (runs of whitespace become one space) of at most ``limit``
    characters (a cut one ends with ``…``)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def display_title(tool: mcp.types.Tool) -> str:
    """What a card calls the tool: its ``title``, else ``annotations.title``, else its name."""
    annotated = None if tool.annotations is None else tool.annotations.title
    for title in (tool.title, annotated):
        if title is not None and title.strip():
            return title
    return tool.name


def declared_risk(annotations: mcp.types.ToolAnnotations | None) -> tuple[bool, bool]:
    """``(read_only, open_world)`` as the annotations declare them; a missing hint is the
    cautious value (not read-only; open world, the MCP default), and so are contradictory
    ones (read-only but destructive: it may change things)."""
    read_only = (
        annotations is not None
        and annotations.read_only_hint is True
        and annotations.destructive_hint is not True
    )
    open_world = annotations is None or annotations.open_world_hint is not False
    return read_only, open_world


def card_kind(read_only: bool, open_world: bool) -> ToolCallKind:
    """The icon of an MCP tool's card."""
    if not read_only:
        return "other"
    return "fetch" if open_world else "read"


def _short_value(value: object) -> str:
    if isinstance(value, FrozenDict | dict):
        return "{…}" if value else "{}"
    if isinstance(value, tuple | list):
        return "[…]" if value else "[]"
    if isinstance(value, str):
        return value  # cut with the whole line by short_arguments
    return json.dumps(value)


def short_arguments(arguments: object, limit: int = TITLE_ARGUMENTS_MAX) -> str:
    """A one-line summary of a call's arguments for its title (``""`` for none)."""
    if not isinstance(arguments, FrozenDict | dict) or not arguments:
        return ""
    if len(arguments) == 1:
        text = _short_value(next(iter(arguments.values())))
    else:
        text = ", ".join(f"{key}: {_short_value(value)}" for key, value in arguments.items())
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def progress_text(progress: float, total: float | None, message: str | None) -> str:
    """One MCP progress notification as a line of text (``3/10 — copying``)."""

    def number(value: float) -> str:
        return f"{value:g}" if math.isfinite(value) else str(value)

    count = number(progress) if total is None else f"{number(progress)}/{number(total)}"
    line = one_line(message or "", PROGRESS_MESSAGE_MAX)
    return f"{count} — {line}" if line else count


def mcp_tool_definitions(
    source: ToolSource, *, taken: Collection[str]
) -> tuple[tuple[ToolDefinition, ...], tuple[str, ...]]:
    """One :class:`ToolDefinition` per usable tool of ``source`` (see the module), and the
    warnings: the listing's notes, then one per tool left out. Never raises for a bad tool;
    which tools of the listing are kept, and their names, do not depend on its order."""
    usable: list[tuple[mcp.types.Tool, str, FrozenDict]] = []
    warnings: list[str] = list(source.notes)

    def leave_out(tool: mcp.types.Tool, why: str) -> None:
        warnings.append(
            f"The MCP server {source.name!r} offers a tool "
            f"{one_line(tool.name, SHOWN_MAX)!r} that cannot be used: {why}. It is left out."
        )

    for listed in source.tools:
        tool, schema = listed.tool, listed.schema
        if isinstance(schema, str):
            leave_out(tool, schema)
        else:
            usable.append((tool, tool_name(source.name, tool.name), schema))
    shared = Counter(name for _, name, _ in usable)
    definitions: list[ToolDefinition] = []
    for tool, name, schema in usable:
        if name in taken:
            leave_out(tool, f"its name {name} is already taken by another tool")
        elif shared[name] > 1:
            leave_out(tool, f"{shared[name]} of the server's tools would be named {name}")
        else:
            definitions.append(_definition(source, tool, name, schema))
    return tuple(definitions), tuple(warnings)


def _definition(
    source: ToolSource, tool: mcp.types.Tool, name: str, schema: FrozenDict
) -> ToolDefinition:
    read_only, open_world = declared_risk(tool.annotations)
    open_world = open_world or source.remote
    title = one_line(display_title(tool), TITLE_MAX) or name  # one short line, never empty
    kind = card_kind(read_only, open_world)
    description = (tool.description or "").strip() or (
        f"The {tool.name} tool of the MCP server {source.name}."
    )

    def present_call(arguments: object) -> ToolCallView:
        shown = short_arguments(arguments)
        return GenericCallView(title=f"{title}: {shown}" if shown else title, kind=kind)

    async def execute(arguments: object, execution: ToolExecution) -> ToolReturn:
        return await call_tool(source, tool.name, arguments, execution)

    return ToolDefinition(
        name=name,
        description=description,
        parameters=schema,
        execute=execute,
        present_call=present_call,
        read_only=read_only,
        open_world=open_world,
    )


async def call_tool(
    source: ToolSource, tool: str, arguments: object, execution: ToolExecution
) -> ToolOutput:
    """Run one MCP call for ``execution`` (see the module); raises a :class:`ToolError`."""
    plain = {} if arguments is None else thaw(arguments)
    if not isinstance(plain, dict):
        raise ToolArgsError([f"arguments: expected a JSON object, got {type(plain).__name__}"])

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        await execution.report_progress(progress_text(progress, total, message))

    signal = execution.signal
    if signal is not None:
        signal.raise_if_cancelled()
    task = asyncio.ensure_future(
        source.call_tool(tool, plain, progress=on_progress, call_id=execution.call_id)
    )
    remove = None if signal is None else signal.add_callback(_canceller(task))
    try:
        result = await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise  # someone cancels this task: it must end cancelled
        if signal is not None and signal.cancelled:
            raise ToolCancelledError(f"{execution.name} was cancelled: {signal.reason}") from None
        # Nobody here asked for it: the connection ended its requests (it is closing).
        raise McpServerGoneError(
            f"MCP server {source.name!r} ended the call without an answer (its connection "
            "was closed). Its tools cannot be called until it is started again."
        ) from None
    except McpServerGone as exc:
        # The connection's messages name the server and say what happened; add what it means.
        raise McpServerGoneError(
            f"{_sentence(exc, source)} Its tools cannot be called until it is started again."
        ) from exc
    except McpCallError as exc:
        raise McpCallFailedError(_sentence(exc, source)) from exc
    finally:
        if remove is not None:
            remove()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    content = result_content(result)
    if result.is_error:
        raise McpToolError(error_text(content) or f"{tool} failed (the server gave no message)")
    return ToolOutput(content=content)


def _sentence(error: Exception, source: ToolSource) -> str:
    """An MCP error's message as a sentence that names the server."""
    text = str(error).strip() or type(error).__name__
    if source.name not in text:
        text = f"MCP server {source.name!r}: {text}"
    return text if text.endswith((".", "!", "?")) else text + "."


def _canceller(task: asyncio.Future[Any]) -> Callable[[str], None]:
    """A cancel-signal callback that cancels ``task`` on its loop (signals may fire from
    another thread)."""
    loop = task.get_loop()

    def cancel(_reason: str) -> None:
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            task.cancel()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)

    return cancel
