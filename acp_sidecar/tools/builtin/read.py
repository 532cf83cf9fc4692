"""``read``: a window of a text file, with line numbers, from the editor's buffer or the disk.

Invariants:
- The model gets at most :data:`MAX_LINES` lines and :data:`MAX_BYTES` of text per call;
  longer lines are cut at :data:`MAX_LINE_CHARS` characters with a marker; a footer says
  which lines were shown and how to continue. Reading from disk streams the file, so a huge
  file costs one pass and the memory of the window.
- When the editor serves reads, the text is the editor's (unsaved changes included); the
  file must still exist on disk, and the binary check is made on disk.
- The card is generic, ``kind: "read"``, with a location at the window's first line;
  ``present_result`` depends on ``(args, result.meta)`` only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Annotated

import attrs

from acp_sidecar.tools.builtin.errors import BinaryFileError
from acp_sidecar.tools.builtin.paths import WorkspacePath, resolve_path
from acp_sidecar.tools.builtin.textfile import (
    SNIFF_BYTES,
    editor_read,
    open_for_reading,
    require_file,
    sniff_encoding,
    sniff_file,
)
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
)

MAX_LINES = 2000
"""Lines per call."""
MAX_BYTES = 256 * 1024
"""Bytes of model-facing text per call (UTF-8)."""
MAX_LINE_CHARS = 2000
"""Characters kept of one line."""


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


@attrs.define
class _Window:
    """Numbered lines collected until a limit is reached."""

    start: int
    limit: int
    lines: list[str] = attrs.Factory(list)
    size: int = 0
    cut_lines: int = 0
    lossy: bool = False
    full: bool = False
    stopped_by_bytes: bool = False

    @property
    def end(self) -> int:
        return self.start + len(self.lines) - 1

    def offer(self, number: int, text: str) -> bool:
        """Add line ``number``; ``False`` (and the window is full) when it does not fit."""
        if len(self.lines) >= self.limit:
            self.full = True
            return False
        if len(text) > MAX_LINE_CHARS:
            text = f"{text[:MAX_LINE_CHARS]} … [line cut: {len(text):,} characters]"
            self.cut_lines += 1
        entry = f"{number:>6}\t{text}"
        size = len(entry.encode("utf-8", "replace")) + 1
        if self.lines and self.size + size > MAX_BYTES:
            self.full = self.stopped_by_bytes = True
            return False
        self.lines.append(entry)
        self.size += size
        return True


@attrs.frozen
class _Outcome:
    window: _Window
    total: int
    encoding: str


def _text_lines(text: str) -> list[str]:
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _window_of_text(text: str, start: int, limit: int, encoding: str) -> _Outcome:
    window = _Window(start, limit)
    lines = _text_lines(text)
    for index in range(start - 1, len(lines)):
        line = lines[index]
        if not window.offer(index + 1, line[:-1] if line.endswith("\r") else line):
            break
    return _Outcome(window, len(lines), encoding)


def _decode_line(raw: bytes, window: _Window) -> str:
    raw = raw[:-1] if raw.endswith(b"\n") else raw
    raw = raw[:-1] if raw.endswith(b"\r") else raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        window.lossy = True
        return raw.decode("utf-8", "replace")


def _count_rest(chunks: Iterable[bytes]) -> int:
    """Lines in the rest of a stream that starts at a line boundary."""
    lines = 0
    last = b"\n"
    for chunk in chunks:
        lines += chunk.count(b"\n")
        last = chunk[-1:]
    return lines + (0 if last == b"\n" else 1)


def _read_disk(target: WorkspacePath, start: int, limit: int) -> _Outcome:
    require_file(target)
    with open_for_reading(target) as stream:
        head = stream.read(SNIFF_BYTES)
        encoding = sniff_encoding(head)
        if encoding is None:
            raise BinaryFileError(f"{target.shown} is a binary file; only text files can be read.")
        if encoding.codec != "utf-8":
            body = (head + stream.read())[len(encoding.bom) :]
            return _window_of_text(
                body.decode(encoding.codec, "replace"), start, limit, encoding.label
            )
        stream.seek(len(encoding.bom))
        window = _Window(start, limit)
        number = 0
        for raw in stream:
            number += 1
            if number < start:
                continue
            if not window.offer(number, _decode_line(raw, window)):
                rest = iter(lambda: stream.read(1 << 20), b"")
                return _Outcome(window, number + _count_rest(rest), encoding.label)
        return _Outcome(window, number, encoding.label)


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


def _render(target: WorkspacePath, outcome: _Outcome) -> str:
    window, total = outcome.window, outcome.total
    if total == 0:
        return f"[{target.shown} is empty.]"
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
    return "\n".join(parts)


async def execute_read(args: ReadArgs, execution: ToolExecution) -> ToolOutput:
    """Run one ``read`` call."""
    ctx = tool_context(execution)
    target = resolve_path(ctx, args.path)
    start, limit = _check_window(args)
    files = ctx.files
    if files is not None and files.can_read:
        await asyncio.to_thread(require_file, target)
        if await asyncio.to_thread(sniff_file, target) is None:
            raise BinaryFileError(f"{target.shown} is a binary file; only text files can be read.")
        outcome = _window_of_text(await editor_read(files, target), start, limit, "utf-8")
        source = "editor"
    else:
        outcome = await asyncio.to_thread(_read_disk, target, start, limit)
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
        },
    )


def present_read_call(args: ReadArgs) -> GenericCallView:
    """The pending card: generic, ``kind: "read"``, located at the first line read."""
    return GenericCallView(
        card="generic",
        title=f"Read {args.path}",
        kind="read",
        raw_input=attrs.asdict(args, filter=lambda _a, v: v is not None),
        locations=[FileLocation(path=args.path, line=args.offset or 1)],
    )


def present_read_result(args: ReadArgs, result: ToolResult) -> GenericResultView | None:
    """The completed card: the title says which lines were read."""
    meta = result.meta
    if result.is_error or not isinstance(meta, dict) or "total_lines" not in meta:
        return None
    total, start, end = meta.get("total_lines"), meta.get("start_line"), meta.get("end_line")
    if not total:
        return GenericResultView(card="generic", title=f"Read {args.path} (empty)")
    return GenericResultView(
        card="generic", title=f"Read {args.path} (lines {start}–{end} of {total})"
    )


read_tool = define_tool(
    name="read",
    description=(
        "Read a text file in the workspace. Returns its lines prefixed with their 1-based line "
        f"numbers and a tab, at most {MAX_LINES:,} lines and 256 KiB per call; lines longer "
        f"than {MAX_LINE_CHARS:,} characters are cut. A footer tells you when there is more "
        "and which offset continues. When the editor has the file open, you read its current "
        "contents, unsaved changes included. Binary files are refused; text that is not "
        "valid UTF-8 is shown with U+FFFD in place of the undecodable bytes. The line-number "
        "prefix is not part of the file: leave it out of edit's old_string."
    ),
    parameters=ReadArgs,
    execute=execute_read,
    present_call=present_read_call,
    present_result=present_read_result,
    read_only=True,
)
