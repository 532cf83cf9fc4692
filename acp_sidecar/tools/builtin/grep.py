"""``grep``: search file contents with a regular expression, results grouped by file.

The files are the walk's (:mod:`.search.walk`), never an engine's. A cancelled search is an
error, never a result, so a later turn cannot take a partial search for the whole.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Annotated

import attrs

from acp_sidecar.tools.built import generic_call_view
from acp_sidecar.tools.builtin.errors import BinaryFileError, InvalidRegexError
from acp_sidecar.tools.builtin.files.paths import (
    WorkspacePath,
    is_inside,
    resolve_path,
    shown_path,
    workspace_root,
)
from acp_sidecar.tools.builtin.files.textfile import existing_file, sniff_file, stat_path
from acp_sidecar.tools.builtin.search.glob_patterns import GlobMatcher
from acp_sidecar.tools.builtin.search.grep_engine import (
    MATCH_TIMEOUT_S,
    MAX_LINE_BYTES,
    python_search,
)
from acp_sidecar.tools.builtin.search.grep_match import Candidate, SearchResult, compile_pattern
from acp_sidecar.tools.builtin.search.ripgrep import BatchFeed, RipgrepRejected, rg_search
from acp_sidecar.tools.builtin.search.walk import ThreadCancel, relative_to, walk_files
from acp_sidecar.tools.content import ToolOutput
from acp_sidecar.tools.context import tool_context
from acp_sidecar.tools.definition import define_tool
from acp_sidecar.tools.errors import ToolArgsError, ToolCancelledError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.presentation import (
    GenericCallView,
    GenericResultView,
    ToolResult,
    given_arguments,
)

DEFAULT_MAX_RESULTS = 100
MAX_MAX_RESULTS = 2000
MAX_LINE_CHARS = 500
"""Characters of a matching line shown."""


@attrs.frozen
class GrepArgs:
    """The parameters of ``grep``."""

    pattern: Annotated[
        str,
        "A regular expression in Python re syntax, matched against each line (e.g. "
        r"'def \w+\(', 'TODO|FIXME'). Escape regex characters to search for them literally. "
        r"POSIX classes such as [[:alpha:]] are refused: write [A-Za-z], \d, \s or \w.",
    ]
    path: Annotated[
        str | None,
        "A directory to search below, or a single file, relative to the workspace root "
        "(default: the whole workspace).",
    ] = None
    glob: Annotated[
        str | None,
        "Only search files matching this glob: without a '/' it matches file names at any "
        "depth ('*.py', '*.{ts,tsx}'); with one, paths relative to path ('src/**/*.rs').",
    ] = None
    case_insensitive: Annotated[bool, "Match regardless of case (default false)."] = False
    max_results: Annotated[
        int | None,
        f"The maximum number of matching lines to return (default {DEFAULT_MAX_RESULTS}, "
        f"at most {MAX_MAX_RESULTS}).",
    ] = None


def ripgrep() -> str | None:
    """The ripgrep executable on PATH, if any."""
    return shutil.which("rg")


def _candidates(
    root: str,
    base: WorkspacePath,
    matcher: GlobMatcher | None,
    boundary: str | None,
    cancelled: Callable[[], bool],
) -> Iterator[Candidate]:
    # Ignore rules are read from the workspace root down, unless the search is outside it.
    walk_root = root if is_inside(base.path, root) else base.path
    cut = len(relative_to(base.path, walk_root))
    cut += 1 if cut else 0
    for entry in walk_files(walk_root, base.path, boundary=boundary, cancelled=cancelled):
        below = entry.rel[cut:]
        if matcher is not None and not matcher.matches(below):
            continue
        shown = entry.rel if walk_root == root else shown_path(entry.path, root)
        yield Candidate(entry.path, shown, below, entry.inode)


def _candidates_of(
    root: str,
    base: WorkspacePath,
    info: os.stat_result,
    matcher: GlobMatcher | None,
    boundary: str | None,
    cancelled: Callable[[], bool],
) -> Iterable[Candidate]:
    if stat.S_ISDIR(info.st_mode):
        return _candidates(root, base, matcher, boundary, cancelled)
    return [Candidate(base.path, base.shown, os.path.basename(base.path))]


def _max_results(args: GrepArgs) -> int:
    value = DEFAULT_MAX_RESULTS if args.max_results is None else args.max_results
    if not 1 <= value <= MAX_MAX_RESULTS:
        raise ToolArgsError([f"/max_results: must be between 1 and {MAX_MAX_RESULTS}, got {value}"])
    return value


async def search(
    args: GrepArgs, execution: ToolExecution, *, engine: str | None = None
) -> tuple[SearchResult, WorkspacePath]:
    """Validate ``args`` and run the search; ``engine`` forces ``"rg"`` or ``"python"``."""
    try:
        pattern = compile_pattern(args.pattern, case_insensitive=args.case_insensitive)
    except Exception as exc:  # re.error, or RecursionError/OverflowError on huge patterns
        raise InvalidRegexError(f"Invalid regular expression {args.pattern!r}: {exc}.") from exc
    max_results = _max_results(args)
    matcher = None
    if args.glob is not None:
        try:
            matcher = GlobMatcher(args.glob, basename_without_slash=True)
        except ValueError as exc:
            raise ToolArgsError([f"/glob: {exc}"]) from exc
    ctx = tool_context(execution)
    base = resolve_path(ctx, args.path or ".")
    root = workspace_root(ctx)
    # The boundary is the root holding the base: the cwd, or an additional root.
    boundary = None if ctx.allow_outside_workspace else base.root_real
    info = await asyncio.to_thread(stat_path, base)
    cancelled = ThreadCancel(execution.signal)

    def finished(result: SearchResult) -> tuple[SearchResult, WorkspacePath]:
        if cancelled():
            found = _matches(result.count) if result.count else "no matching line"
            raise ToolCancelledError(
                f"grep was cancelled after searching {_files(result.searched)} ({found} by "
                "then): the search is incomplete and says nothing about the files it did not "
                "reach."
            )
        return result, base

    try:
        if stat.S_ISDIR(info.st_mode):
            directory = base.path
        else:
            await asyncio.to_thread(existing_file, base)
            if await asyncio.to_thread(sniff_file, base) is None:
                raise BinaryFileError(f"{base.shown} is a binary file; grep searches text files.")
            directory = os.path.dirname(base.path)
        rg = ripgrep() if engine != "python" else None
        if engine == "rg" and rg is None:
            raise RuntimeError("ripgrep is not on PATH")
        if rg is not None and (pattern.rg_ok or engine == "rg"):
            walk_stop = threading.Event()

            def stopped() -> bool:
                return cancelled() or walk_stop.is_set()

            feed = BatchFeed(
                _candidates_of(root, base, info, matcher, boundary, stopped), walk_stop
            )
            feed.start()
            try:
                result = await rg_search(
                    rg,
                    feed.batches(),
                    directory,
                    pattern.source,
                    max_results,
                    signal=execution.signal,
                )
            except RipgrepRejected:
                # ripgrep parses the pattern before reading a file: nothing was searched yet.
                if engine == "rg":
                    raise
                result = await asyncio.to_thread(
                    python_search, feed.replay(), pattern, max_results, cancelled=cancelled
                )
            finally:
                await feed.close()
            return finished(result)
        candidates = _candidates_of(root, base, info, matcher, boundary, cancelled)
        result = await asyncio.to_thread(
            python_search, candidates, pattern, max_results, cancelled=cancelled
        )
        return finished(result)
    finally:
        cancelled.close()


def render(result: SearchResult, args: GrepArgs, base: WorkspacePath) -> str:
    """The model-facing text of a search result."""
    if not result.files:
        where = "the workspace" if args.path is None else base.shown
        return f"No matches for {args.pattern!r} in {where}." + _notes(result)
    blocks: list[str] = []
    for found in result.files:
        lines = [found.shown]
        for match in found.lines:
            text = match.text
            if match.cut:
                text = (
                    f"{text[:MAX_LINE_CHARS]} … [line cut: longer than {MAX_LINE_BYTES:,} "
                    "bytes, only its start was searched]"
                )
            elif match.chars > MAX_LINE_CHARS:
                text = f"{text[:MAX_LINE_CHARS]} … [line cut: {match.chars:,} characters]"
            lines.append(f"{match.line}: {text}")
        blocks.append("\n".join(lines))
    count, files = result.count, len(result.files)
    if result.truncated:
        footer = (
            f"[Showing the first {count} matching lines (in {files} files); there are more. "
            "Narrow the search with path, glob or a more specific pattern, or raise "
            f"max_results (at most {MAX_MAX_RESULTS}).]"
        )
    else:
        footer = f"[{_matches(count)} in {files} file{'s' if files != 1 else ''}.]"
    return "\n\n".join(blocks) + "\n\n" + footer + _notes(result)


def _notes(result: SearchResult) -> str:
    """What was not searched, said after the results (empty when everything was)."""
    notes = ""
    if result.cut_lines:
        notes += (
            f"\n[{result.cut_lines:,} line{'s' if result.cut_lines != 1 else ''} longer than "
            f"{MAX_LINE_BYTES:,} bytes: only the first {MAX_LINE_BYTES:,} bytes of each were "
            "searched.]"
        )
    if result.slow_lines:
        notes += (
            f"\n[Not searched, the pattern took over {MATCH_TIMEOUT_S:g} s on each (it "
            f"backtracks catastrophically; simplify it): {', '.join(result.slow_lines)}.]"
        )
    return notes


def _matches(count: int) -> str:
    return f"{count} matching line{'s' if count != 1 else ''}"


def _files(count: int) -> str:
    return f"{count:,} file{'s' if count != 1 else ''}"


async def execute_grep(args: GrepArgs, execution: ToolExecution) -> ToolOutput:
    """Run one ``grep`` call."""
    result, base = await search(args, execution)
    return ToolOutput(
        render(result, args, base),
        meta={
            "matches": result.count,
            "files": len(result.files),
            "truncated": result.truncated,
            "engine": result.engine,
        },
    )


def _title(args: GrepArgs) -> str:
    title = f"Grep {args.pattern!r}"
    if args.path is not None:
        title += f" in {args.path}"
    if args.glob is not None:
        title += f" ({args.glob})"
    return title


def present_grep_call(args: GrepArgs) -> GenericCallView:
    """The pending card: generic, ``kind: "search"``."""
    return generic_call_view(_title(args), "search", given_arguments(args))


def present_grep_result(args: GrepArgs, result: ToolResult) -> GenericResultView | None:
    """The completed card: the title counts matching lines and files."""
    meta = result.meta
    if result.is_error or not isinstance(meta, dict):
        return None
    count, files = meta.get("matches"), meta.get("files")
    if type(count) is not int or type(files) is not int:
        return None
    more = "+" if meta.get("truncated") is True else ""
    summary = f"{_matches(count)}{more} in {files} file{'s' if files != 1 else ''}"
    return GenericResultView(title=f"{_title(args)}: {summary}")


grep_tool = define_tool(
    name="grep",
    description=(
        "Search file contents in the workspace with a regular expression (Python re syntax). "
        "Returns matching lines grouped by file, with 1-based line numbers, files in path "
        "order. Respects .gitignore; skips .git, binary files and symbolic links. Narrow it "
        "with path (a directory or a file) and glob ('*.py'). Each line is matched on its own: "
        "a pattern cannot span lines. Use it instead of running grep or rg through bash."
    ),
    parameters=GrepArgs,
    execute=execute_grep,
    present_call=present_grep_call,
    present_result=present_grep_result,
    read_only=True,
)
