"""``glob``: find files by path pattern, newest first (at most :data:`MAX_FILES`).

The walk starts at the pattern's literal leading directories, which get the boundary check.
A cancelled walk is an error, never a partial listing.
"""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

import attrs

from acp_sidecar.tools.builtin.files.paths import (
    WorkspacePath,
    is_inside,
    resolve_path,
    shown_path,
    workspace_root,
)
from acp_sidecar.tools.builtin.files.textfile import require_directory
from acp_sidecar.tools.builtin.search.glob_patterns import GlobMatcher, literal_prefix
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

MAX_FILES = 500
"""Paths listed per call."""


@attrs.frozen
class GlobArgs:
    """The parameters of ``glob``."""

    pattern: Annotated[
        str,
        "A glob matched against file paths relative to path: * and ? match within one "
        "directory level, ** any number of directories, [abc] one character, {a,b} either. "
        "Examples: '**/*.py' (any depth), '*.md' (top level only), 'src/**/*.{ts,tsx}'.",
    ]
    path: Annotated[
        str | None,
        "The directory to search in, relative to the workspace root (default: the root).",
    ] = None


def _check_pattern(pattern: str) -> str:
    if not pattern:
        raise ToolArgsError(["/pattern: must not be empty"])
    if pattern.startswith("/") or os.path.isabs(pattern):
        raise ToolArgsError(["/pattern: must be relative; give the directory to search in as path"])
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if ".." in pattern.split("/"):
        raise ToolArgsError(
            ["/pattern: must not contain '..'; give the directory to search in as path"]
        )
    return pattern


def _find(
    root: str, base: WorkspacePath, pattern: str, boundary: str | None, cancelled: ThreadCancel
) -> list[tuple[float, str]]:
    """The matching files, newest first; ``ToolCancelledError`` when the walk was cut short."""
    matcher = GlobMatcher(pattern)
    start = os.path.join(base.path, literal_prefix(pattern))
    if not os.path.isdir(start) or os.path.islink(start):
        return []
    walk_root = root if is_inside(base.path, root) else base.path
    cut = len(relative_to(base.path, walk_root))
    cut += 1 if cut else 0
    found: list[tuple[float, str]] = []
    listed = 0
    walk = walk_files(walk_root, os.path.normpath(start), boundary=boundary, cancelled=cancelled)
    for entry in walk:
        listed += 1
        if not matcher.matches(entry.rel[cut:]):
            continue
        try:
            modified = os.stat(entry.path, follow_symlinks=False).st_mtime
        except OSError:
            continue
        found.append((modified, entry.rel if walk_root == root else shown_path(entry.path, root)))
    if cancelled():
        matched = f"{len(found):,} matched" if found else "none matched"
        raise ToolCancelledError(
            f"glob was cancelled after listing {listed:,} file{'s' if listed != 1 else ''} "
            f"({matched} by then): the listing is incomplete and says nothing about the files "
            "it did not reach."
        )
    found.sort(key=lambda item: (-item[0], item[1]))
    return found


async def execute_glob(args: GlobArgs, execution: ToolExecution) -> ToolOutput:
    """Run one ``glob`` call."""
    pattern = _check_pattern(args.pattern)
    try:
        GlobMatcher(pattern)
    except ValueError as exc:
        raise ToolArgsError([f"/pattern: {exc}"]) from exc
    ctx = tool_context(execution)
    base = resolve_path(ctx, args.path or ".")
    await asyncio.to_thread(require_directory, base)
    root = workspace_root(ctx)
    # The boundary is the root holding the base: the cwd, or an additional root.
    boundary = None if ctx.allow_outside_workspace else base.root_real
    cancelled = ThreadCancel(execution.signal)
    try:
        found = await asyncio.to_thread(_find, root, base, pattern, boundary, cancelled)
    finally:
        cancelled.close()
    where = "the workspace" if args.path is None else base.shown
    if not found:
        text = f"No files match {args.pattern!r} in {where}."
    else:
        text = "\n".join(path for _modified, path in found[:MAX_FILES])
        if len(found) > MAX_FILES:
            text += (
                f"\n\n[Showing the {MAX_FILES} most recently modified of {len(found):,} "
                "matching files. Narrow the pattern or path to see the others.]"
            )
    return ToolOutput(
        text,
        meta={"matches": len(found), "shown": min(len(found), MAX_FILES)},
    )


def _title(args: GlobArgs) -> str:
    return f"Glob {args.pattern}" + (f" in {args.path}" if args.path is not None else "")


def present_glob_call(args: GlobArgs) -> GenericCallView:
    """The pending card: generic, ``kind: "search"``."""
    return GenericCallView(
        title=_title(args),
        kind="search",
        raw_input=given_arguments(args),
    )


def present_glob_result(args: GlobArgs, result: ToolResult) -> GenericResultView | None:
    """The completed card: the title counts the files found."""
    meta = result.meta
    if result.is_error or not isinstance(meta, dict) or type(meta.get("matches")) is not int:
        return None
    count = meta["matches"]
    return GenericResultView(title=f"{_title(args)}: {count} file{'s' if count != 1 else ''}")


glob_tool = define_tool(
    name="glob",
    description=(
        "Find files by path pattern in the workspace, most recently modified first. '**/*.py' "
        "matches at any depth, '*.py' only at the top of path; {a,b} alternatives work. "
        "Returns paths relative to the workspace root, at most "
        f"{MAX_FILES}. Respects .gitignore; skips .git and symbolic links. Use grep to search "
        "file contents."
    ),
    parameters=GlobArgs,
    execute=execute_glob,
    present_call=present_glob_call,
    present_result=present_glob_result,
    read_only=True,
)
