"""What a call knows about the session it runs in: the workspace, the editor's files, and the
session's permission system, declared here and implemented above (nothing here knows ACP).

Invariants: without a context, or one without ``permissions``, an ``Ask`` degrades to deny
(:func:`permissions_of` is the one place that decides it); a context's roots are resolved when
the session is set up and never again.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from acp_sidecar.tools.decisions import Ask, PermissionDecision, PreToolDecision
    from acp_sidecar.tools.json_values import FrozenJson


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


class PermissionCall(Protocol):
    """What a session's permissions see of a call (an execution has it; it is handed the same
    object for one call's ``judge``, ``ask`` and ``cleared``)."""

    @property
    def call_id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def arguments(self) -> FrozenJson: ...


class SessionPermissions(Protocol):
    """A session's permission system, as the pipeline reaches it.

    ``judge`` runs in a pre-execute listener, ``ask`` answers the registry's ``Ask``,
    ``cleared`` runs when dispatch starts (after every check).
    """

    def judge(
        self, call: PermissionCall, risky: bool, decision: PreToolDecision, *, open_world: bool
    ) -> PreToolDecision:
        """The session mode's verdict on a call the pre-execute listeners decided
        ``decision`` for; ``risky``: the tool is not declared read-only; ``open_world``: it
        declared that it reaches outside the machine."""
        ...

    async def ask(self, call: PermissionCall, ask: Ask) -> PermissionDecision:
        """The user's answer to an ``Ask``; raises ``ToolCancelledError`` if the turn is
        cancelled while the user is asked."""
        ...

    async def cleared(self, call: PermissionCall) -> None:
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


class InContext(Protocol):
    """A call that may carry a context (an execution)."""

    @property
    def context(self) -> ToolContext | None: ...


def tool_context(execution: InContext) -> ToolContext:
    """The execution's context, or a :class:`LocalContext` when it has none."""
    context = execution.context
    return LocalContext() if context is None else context


def permissions_of(context: ToolContext | None) -> SessionPermissions | None:
    """The context's permission system; ``None``: nobody to ask."""
    # A context written before contexts carried ``permissions`` lacks the attribute: it is
    # treated as no context (outside a session), not as a failing listener.
    return getattr(context, "permissions", None)
