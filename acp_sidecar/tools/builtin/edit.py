"""``edit``: replace an exact string in a text file, keeping its line endings, encoding and BOM.

Invariants:
- ``old_string`` occurs exactly once (or ``replace_all``); each failure has its own code.
- A UTF-8 file is edited as bytes: nothing outside the replaced spans changes.
- A file is replaced only if unchanged since it was read (else ``FILE_CHANGED``).
"""

from __future__ import annotations

import asyncio
import re
from typing import Annotated

import attrs

from acp_sidecar.tools.built import diff_call_view, file_diff
from acp_sidecar.tools.builtin.errors import (
    AmbiguousMatchError,
    BinaryFileError,
    NoChangeError,
    NoMatchError,
)
from acp_sidecar.tools.builtin.files.atomic import Snapshot, atomic_write
from acp_sidecar.tools.builtin.files.diffs import (
    StoredDiffs,
    diff_result_view,
    diffs_to_meta,
    replacement_diffs,
)
from acp_sidecar.tools.builtin.files.encoding import Encoding, encode_document, printable
from acp_sidecar.tools.builtin.files.paths import WorkspacePath, resolve_path
from acp_sidecar.tools.builtin.files.textfile import (
    editor_read,
    editor_write,
    read_bytes,
    require_file,
    sniff_file,
)
from acp_sidecar.tools.content import ToolOutput
from acp_sidecar.tools.context import tool_context
from acp_sidecar.tools.definition import define_tool
from acp_sidecar.tools.effects import FileEffect
from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.presentation import DiffCallView, DiffResultView, FileDiff, ToolResult

_BARE_LF = re.compile(r"(?<!\r)\n")
_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t", re.MULTILINE)
_SHOWN_LINES = 10
"""How many occurrence line numbers a message lists."""


@attrs.frozen
class EditArgs:
    """The parameters of ``edit``."""

    path: Annotated[
        str, "The file to edit: a path relative to the workspace root, or an absolute path."
    ]
    old_string: Annotated[
        str,
        "The exact text to replace, as it is in the file now: same whitespace and indentation, "
        "without read's line-number prefixes. Include enough surrounding lines that it occurs "
        "exactly once, unless replace_all is true.",
    ]
    new_string: Annotated[str, "The text to put in its place; it must differ from old_string."]
    replace_all: Annotated[
        bool, "Replace every occurrence of old_string instead of exactly one (default false)."
    ] = False


def _crlf_file(data: bytes) -> bool:
    if b"\r" not in data:  # one memchr: the common case costs almost nothing
        return False
    crlf = data.count(b"\r\n")
    return crlf >= data.count(b"\n") - crlf


def _line_numbers(data: bytes, positions: list[int]) -> list[int]:
    numbers: list[int] = []
    line, last = 1, 0
    for position in positions:
        line += data.count(b"\n", last, position)
        last = position
        numbers.append(line)
    return numbers


def _listing(numbers: list[int], total: int) -> str:
    shown = ", ".join(str(n) for n in numbers[:_SHOWN_LINES])
    more = f", … ({total - _SHOWN_LINES} more)" if total > _SHOWN_LINES else ""
    return f"line{'s' if total > 1 else ''} {shown}{more}"


def _positions(data: bytes, needle: bytes, limit: int | None = None) -> list[int]:
    found: list[int] = []
    at = data.find(needle)
    while at >= 0 and (limit is None or len(found) < limit):
        found.append(at)
        at = data.find(needle, at + len(needle))
    return found


def _utf8(text: str, param: str) -> bytes:
    # Strict: a lone surrogate would write a byte that is no character into a UTF-8 file.
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolArgsError([f"/{param}: contains unpaired surrogate characters"]) from exc


@attrs.frozen
class _Plan:
    old: bytes
    new: bytes
    count: int
    """The occurrences replaced (non-overlapping, from the start: as ``bytes.replace``)."""
    first: list[int]
    """Where the first of them are (at most :data:`_SHOWN_LINES`), for messages."""


def _plan(args: EditArgs, data: bytes, target: WorkspacePath, crlf: bool) -> _Plan:
    """What to match and replace, and where (or the error of a bad match)."""
    old, new = _utf8(args.old_string, "old_string"), _utf8(args.new_string, "new_string")
    candidates = [(old, new)]
    if crlf:
        as_crlf = (
            _utf8(_BARE_LF.sub("\r\n", args.old_string), "old_string"),
            _utf8(_BARE_LF.sub("\r\n", args.new_string), "new_string"),
        )
        candidates = [as_crlf, (old, as_crlf[1])]
    for candidate in candidates:
        # Two are enough to tell "exactly once" from "more than once" without replace_all.
        positions = _positions(data, candidate[0], _SHOWN_LINES if args.replace_all else 2)
        if positions:
            old, new = candidate
            break
    else:
        hint = ""
        if _LINE_NUMBER_PREFIX.search(args.old_string):
            hint = " It seems to include read's line-number prefixes; leave them out."
        raise NoMatchError(
            f"old_string was not found in {target.shown}. It must match the file exactly, "
            f"including whitespace and indentation; read the file again to copy the current "
            f"text.{hint}"
        )
    if len(positions) > 1 and not args.replace_all:
        every = data.count(old)
        first = _positions(data, old, _SHOWN_LINES)
        raise AmbiguousMatchError(
            f"old_string occurs {every} times in {target.shown} "
            f"({_listing(_line_numbers(data, first), every)}). Include more "
            "surrounding text to make it unique, or set replace_all to true to replace every "
            "occurrence."
        )
    count = data.count(old) if args.replace_all else 1
    return _Plan(old, new, count, positions)


@attrs.frozen
class _Loaded:
    target: WorkspacePath
    data: bytes
    """UTF-8: the file's own bytes when it is UTF-8 on disk, else its text re-encoded."""
    encoding: Encoding
    raw: bool
    """``data`` is the file's bytes as they are on disk (BOM included)."""
    snapshot: Snapshot | None = None
    """The disk file as it was read (``None``: read through the editor)."""


def _transcoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


async def _load(args: EditArgs, execution: ToolExecution) -> _Loaded:
    ctx = tool_context(execution)
    target = resolve_path(ctx, args.path)
    files = ctx.files
    if files is not None and files.can_read:
        await asyncio.to_thread(require_file, target)
        sniffed = await asyncio.to_thread(sniff_file, target)
        if sniffed is None:
            raise BinaryFileError(
                f"{target.shown} is a binary file; only text files can be edited."
            )
        text = await editor_read(files, target)
        return _Loaded(target, _transcoded(text), sniffed, raw=False)
    data, encoding, stamp = await asyncio.to_thread(read_bytes, target, verb="edited")
    snapshot = Snapshot(stamp, data)
    if encoding.codec == "utf-8":
        return _Loaded(target, data, encoding, raw=True, snapshot=snapshot)
    try:
        text = data[len(encoding.bom) :].decode(encoding.codec)
    except UnicodeDecodeError as exc:
        raise BinaryFileError(
            f"{target.shown} is a binary file; only text files can be edited."
        ) from exc
    return _Loaded(target, _transcoded(text), encoding, raw=False, snapshot=snapshot)


async def _store(
    loaded: _Loaded, pieces: list[bytes | memoryview], execution: ToolExecution
) -> None:
    target, encoding = loaded.target, loaded.encoding
    files = tool_context(execution).files
    if loaded.raw and not (files is not None and files.can_write):
        await asyncio.to_thread(atomic_write, target, pieces, expected=loaded.snapshot)
        return
    joined = b"".join(pieces)
    if loaded.raw:
        joined = joined[len(encoding.bom) :]  # the editor keeps the mark itself
    text = joined.decode("utf-8", "surrogateescape" if loaded.raw else "surrogatepass")
    if files is not None and files.can_write:
        await editor_write(files, target, printable(text))
        return
    if encoding.bom and text.startswith("\ufeff"):
        text = text[1:]  # an editor's text may carry the mark the encoding adds back
    try:
        data = encode_document(text, encoding)
    except UnicodeEncodeError as exc:
        raise ToolArgsError(
            [f"/new_string: cannot be encoded as {encoding.label} (the file's encoding): {exc}"]
        ) from exc
    await asyncio.to_thread(atomic_write, target, data, expected=loaded.snapshot)


@attrs.frozen
class _Prepared:
    loaded: _Loaded
    plan: _Plan
    crlf: bool
    replaced: bytes | None
    """With ``replace_all``, the new content (in the same form as ``loaded.data``): one
    ``bytes.replace`` in C, however many occurrences there are."""
    hunks: StoredDiffs
    """The changed regions with their context, bounded for meta and cards."""

    def pieces(self) -> list[bytes | memoryview]:
        """The new content; one occurrence is spliced in without copying the file."""
        if self.replaced is not None:
            return [self.replaced]
        view, plan = memoryview(self.loaded.data), self.plan
        at = plan.first[0]
        return [view[:at], plan.new, view[at + len(plan.old) :]]


async def _prepare(args: EditArgs, execution: ToolExecution) -> _Prepared:
    """Check the arguments, load the file and plan the replacement (or raise why not)."""
    if not args.old_string:
        raise ToolArgsError(
            ["/old_string: must not be empty; use write to create or overwrite a file"]
        )
    if args.old_string == args.new_string:
        raise NoChangeError("old_string and new_string are identical; there is nothing to change.")
    loaded = await _load(args, execution)
    # Whole-file scans (and a copy): in one worker thread, so other sessions are served.
    return await asyncio.to_thread(_planned, args, loaded)


def _planned(args: EditArgs, loaded: _Loaded) -> _Prepared:
    data = loaded.data
    crlf = _crlf_file(data)
    plan = _plan(args, data, loaded.target, crlf)
    replaced = data.replace(plan.old, plan.new) if args.replace_all else None
    hunks = replacement_diffs(data, plan.old, plan.new, after=replaced)
    return _Prepared(loaded, plan, crlf, replaced, hunks)


async def execute_edit(args: EditArgs, execution: ToolExecution) -> ToolOutput:
    """Run one ``edit`` call."""
    prepared = await _prepare(args, execution)
    loaded, plan, crlf = prepared.loaded, prepared.plan, prepared.crlf
    data = loaded.data
    await _store(loaded, prepared.pieces(), execution)
    count = plan.count
    lines = _line_numbers(data, plan.first)
    what = "1 occurrence" if count == 1 else f"{count} occurrences"
    stored = prepared.hunks
    return ToolOutput(
        f"Edited {loaded.target.shown}: replaced {what} ({_listing(lines, count)}).",
        meta={
            "path": loaded.target.path,
            "replacements": count,
            "encoding": loaded.encoding.label,
            "line_endings": "crlf" if crlf else "lf",
            **diffs_to_meta(stored),
        },
    )


def _title(args: EditArgs) -> str:
    return f"Edit {args.path}" + (" (every occurrence)" if args.replace_all else "")


def present_edit_call(args: EditArgs) -> DiffCallView:
    """The pending card: ``old_string`` → ``new_string``."""
    return diff_call_view(_title(args), (file_diff(args.path, args.old_string, args.new_string),))


async def preview_edit(args: EditArgs, execution: ToolExecution) -> DiffCallView:
    """The card to ask with: the whole changed lines with context, as the result will show."""
    prepared = await _prepare(args, execution)
    path = prepared.loaded.target.path
    return DiffCallView(
        title=_title(args),
        diffs=[FileDiff(path, h.old_text, h.new_text) for h in prepared.hunks.hunks],
    )


def present_edit_result(args: EditArgs, result: ToolResult) -> DiffResultView | None:
    """The completed card: each changed region with context, from meta."""
    return diff_result_view("Edit", args.path, result)


edit_tool = define_tool(
    name="edit",
    description=(
        "Replace exact text in a file. old_string must match the file exactly (whitespace and "
        "indentation included, without read's line-number prefixes) and occur exactly once, "
        "unless replace_all is true. Read the file first. Line endings (CRLF stays CRLF), "
        "encoding and byte-order mark are kept (text the encoding cannot hold is refused; "
        "when the editor handles files, it decides); the write is atomic. Fails with "
        "NO_MATCH, AMBIGUOUS_MATCH or NO_CHANGE when old_string is missing, not unique, or "
        "equal to new_string, and with FILE_CHANGED when the file changed on disk meanwhile."
    ),
    parameters=EditArgs,
    execute=execute_edit,
    present_call=present_edit_call,
    present_result=present_edit_result,
    preview_call=preview_edit,
    file_effects=lambda args: [FileEffect(args.path, "change")],
)
