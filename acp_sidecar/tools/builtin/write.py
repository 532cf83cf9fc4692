"""``write``: create or overwrite a text file, atomically or through the editor.

The permission card is the diff against the file as it is then (overwriting is never shown as
creating). An existing file keeps its encoding, BOM and mode; a binary file is never overwritten.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import attrs

from acp_sidecar.tools.builtin.files.atomic import atomic_write
from acp_sidecar.tools.builtin.files.confined import remove_created
from acp_sidecar.tools.builtin.files.diffs import (
    META_TEXT_CAP,
    Hunk,
    bounded,
    diff_result_view,
    diffs_to_meta,
    file_diffs_from_meta,
    text_hunks,
)
from acp_sidecar.tools.builtin.files.encoding import UTF8, Encoding, encode_document, printable
from acp_sidecar.tools.builtin.files.paths import WorkspacePath, resolve_path
from acp_sidecar.tools.builtin.files.textfile import (
    editor_read,
    editor_write,
    existing_file,
    make_parents,
    read_document,
)
from acp_sidecar.tools.content import ToolOutput
from acp_sidecar.tools.context import tool_context
from acp_sidecar.tools.definition import define_tool
from acp_sidecar.tools.effects import FileEffect
from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.presentation import DiffCallView, DiffResultView, FileDiff, ToolResult


@attrs.frozen
class WriteArgs:
    """The parameters of ``write``."""

    path: Annotated[
        str,
        "The file to create or overwrite: a path relative to the workspace root, or an "
        "absolute path. Missing parent directories are created.",
    ]
    content: Annotated[str, "The complete new content of the file, exactly as it should be."]


def line_count(text: str) -> int:
    """The number of lines of ``text`` (a final line without a newline counts)."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


@attrs.frozen
class _Before:
    """The file a write replaces, as it is now."""

    target: WorkspacePath
    text: str | None
    """Its text (the editor's, when the editor serves reads); ``None``: there is no file."""
    encoding: Encoding


async def _before(args: WriteArgs, execution: ToolExecution) -> _Before:
    """Resolve the target and read what is there (raises the errors the write would)."""
    ctx = tool_context(execution)
    target = resolve_path(ctx, args.path)
    files = ctx.files
    if await asyncio.to_thread(existing_file, target) is None:
        return _Before(target, None, UTF8)
    document = await asyncio.to_thread(read_document, target, verb="overwritten")
    before = document.text
    if files is not None and files.can_read:
        before = await editor_read(files, target)
    return _Before(target, before, document.encoding)


async def execute_write(args: WriteArgs, execution: ToolExecution) -> ToolOutput:
    """Run one ``write`` call."""
    current = await _before(args, execution)
    target, before, encoding = current.target, current.text, current.encoding
    files = tool_context(execution).files
    lines = line_count(args.content)
    if before == args.content:
        return ToolOutput(
            f"{target.shown} already has this content ({lines} lines); nothing was changed.",
            meta=_meta(target.path, before, args.content),
        )
    if files is not None and files.can_write:
        created = await asyncio.to_thread(make_parents, target)
        try:
            await editor_write(files, target, args.content)
        except BaseException:
            await asyncio.shield(asyncio.to_thread(remove_created, created))
            raise
    else:
        try:
            data = encode_document(args.content, encoding)
        except UnicodeEncodeError as exc:
            raise ToolArgsError(
                [f"/content: cannot be encoded as {encoding.label} (the file's encoding): {exc}"]
            ) from exc
        await asyncio.to_thread(atomic_write, target, data)
    if before is None:
        text = f"Created {target.shown} ({lines} lines)."
    else:
        text = f"Wrote {target.shown} ({lines} lines; it had {line_count(before)})."
    return ToolOutput(text, meta=_meta(target.path, before, args.content))


def _meta(path: str, before: str | None, after: str) -> dict[str, Any]:
    if before is None:
        hunks = [Hunk(1, 1, "", after)]
    elif len(before) + len(after) <= META_TEXT_CAP:
        hunks = [Hunk(1, 1, printable(before), after)]  # the whole file: the best card
    else:
        hunks = text_hunks(before, after)
    return {"path": path, "created": before is None, **diffs_to_meta(bounded(hunks))}


def present_write_call(args: WriteArgs) -> DiffCallView:
    """The pending card: the content as a new file (``old_text: null``)."""
    return DiffCallView(
        title=f"Write {args.path}",
        diffs=[FileDiff(path=args.path, old_text=None, new_text=args.content)],
    )


async def preview_write(args: WriteArgs, execution: ToolExecution) -> DiffCallView:
    """The card to ask with: the diff against the file as it is now (the result's diff)."""
    current = await _before(args, execution)
    diffs = file_diffs_from_meta(_meta(current.target.path, current.text, args.content))
    assert diffs is not None  # _meta always makes well-formed meta
    return DiffCallView(title=f"Write {args.path}", diffs=diffs)


def present_write_result(args: WriteArgs, result: ToolResult) -> DiffResultView | None:
    """The completed card: the diff against the before-image, from meta."""
    return diff_result_view("Write", args.path, result)


write_tool = define_tool(
    name="write",
    description=(
        "Create a text file, or replace the whole content of an existing one. Missing parent "
        "directories are created. An existing file keeps its encoding (content it cannot hold "
        "is refused), byte-order mark and permissions; the write is atomic (a failure leaves "
        "the old file intact). When the editor handles files, it decides the encoding. To "
        "change part of a file, prefer edit. Binary files cannot be overwritten."
    ),
    parameters=WriteArgs,
    execute=execute_write,
    present_call=present_write_call,
    present_result=present_write_result,
    preview_call=preview_write,
    file_effects=lambda args: [FileEffect(args.path, "change")],
)
