"""The built-in tools: ``read``, ``write``, ``edit``, ``bash``, ``grep``, ``glob``, ``plan``.

Their names, parameters and error codes are a public contract. Tools build on the support
subpackages (:mod:`.files`, :mod:`.shell`, :mod:`.search`; ``search`` on ``files``), never back.
Every path goes through the workspace boundary; presenters rebuild cards from meta alone.
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


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})  # the lazy names too, before they are loaded
