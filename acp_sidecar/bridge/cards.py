"""Pure mapping of card views onto ACP ``tool_call`` / ``tool_call_update`` (live and replay).

Invariants:
- Wire paths are absolute; titles are one line, with control and bidi characters made visible.
- A terminal card uses ``_meta`` only for a client that advertised ``terminal_output``; its
  result update then carries **no** ``content`` (content replaces the whole collection).
- A terminal result for a call that was not a terminal card renders generic (orphan guard).
- ``failed`` also for a command that exited non-zero or was killed: the model still gets its
  output as a normal result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TypeAlias, assert_never

from acp_sidecar.bridge.context import CardContext, absolute, relative_title
from acp_sidecar.protocol import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    Plan,
    PlanEntry,
    PlanItems,
    PlanMarkdown,
    PlanRemoved,
    PlanUpdate,
    ResourceLinkContentBlock,
    TextContentBlock,
    TextResourceContents,
    ToolCallContent,
    ToolCallContentBlock,
    ToolCallDiff,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolCallTerminal,
)
from acp_sidecar.protocol import ContentBlock as WireContentBlock
from acp_sidecar.text import visible, visible_line
from acp_sidecar.tools.content import (
    AudioContent,
    BlobResource,
    ContentBlock,
    EmbeddedResource,
    EmbeddedResourceContent,
    ImageContent,
    ResourceLinkContent,
    TextContent,
    TextResource,
)
from acp_sidecar.tools.json_values import FrozenJson
from acp_sidecar.tools.presentation import (
    DiffCallView,
    DiffResultView,
    FileDiff,
    FileLocation,
    GenericCallView,
    GenericResultView,
    PlanResultView,
    TerminalCallView,
    TerminalResultView,
    ToolCallView,
    ToolResult,
    ToolResultView,
)

_BACKTICKS = re.compile(r"`+")

PlanSessionUpdate: TypeAlias = Plan | PlanUpdate | PlanRemoved
"""What a plan result sends after its card."""


def wire_block(block: ContentBlock) -> WireContentBlock:
    """A tool content block as an ACP content block."""
    match block:
        case TextContent(text=text):
            return TextContentBlock(text=text)
        case ImageContent(data=data, mime_type=mime_type):
            return ImageContentBlock(data=data, mime_type=mime_type)
        case AudioContent(data=data, mime_type=mime_type):
            return AudioContentBlock(data=data, mime_type=mime_type)
        case ResourceLinkContent():
            return ResourceLinkContentBlock(
                name=block.name,
                uri=block.uri,
                title=block.title,
                description=block.description,
                mime_type=block.mime_type,
                size=block.size,
            )
        case EmbeddedResourceContent(resource=resource):
            return EmbeddedResourceContentBlock(resource=_wire_resource(resource))
        case _:
            assert_never(block)


def _wire_resource(resource: EmbeddedResource) -> TextResourceContents | BlobResourceContents:
    match resource:
        case TextResource(uri=uri, text=text, mime_type=mime_type):
            return TextResourceContents(text=text, uri=uri, mime_type=mime_type)
        case BlobResource(uri=uri, blob=blob, mime_type=mime_type):
            return BlobResourceContents(blob=blob, uri=uri, mime_type=mime_type)
        case _:
            assert_never(resource)


def _content(blocks: Sequence[ContentBlock]) -> list[ToolCallContent]:
    # A text block (most results' only one) is mapped as wire_block maps it, inline.
    text, block_of = TextContent, wire_block
    return [
        ToolCallContentBlock(TextContentBlock(text=b.text) if type(b) is text else block_of(b))
        for b in blocks
    ]


def _text(text: str) -> ToolCallContent:
    return ToolCallContentBlock(content=TextContentBlock(text=text))


def _shown(title: str | None) -> str | None:
    return None if title is None else visible_line(title)


def _fence(text: str) -> str:
    """A backtick fence longer than any backtick run in ``text`` (so nothing inside ends it)."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def _command_block(command: str) -> ToolCallContent:
    """The whole command as a code block, controls and bidi characters shown as signs."""
    shown = visible(command, lines=True)
    fence = _fence(shown)
    return _text(f"{fence}sh\n{shown}{'' if shown.endswith(chr(10)) else chr(10)}{fence}")


def _terminal_head(view: TerminalCallView) -> list[ToolCallContent]:
    """What a terminal card shows above its output: the command, then its description."""
    head: list[ToolCallContent] = []
    if view.command:
        head.append(_command_block(view.command))
    if view.description:
        head.append(_text(visible(view.description, lines=True)))
    return head


def _diffs(diffs: Sequence[FileDiff], ctx: CardContext) -> list[ToolCallContent]:
    return [
        ToolCallDiff(path=absolute(d.path, ctx.cwd), old_text=d.old_text, new_text=d.new_text)
        for d in diffs
    ]


def _locations(locations: Sequence[FileLocation], ctx: CardContext) -> list[ToolCallLocation]:
    return [ToolCallLocation(path=absolute(loc.path, ctx.cwd), line=loc.line) for loc in locations]


def terminal_id(call_id: str) -> str:
    """The terminal id of a call's terminal card (stable across live and replay)."""
    return call_id


def exit_status(exit_code: int | None, signal: str | None) -> str:
    """The exit line under a console block (``""`` when neither is known)."""
    if signal is not None:
        return f"Terminated by signal {signal}"
    if exit_code is not None:
        return f"Exit code: {exit_code}"
    return ""


def console_block(output: str, exit_code: int | None = None, signal: str | None = None) -> str:
    """Markdown for a terminal's output: a ``console`` fence longer than any backtick run in
    the output (so nothing inside can close it), then the exit status."""
    fence = _fence(output)
    body = output if output.endswith("\n") or not output else output + "\n"
    status = exit_status(exit_code, signal)
    block = f"{fence}console\n{body}{fence}"
    return f"{block}\n{status}" if status else block


def call_start(
    call_id: str,
    view: ToolCallView,
    ctx: CardContext,
    arguments: FrozenJson = None,
    *,
    name: str | None = None,
) -> ToolCallStart:
    """The ``tool_call`` that opens a card (status ``pending``), carrying ``name``: the tool's
    registry name (``read``, ``mcp__time__get_current_time``), live and on replay alike.

    Every card carries the call's input as ``rawInput``: a generic view's own ``raw_input``
    when it gives one, else ``arguments`` (the call's arguments as the tool received them).
    Both are deep-frozen JSON and go on the card as they are, not copied: the wire encodes a
    frozen object and array as any other.
    """
    match view:
        case GenericCallView(locations=locations, content=blocks):
            title = view.title
            if locations:  # most generic cards name no file and show nothing while pending
                title = relative_title(title, [loc.path for loc in locations], ctx.cwd)
            return ToolCallStart(
                tool_call_id=call_id,
                name=name,
                title=visible_line(title),
                kind=view.kind or "other",
                status="pending",
                content=_content(blocks) if blocks else None,
                locations=_locations(locations, ctx) if locations else None,
                raw_input=arguments if view.raw_input is None else view.raw_input,
            )
        case DiffCallView():
            cwd = ctx.cwd
            paths = [d.path for d in view.diffs]
            content: list[ToolCallContent] = []
            located: list[ToolCallLocation] = []  # without locations: each diff's whole file
            for d in view.diffs:
                path = absolute(d.path, cwd)  # made absolute once, for the diff and its file
                content.append(ToolCallDiff(path=path, old_text=d.old_text, new_text=d.new_text))
                located.append(ToolCallLocation(path=path))
            if view.locations:
                paths += [loc.path for loc in view.locations]
                located = _locations(view.locations, ctx)
            return ToolCallStart(
                tool_call_id=call_id,
                name=name,
                title=visible_line(relative_title(view.title, paths, ctx.cwd)),
                kind="edit",
                status="pending",
                content=content,
                locations=located,
                raw_input=arguments,
            )
        case TerminalCallView():
            content = _terminal_head(view)
            meta: dict[str, Any] | None = None
            if ctx.terminal_output:
                tid = terminal_id(call_id)
                content.append(ToolCallTerminal(terminal_id=tid))
                cwd = ctx.cwd if view.cwd is None else absolute(view.cwd, ctx.cwd)
                meta = {"terminal_info": {"terminal_id": tid, "cwd": cwd}}
            return ToolCallStart(
                tool_call_id=call_id,
                name=name,
                title=visible_line(view.title),
                kind="execute",
                status="pending",
                content=content or None,
                raw_input=arguments,
                meta=meta,
            )
        case _:
            assert_never(view)


def status_update(call_id: str, status: ToolCallStatus) -> ToolCallProgress:
    """A ``tool_call_update`` that only moves the status (e.g. ``in_progress``)."""
    return ToolCallProgress(tool_call_id=call_id, status=status)


def result_update(
    call_id: str,
    call_view: ToolCallView,
    result_view: ToolResultView | None,
    result: ToolResult,
    ctx: CardContext,
    *,
    streamed: int = 0,
) -> ToolCallProgress:
    """The ``tool_call_update`` that completes a card.

    ``streamed`` is how many characters of a terminal's output already reached the client as
    live ``terminal_output`` updates; only the rest is sent here (0 on replay).
    """
    status: ToolCallStatus = "failed" if result.is_error else "completed"
    match result_view:
        case None:
            raw = _content(result.content)
            if isinstance(call_view, TerminalCallView) and ctx.terminal_output:
                # Keep the terminal (and the output it already shows) under the message.
                raw.append(ToolCallTerminal(terminal_id=terminal_id(call_id)))
            return ToolCallProgress(tool_call_id=call_id, status=status, content=raw)
        case GenericResultView():
            shown = result.content if result_view.content is None else result_view.content
            return ToolCallProgress(
                tool_call_id=call_id,
                status=status,
                title=_result_title(result_view.title, call_view, ctx),
                content=_content(shown),
            )
        case DiffResultView():
            paths = [d.path for d in result_view.diffs]
            return ToolCallProgress(
                tool_call_id=call_id,
                status=status,
                title=None
                if result_view.title is None
                else visible_line(relative_title(result_view.title, paths, ctx.cwd)),
                content=_diffs(result_view.diffs, ctx),
                locations=_locations([FileLocation(p) for p in paths], ctx) or None,
            )
        case PlanResultView():
            # The plan itself goes out as its own update (:func:`plan_updates`); the card only
            # marks where it changed. A client without plan operations has no place for a
            # Markdown plan but the card, which then shows the document.
            document = result_view.markdown
            in_card = bool(document and document.strip()) and not ctx.plan_operations
            return ToolCallProgress(
                tool_call_id=call_id,
                status=status,
                title=_result_title(result_view.title, call_view, ctx),
                content=[ToolCallContentBlock(content=TextContentBlock(text=document or ""))]
                if in_card
                else [],
            )
        case TerminalResultView():
            if not command_succeeded(result_view):
                status = "failed"
            return _terminal_result(call_id, call_view, result_view, status, ctx, streamed)
        case _:
            assert_never(result_view)


CHECKLIST_PLAN_ID = "checklist"
"""The ``planId`` of the checklist (``plan`` with ``entries``)."""

MARKDOWN_PLAN_ID = "markdown"
"""The ``planId`` of the Markdown plan (``plan`` with ``markdown``); beside the checklist."""


def _entries(view: PlanResultView) -> list[PlanEntry]:
    return [
        PlanEntry(content=item.content, priority=item.priority, status=item.status)
        for item in view.entries
    ]


def plan_update(view: PlanResultView) -> Plan:
    """The legacy ``plan`` session update that replaces the client's whole plan with the view's."""
    return Plan(entries=_entries(view))


def plan_updates(view: PlanResultView, ctx: CardContext) -> list[PlanSessionUpdate]:
    """What a plan result sends after its card: for a client with plan operations, the
    ``plan_update`` of its plan (``plan_removed`` for an empty one); else the legacy ``plan``
    for a checklist, and nothing for a Markdown plan (its card shows it)."""
    if view.markdown is None:
        if not ctx.plan_operations:
            return [plan_update(view)]
        if not view.entries:
            return [PlanRemoved(plan_id=CHECKLIST_PLAN_ID)]
        return [PlanUpdate(plan=PlanItems(plan_id=CHECKLIST_PLAN_ID, entries=_entries(view)))]
    if not ctx.plan_operations:
        return []
    if not view.markdown.strip():
        return [PlanRemoved(plan_id=MARKDOWN_PLAN_ID)]
    document = PlanMarkdown(plan_id=MARKDOWN_PLAN_ID, content=view.markdown, path=view.path)
    return [PlanUpdate(plan=document)]


def command_succeeded(view: TerminalResultView) -> bool:
    """Whether a command ended well: not killed, and exit code 0 (or none reported)."""
    return view.signal is None and view.exit_code in (None, 0)


def _result_title(title: str | None, call_view: ToolCallView, ctx: CardContext) -> str | None:
    if title is None:
        return None
    match call_view:
        case GenericCallView():
            paths = [loc.path for loc in call_view.locations]
        case DiffCallView():
            paths = [d.path for d in call_view.diffs]
        case TerminalCallView():
            paths = []
        case _:
            assert_never(call_view)
    return visible_line(relative_title(title, paths, ctx.cwd))


def _terminal_result(
    call_id: str,
    call_view: ToolCallView,
    view: TerminalResultView,
    status: ToolCallStatus,
    ctx: CardContext,
    streamed: int,
) -> ToolCallProgress:
    output = view.output or ""
    if not isinstance(call_view, TerminalCallView) or not ctx.terminal_output:
        # The orphan guard and the console fallback: a generic card with a console block.
        return ToolCallProgress(
            tool_call_id=call_id,
            status=status,
            title=_shown(view.title),
            content=[_text(console_block(output, view.exit_code, view.signal))],
        )
    tid = terminal_id(call_id)
    meta: dict[str, Any] = {}
    rest = output[streamed:]
    if rest:
        meta["terminal_output"] = {"terminal_id": tid, "data": rest}
    if view.signal is not None:
        meta["terminal_exit"] = {"terminal_id": tid, "signal": view.signal}
    elif view.exit_code is not None:
        meta["terminal_exit"] = {"terminal_id": tid, "exit_code": view.exit_code}
    return ToolCallProgress(
        tool_call_id=call_id, status=status, title=_shown(view.title), meta=meta or None
    )


def text_progress(
    call_id: str, call_view: ToolCallView, text: str, ctx: CardContext
) -> ToolCallProgress:
    """A live progress message on a card (keeps a capable terminal card's terminal)."""
    content = [_text(text)]
    if isinstance(call_view, TerminalCallView) and ctx.terminal_output:
        content.append(ToolCallTerminal(terminal_id=terminal_id(call_id)))
    return ToolCallProgress(tool_call_id=call_id, content=content)


def output_progress(call_id: str, data: str) -> ToolCallProgress:
    """New terminal output for a capable client (the client appends ``data``)."""
    return ToolCallProgress(
        tool_call_id=call_id,
        meta={"terminal_output": {"terminal_id": terminal_id(call_id), "data": data}},
    )


def snapshot_progress(
    call_id: str, call_view: ToolCallView, tail: str, omitted: int, *, text: str | None = None
) -> ToolCallProgress:
    """The output so far as a console block, for clients without terminal cards.

    ``tail`` is the end of the output; ``omitted`` counts the characters before it that are
    not shown (memory stays bounded however much a tool writes). ``text`` is the latest
    progress message, shown above the output.
    """
    content = _terminal_head(call_view) if isinstance(call_view, TerminalCallView) else []
    if text is not None:
        content.append(_text(text))
    note = f"… {omitted:,} earlier characters not shown\n" if omitted else ""
    content.append(_text(console_block(note + tail)))
    return ToolCallProgress(tool_call_id=call_id, content=content)
