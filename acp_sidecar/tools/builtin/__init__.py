"""The built-in tools: ``read``, ``write``, ``edit``, ``bash``, ``grep``, ``glob``, ``plan``.

Their names, parameters and error codes are a public contract. Tools build on the support
subpackages (:mod:`.files`, :mod:`.shell`, :mod:`.search`; ``search`` on ``files``), never back.
Every path goes through the workspace boundary; presenters rebuild cards from meta alone.
"""

from __future__ import annotations

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
    return [read_tool, write_tool, edit_tool, bash_tool, grep_tool, glob_tool, plan_tool]
