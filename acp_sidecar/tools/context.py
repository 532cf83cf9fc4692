"""What a call knows about the session it runs in: the workspace, the editor's files, and the
session's permission system.

The caller of ``ToolRegistry.execute`` (the bridge, for a session's calls) puts an object
satisfying :class:`ToolContext` on the input's ``context``; the execution carries it, read-only,
to every listener, guard and tool. Tools read it with :func:`tool_context`; with no context (a
bare registry, a test), tools fall back to the process's working directory and the local file
system, and nobody can be asked for permission.

Invariants:
- Nothing here knows ACP. ``EditorFiles`` is the neutral face of the editor's
  ``fs/read_text_file`` / ``fs/write_text_file`` (present only when the client advertised
  them); ``SessionPermissions`` is the neutral face of a session's mode and its permission
  dialog. Both are declared here, in the lowest layer, and implemented above it: this is the
  one way the pipeline reaches back up.
- The registry asks ``context.permissions`` about an ``Ask``; without it (no context, or a
  context without permissions) ``Ask`` degrades to deny, the spec's rule.
- A context's :attr:`ToolContext.roots` are resolved when the session is set up and never
  again: a root replaced by a symbolic link afterwards does not move the boundary.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from acp_sidecar.tools.decisions import Ask, PermissionDecision, PreToolDecision
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


class SessionPermissions(Protocol):
    """A session's permission system, as the pipeline reaches it.

    ``judge`` runs in a pre-execute listener, ``ask`` answers the registry's ``Ask``,
    ``cleared`` runs when dispatch starts (after every check).
    """

    def judge(
        self, name: str, risky: bool, decision: PreToolDecision, *, open_world: bool = False
    ) -> PreToolDecision:
        """The session mode's verdict on a call the pre-execute listeners decided
        ``decision`` for; ``risky``: the tool is not declared read-only; ``open_world``: it
        declared that it reaches outside the machine."""
        ...

    async def ask(self, execution: ToolExecution, ask: Ask) -> PermissionDecision:
        """The user's answer to an ``Ask``; raises ``ToolCancelledError`` if the turn is
        cancelled while the user is asked."""
        ...

    async def cleared(self, execution: ToolExecution) -> None:
        """The call passed every check and its dispatch starts (a session shows it running)."""
        ...


@attrs.frozen
class WorkspaceRoot:
    """A directory the session's tools may use, fixed when the session was set up."""

    path: str
    """Absolute and normalised, as named (what messages show)."""
    real: str
    """Where it really was then (symlinks resolved): the boundary, never resolved again."""

    @classmethod
    def fixed(cls, path: str) -> WorkspaceRoot:
        """``path`` with its real location resolved now."""
        normal = os.path.normpath(os.path.abspath(path))
        return cls(normal, os.path.realpath(normal))


def fixed_roots(cwd: str, additional: tuple[str, ...] = ()) -> tuple[WorkspaceRoot, ...]:
    """The roots of a session working in ``cwd`` with the extra roots ``additional``, resolved
    now (``cwd``'s first)."""
    return tuple(WorkspaceRoot.fixed(path) for path in (cwd, *additional))


@runtime_checkable
class ToolContext(Protocol):
    """The session facts a call may use."""

    @property
    def cwd(self) -> str:
        """The session's absolute working directory (the workspace root)."""
        ...

    @property
    def allow_outside_workspace(self) -> bool:
        """Paths outside ``cwd`` are allowed (``--allow-outside-workspace``)."""
        ...

    @property
    def roots(self) -> tuple[WorkspaceRoot, ...]:
        """The workspace roots: ``cwd``'s first, then the extra ones of a multi-root
        workspace, admitted alike; each resolved when the session was set up."""
        ...

    @property
    def files(self) -> EditorFiles | None:
        """The editor's files, when the client offers them."""
        ...

    @property
    def permissions(self) -> SessionPermissions | None:
        """The session's permission system; ``None``: no one to ask (``Ask`` is denied)."""
        ...


class LocalContext:
    """The context of a call made outside any session: the process's cwd, local files."""

    def __init__(self, cwd: str | None = None, *, allow_outside_workspace: bool = False) -> None:
        self._cwd = os.path.abspath(cwd or os.getcwd())
        self._allow_outside = allow_outside_workspace
        self._roots = fixed_roots(self._cwd)

    @property
    def cwd(self) -> str:
        return self._cwd

    @property
    def allow_outside_workspace(self) -> bool:
        return self._allow_outside

    @property
    def roots(self) -> tuple[WorkspaceRoot, ...]:
        return self._roots

    @property
    def files(self) -> EditorFiles | None:
        return None

    @property
    def permissions(self) -> SessionPermissions | None:
        return None


def tool_context(execution: ToolExecution) -> ToolContext:
    """The execution's context, or a :class:`LocalContext` when it has none."""
    context = execution.context
    return LocalContext() if context is None else context
