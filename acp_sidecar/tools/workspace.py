"""The workspace boundary for tools of one's own: the built-ins' own check, not a copy. It is the
only thing between a path the model wrote and the rest of the disk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp_sidecar.tools.context import tool_context

if TYPE_CHECKING:
    from acp_sidecar.tools.builtin.files.paths import WorkspacePath
    from acp_sidecar.tools.execution import ToolExecution


def workspace_path(execution: ToolExecution, path: str, *, param: str = "path") -> WorkspacePath:
    """``path`` (as the model gave it, relative to the session's working directory or
    absolute) resolved and checked against the call's workspace.

    The result's ``real`` is the file to open (symlinks resolved), ``path`` the absolute
    path to show the editor, ``shown`` the path relative to the workspace, for messages. The
    check is made now: a tool that opens the file later reaches what ``real`` names then.

    Raises:
        ToolArgsError: ``path`` is empty or holds a NUL (the error names ``/param``).
        ToolError: the path, or the symlink it goes through, leads outside the workspace
            (code ``OUTSIDE_WORKSPACE``), or changed while it was resolved
            (``PATH_CHANGED``). Raised from ``execute``, either fails the call with its
            message, which the model reads.
    """
    # Imported here: the built-in tools' package loads them all, which a plain
    # ``import acp_sidecar.tools`` should not pay for.
    from acp_sidecar.tools.builtin.files.paths import resolve_path

    return resolve_path(tool_context(execution), path, param=param)
