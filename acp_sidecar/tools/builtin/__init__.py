"""The built-in tools: ``read``, ``write``, ``edit``, ``bash``, ``grep``, ``glob``, ``plan``.

Each is an ordinary :func:`~acp_sidecar.tools.define_tool` definition with attrs-class
parameters, registered by default. Their names and parameters are a public contract.

Layout: one module per tool (``read.py`` … ``glob.py``, ``plan.py``) and :mod:`.errors`, the
errors they end in; what the tools share lives in three subpackages, by concern: :mod:`.files` (the
workspace boundary, text files on disk and through the editor, diffs), :mod:`.shell`
(running a command and reaping what it started, for ``bash``) and :mod:`.search` (the walk,
glob patterns and the two grep engines, for ``grep`` and ``glob``). Dependencies point from
the tools to the subpackages, and from :mod:`.search` to :mod:`.files`, never back.

Invariants shared by all of them:
- Every path goes through the workspace boundary (:mod:`.files.paths`); nothing outside the
  session cwd is touched unless the session allows it.
- Every expected failure is a :class:`~acp_sidecar.tools.ToolError` with a stable code
  (:mod:`.errors`, plus ``INVALID_ARGS`` for out-of-range arguments).
- Presenters are pure: the result cards are rebuilt from ``(args, result.meta)`` alone, and
  meta stays bounded (at most 256 KiB of stored text per call).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from acp_sidecar.tools.builtin.bash import bash_tool
    from acp_sidecar.tools.builtin.edit import edit_tool
    from acp_sidecar.tools.builtin.errors import (
        AmbiguousMatchError,
        BinaryFileError,
        EditorFileError,
        FileIOError,
        FileTooLargeError,
        InvalidRegexError,
        IsDirectoryError,
        NoChangeError,
        NoMatchError,
        NotDirectoryError,
        OutsideWorkspaceError,
        PathNotFoundError,
        PermissionDeniedError,
        SpawnError,
    )
    from acp_sidecar.tools.builtin.glob import glob_tool
    from acp_sidecar.tools.builtin.grep import grep_tool
    from acp_sidecar.tools.builtin.plan import plan_tool
    from acp_sidecar.tools.builtin.read import read_tool
    from acp_sidecar.tools.builtin.write import write_tool
    from acp_sidecar.tools.definition import ToolDefinition

# Loaded on first use: the serving sidecar imports ``.shell.reaper`` at start, and that must
# not load every tool (regex, pathspec, difflib) before the first ``session/new``.
_TOOLS = ("read", "write", "edit", "bash", "grep", "glob", "plan")
_WHERE = {f"{name}_tool": name for name in _TOOLS}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        module = importlib.import_module(f"{__name__}.{_WHERE[name]}")
    elif name.endswith("Error") and name in __all__:
        module = importlib.import_module(f"{__name__}.errors")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


__all__ = [
    "AmbiguousMatchError",
    "BinaryFileError",
    "EditorFileError",
    "FileIOError",
    "FileTooLargeError",
    "InvalidRegexError",
    "IsDirectoryError",
    "NoChangeError",
    "NoMatchError",
    "NotDirectoryError",
    "OutsideWorkspaceError",
    "PathNotFoundError",
    "PermissionDeniedError",
    "SpawnError",
    "bash_tool",
    "builtin_tools",
    "edit_tool",
    "glob_tool",
    "grep_tool",
    "plan_tool",
    "read_tool",
    "write_tool",
]


def builtin_tools() -> list[ToolDefinition]:
    """The built-in tools, in the order they are registered (a new list each call)."""
    return [__getattr__(f"{name}_tool") for name in _TOOLS]
