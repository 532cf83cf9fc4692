"""An MCP server's tools as tool definitions: names, schemas, declarations, cards, execute.

Invariants:
- A tool is named ``mcp__<server>__<tool>``, sanitized to the registry's name pattern
  (``[A-Za-z0-9_-]{1,64}``: every other character becomes ``_``; a name too long keeps its
  start and ends with a hash of the whole, so the same server and tool get the same name in
  every session and a stored call finds its tool again). Names are unique against ``taken``
  and each other (a clash gets ``_2``, ``_3``… in listing order).
- Its ``inputSchema`` is used only when it is a lossless-JSON object schema (``type:
  object``), the registry's own check; any other tool is left out with a warning, never
  registered half-checked.
- Risk is declared from the annotations and never guessed from a missing one:
  ``readOnlyHint: true`` → ``read_only``; ``openWorldHint`` absent or ``true`` →
  ``open_world`` (the MCP default is open world). So a read-only tool that says
  ``openWorldHint: false`` runs without asking in ``ask`` mode; a read-only one that reaches
  the open world is asked for; any other tool may change things.
- The card is generic and pure (a function of the arguments alone): the tool's title
  (``title``, else ``annotations.title``, else its name) and a short form of the arguments;
  kind ``read`` for a read-only closed-world tool, ``fetch`` for a read-only open-world one,
  ``other`` otherwise. The result card shows the result's content as it is.
- ``execute`` passes the arguments (a JSON object) to ``source.call_tool``, MCP progress to
  ``execution.report_progress``, and the execution's cancel signal to the call: the call's
  task is cancelled at once (the SDK then sends ``notifications/cancelled``) and the call
  ends :class:`~acp_sidecar.tools.errors.ToolCancelledError`. A gone server, a JSON-RPC
  error and an ``isError`` result each end as an error result with a clear message.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import re
from collections.abc import Awaitable, Callable, Collection
from typing import Any, ClassVar, Final, Protocol, TypeAlias

import mcp.types

from acp_sidecar.mcp.errors import McpCallError, McpServerGone
from acp_sidecar.mcp.results import error_text, result_content
from acp_sidecar.tools.content import ToolOutput
from acp_sidecar.tools.definition import ToolDefinition, ToolReturn
from acp_sidecar.tools.errors import ToolArgsError, ToolCancelledError, ToolError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.json_values import FrozenDict, JsonValueError, freeze_json, thaw
from acp_sidecar.tools.presentation import GenericCallView, ToolCallKind, ToolCallView

logger = logging.getLogger(__name__)

ProgressCallback: TypeAlias = Callable[[float, float | None, str | None], Awaitable[None]]
"""``(progress, total, message)`` of one MCP progress notification (as the connection's)."""

PREFIX: Final = "mcp__"
MAX_NAME: Final = 64
"""The registry's longest tool name."""
TITLE_ARGUMENTS_MAX: Final = 60
"""The longest short form of the arguments a card's title gets, in characters."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class ToolSource(Protocol):
    """An MCP server's tools and the way to call them (a connection implements it)."""

    name: str
    """The server's name, as the editor configured it."""

    @property
    def tools(self) -> tuple[mcp.types.Tool, ...]:
        """The server's latest ``tools/list``."""
        ...

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], *, progress: ProgressCallback | None = None
    ) -> mcp.types.CallToolResult:
        """Call one tool; cancelling the awaiting task cancels the request."""
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


def tool_name(server: str, tool: str, taken: Collection[str]) -> str:
    """The registry name of ``server``'s ``tool``, unique against ``taken`` (see the module)."""
    base = _UNSAFE.sub("_", f"{PREFIX}{server}__{tool}")
    if len(base) > MAX_NAME:
        digest = hashlib.sha256(f"{server}\0{tool}".encode("utf-8", "surrogatepass"))
        base = f"{base[: MAX_NAME - 9]}_{digest.hexdigest()[:8]}"
    name, number = base, 1
    while name in taken:
        number += 1
        suffix = f"_{number}"
        name = base[: MAX_NAME - len(suffix)] + suffix
    return name


def display_title(tool: mcp.types.Tool) -> str:
    """What a card calls the tool: its ``title``, else ``annotations.title``, else its name."""
    annotated = None if tool.annotations is None else tool.annotations.title
    for title in (tool.title, annotated):
        if title is not None and title.strip():
            return title
    return tool.name


def declared_risk(annotations: mcp.types.ToolAnnotations | None) -> tuple[bool, bool]:
    """``(read_only, open_world)`` as the annotations declare them; a missing hint is the
    cautious value (not read-only; open world, the MCP default)."""
    read_only = annotations is not None and annotations.read_only_hint is True
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
    return f"{count} — {message}" if message else count


def _schema(tool: mcp.types.Tool) -> FrozenDict | str:
    """The tool's input schema deep-frozen, or why it cannot be used."""
    schema: object = tool.input_schema
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return 'its inputSchema is not a JSON Schema object with "type": "object"'
    try:
        frozen = freeze_json(schema)
    except JsonValueError as exc:
        return "its inputSchema is not lossless JSON: " + "; ".join(
            f"inputSchema{violation}" for violation in exc.violations
        )
    assert isinstance(frozen, FrozenDict)
    return frozen


def mcp_tool_definitions(
    source: ToolSource, *, taken: Collection[str]
) -> tuple[tuple[ToolDefinition, ...], tuple[str, ...]]:
    """One :class:`ToolDefinition` per usable tool of ``source`` (see the module), and one
    warning per tool left out. Never raises for a bad tool."""
    used = set(taken)
    definitions: list[ToolDefinition] = []
    warnings: list[str] = []
    for tool in source.tools:
        schema = _schema(tool)
        if isinstance(schema, str):
            warnings.append(
                f"The MCP server {source.name!r} offers a tool {tool.name!r} that cannot be "
                f"used: {schema}. It is left out."
            )
            continue
        name = tool_name(source.name, tool.name, used)
        used.add(name)
        definitions.append(_definition(source, tool, name, schema))
    for warning in warnings:
        logger.warning("%s", warning)
    return tuple(definitions), tuple(warnings)


def _definition(
    source: ToolSource, tool: mcp.types.Tool, name: str, schema: FrozenDict
) -> ToolDefinition:
    read_only, open_world = declared_risk(tool.annotations)
    title = " ".join(display_title(tool).split()) or name  # one line, never empty
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
    task = asyncio.ensure_future(source.call_tool(tool, plain, progress=on_progress))
    remove = None if signal is None else signal.add_callback(_canceller(task))
    try:
        result = await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if signal is not None and signal.cancelled and not (current and current.cancelling()):
            # The signal cancelled the call, not someone cancelling this task.
            raise ToolCancelledError(f"{execution.name} was cancelled: {signal.reason}") from None
        raise
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
