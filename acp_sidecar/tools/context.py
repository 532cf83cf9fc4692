"""What a tool may know about where it runs: the workspace root and the editor's files.

The agent loop passes an object satisfying :class:`ToolContext` as the execution's ``agent``
(the bridge's per-session call scope does). Tools read it with :func:`tool_context`; with no
context (a bare registry, a test), tools fall back to the process's working directory and
the local file system.

Invariant: nothing here knows ACP; ``EditorFiles`` is the neutral face of the editor's
``fs/read_text_file`` / ``fs/write_text_file`` (present only when the client advertised them).
"""

from __future__ import annotations

import os
from typing import Protocol, runtime_checkable

from acp_sidecar.tools.execution import ToolExecution


class EditorFiles(Protocol):
    """The editor's view of files (its unsaved buffers included)."""

    @property
    def can_read(self) -> bool:
        """The editor serves reads."""
        ...

    @property
    def can_write(self) -> bool:
        """The editor serves writes."""
        ...

    async def read_text_file(
        self, path: str, *, line: int | None = None, limit: int | None = None
    ) -> str:
        """The text of an absolute ``path`` as the editor has it."""
        ...

    async def write_text_file(self, path: str, content: str) -> None:
        """Write ``content`` to an absolute ``path`` through the editor."""
        ...


@runtime_checkable
class ToolContext(Protocol):
    """The session facts a tool may use."""

    @property
    def cwd(self) -> str:
        """The session's absolute working directory (the workspace root)."""
        ...

    @property
    def allow_outside_workspace(self) -> bool:
        """Paths outside ``cwd`` are allowed (``--allow-outside-workspace``)."""
        ...

    @property
    def files(self) -> EditorFiles | None:
        """The editor's files, when the client offers them."""
        ...


class LocalContext:
    """The context of a call made outside any session: the process's cwd, local files."""

    def __init__(self, cwd: str | None = None, *, allow_outside_workspace: bool = False) -> None:
        self._cwd = os.path.abspath(cwd or os.getcwd())
        self._allow_outside = allow_outside_workspace

    @property
    def cwd(self) -> str:
        return self._cwd

    @property
    def allow_outside_workspace(self) -> bool:
        return self._allow_outside

    @property
    def files(self) -> EditorFiles | None:
        return None


def tool_context(execution: ToolExecution) -> ToolContext:
    """The execution's context, or a :class:`LocalContext` when it has none."""
    agent = execution.agent
    if isinstance(agent, ToolContext):
        return agent
    return LocalContext()
