"""``read``: a window of a text file, with line numbers, from the editor's buffer or the disk.

At most :data:`MAX_LINES` lines a call, a footer saying how to continue. From the editor the
text includes unsaved changes; the binary check is made on disk.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated

import attrs

from acp_sidecar.tools.builtin.errors import BinaryFileError
from acp_sidecar.tools.builtin.files.line_window import (
    MAX_LINE_CHARS,
    Outcome,
    read_disk,
    window_of_text,
)
from acp_sidecar.tools.builtin.files.paths import WorkspacePath, resolve_path
from acp_sidecar.tools.builtin.files.textfile import editor_read, require_file, sniff_file
from acp_sidecar.tools.content import ToolOutput
from acp_sidecar.tools.context import tool_context
from acp_sidecar.tools.definition import define_tool
from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.presentation import (
    FileLocation,
    GenericCallView,
    GenericResultView,
    ToolResult,
    given_arguments,
)

MAX_LINES = 2000
"""Lines per call."""


@attrs.frozen
class ReadArgs:
    """The parameters of ``read``."""

    path: Annotated[
        str, "The file to read: a path relative to the workspace root, or an absolute path."
    ]
    offset: Annotated[
        int | None,
        "The 1-based line number to start reading at (default 1). Use it to page through a "
        "long file: each result says which offset continues it.",
    ] = None
    limit: Annotated[
        int | None, f"The maximum number of lines to return (default and maximum {MAX_LINES})."
    ] = None


def _check_window(args: ReadArgs) -> tuple[int, int]:
    problems = []
    if args.offset is not None and args.offset < 1:
        problems.append(
            f"/offset: must be 1 or more (lines are numbered from 1), got {args.offset}"
        )
    if args.limit is not None and args.limit < 1:
        problems.append(f"/limit: must be 1 or more, got {args.limit}")
    if problems:
        raise ToolArgsError(problems)
    return args.offset or 1, min(args.limit or MAX_LINES, MAX_LINES)


def links_note(links: int) -> str:
    """The note on a file with other hard links (``links``: its ``st_nlink``)."""
    others = links - 1
    names = "1 other link" if others == 1 else f"{others:,} other links"
    return (
        f"note: this file has {names} (hard links), which may be outside the workspace; "
        "a write or edit here replaces only this name and leaves the others as they are."
    )


def _render(target: WorkspacePath, outcome: Outcome) -> str:
    window, total = outcome.window, outcome.total
    note = [f"[{links_note(outcome.links)}]"] if outcome.links > 1 else []
    if total == 0:
        return "\n".join([f"[{target.shown} is empty.]", *note])
    parts = ["\n".join(window.lines)]
    if window.end < total:
        why = " (the 256 KiB per-call limit was reached)" if window.stopped_by_bytes else ""
        parts.append(
            f"[Lines {window.start}–{window.end} of {total}{why}. "
            f"Continue with offset={window.end + 1}.]"
        )
    elif window.start > 1:
        parts.append(f"[Lines {window.start}–{window.end} of {total}; end of file.]")
    if window.cut_lines:
        parts.append(
            f"[{window.cut_lines} line(s) longer than {MAX_LINE_CHARS:,} characters were cut.]"
        )
    if window.lossy:
        parts.append("[The file is not valid UTF-8; undecodable bytes are shown as U+FFFD (�).]")
    if outcome.encoding not in ("utf-8", "utf-8 with BOM"):
        parts.append(f"[Decoded from {outcome.encoding}.]")
    return "\n".join(parts + note)


async def execute_read(args: ReadArgs, execution: ToolExecution) -> ToolOutput:
    """Run one ``read`` call."""
    ctx = tool_context(execution)
    target = resolve_path(ctx, args.path)
    start, limit = _check_window(args)
    files = ctx.files
    if files is not None and files.can_read:
        info = await asyncio.to_thread(require_file, target)
        if await asyncio.to_thread(sniff_file, target) is None:
            raise BinaryFileError(f"{target.shown} is a binary file; only text files can be read.")
        text = await editor_read(files, target)
        outcome = attrs.evolve(window_of_text(text, start, limit, "utf-8"), links=info.st_nlink)
        source = "editor"
    else:
        stop = threading.Event()
        remove = (
            execution.signal.add_callback(lambda _reason: stop.set()) if execution.signal else None
        )
        try:
            outcome = await asyncio.to_thread(read_disk, target, start, limit, stop.is_set)
        finally:
            stop.set()  # the call is over, however it ended: the thread stops at its next chunk
            if remove is not None:
                remove()
        source = "disk"
    if outcome.total and start > outcome.total:
        raise ToolArgsError(
            [f"/offset: {start} is past the end of {target.shown}, which has {outcome.total} lines"]
        )
    if not outcome.total and start > 1:
        raise ToolArgsError([f"/offset: {start} is past the end of {target.shown}, which is empty"])
    window = outcome.window
    return ToolOutput(
        _render(target, outcome),
        meta={
            "path": target.path,
            "start_line": window.start if outcome.total else 0,
            "end_line": window.end if outcome.total else 0,
            "total_lines": outcome.total,
            "source": source,
            **({"other_links": outcome.links - 1} if outcome.links > 1 else {}),
        },
    )


def present_read_call(args: ReadArgs) -> GenericCallView:
    """The pending card: generic, ``kind: "read"``, located at the first line read."""
    return GenericCallView(
        title=f"Read {args.path}",
        kind="read",
        raw_input=given_arguments(args),
        locations=[FileLocation(path=args.path, line=args.offset or 1)],
    )


def present_read_result(args: ReadArgs, result: ToolResult) -> GenericResultView | None:
    """The completed card: the title says which lines were read."""
    meta = result.meta
    if result.is_error or not isinstance(meta, dict) or "total_lines" not in meta:
        return None
    total, start, end = meta.get("total_lines"), meta.get("start_line"), meta.get("end_line")
    others = meta.get("other_links")
    links = (
        f"; {others:,} other hard link{'s' if others > 1 else ''}"
        if (isinstance(others, int) and others > 0)
        else ""
    )
    if not total:
        return GenericResultView(title=f"Read {args.path} (empty{links})")
    return GenericResultView(title=f"Read {args.path} (lines {start}–{end} of {total}{links})")


read_tool = define_tool(
    name="read",
    description=(
        "Read a text file in the workspace. Returns its lines prefixed with their 1-based line "
        f"numbers and a tab, at most {MAX_LINES:,} lines and 256 KiB per call; lines longer "
        f"than {MAX_LINE_CHARS:,} characters are cut. A footer tells you when there is more "
        "and which offset continues. When the editor has the file open, you read its current "
        "contents, unsaved changes included. Binary files are refused; a file that is not "
        "valid UTF-8 is decoded as Latin-1 (and edit and write keep it Latin-1). A note says "
        "when the file has other hard links. The line-number prefix is not part of the file: "
        "leave it out of edit's old_string."
    ),
    parameters=ReadArgs,
    execute=execute_read,
    present_call=present_read_call,
    present_result=present_read_result,
    read_only=True,
)
