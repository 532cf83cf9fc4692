"""A session-less harness for the built-in tools: a workspace context and a runner (the fake
editor files and progress sink they use are in :mod:`tests.fakes`)."""

from __future__ import annotations

import os
from typing import Any

import attrs

from acp_sidecar.tools import (
    CancelSignal,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolRegistry,
)
from acp_sidecar.tools.builtin import builtin_tools
from acp_sidecar.tools.context import EditorFiles, WorkspaceRoot, fixed_roots
from tests.fakes import RecordingSink


@attrs.define
class Workspace:
    """What a session gives a tool (satisfies ``ToolContext``)."""

    cwd: str
    allow_outside_workspace: bool = False
    additional_roots: tuple[str, ...] = ()
    files: EditorFiles | None = None
    permissions: None = None  # no one to ask: a tool test has no session

    @property
    def roots(self) -> tuple[WorkspaceRoot, ...]:
        # Resolved when asked, so a test can change them; a session fixes them once.
        return fixed_roots(self.cwd, self.additional_roots)

    def path(self, *parts: str) -> str:
        return os.path.join(self.cwd, *parts)

    def put(self, rel: str, data: str | bytes) -> str:
        """Create a file (and its parents); returns its absolute path."""
        full = self.path(rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        return full

    def get(self, rel: str) -> bytes:
        with open(self.path(rel), "rb") as f:
            return f.read()


def builtin_registry() -> ToolRegistry:
    registry = ToolRegistry()
    for tool in builtin_tools():
        registry.register(tool)
    return registry


async def run(
    registry: ToolRegistry,
    workspace: Workspace,
    name: str,
    arguments: dict[str, Any],
    *,
    signal: CancelSignal | None = None,
    progress: RecordingSink | None = None,
) -> ToolExecutionResult:
    return await registry.execute(
        ToolExecutionInput(
            call_id="c1",
            name=name,
            arguments=arguments,
            context=workspace,
            signal=signal,
            progress=progress,
        )
    )


def tree_bytes(root: str) -> dict[str, bytes]:
    """Every file under ``root`` with its content (to assert nothing else changed)."""
    found: dict[str, bytes] = {}
    for directory, _dirs, names in os.walk(root):
        for name in names:
            full = os.path.join(directory, name)
            with open(full, "rb") as f:
                found[os.path.relpath(full, root)] = f.read()
    return found


def deny_access(monkeypatch: Any, path: str, *, write: bool = False) -> None:
    """Make ``path`` unreadable (or, with ``write``, its directory unwritable).

    chmod does not stop root, so as root the refusal is injected where the OS would give it:
    ``os.open`` raising ``PermissionError``. Undo with ``monkeypatch.undo()`` and a chmod.
    """
    if os.geteuid() != 0:
        os.chmod(os.path.dirname(path) if write else path, 0o500 if write else 0)
        return
    real_open = os.open
    target = os.path.realpath(path)

    def guarded_open(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        name = os.fspath(file)
        dir_fd = kwargs.get("dir_fd")
        if dir_fd is not None:  # the file tools open relative to a directory descriptor
            name = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), name)
        name = os.path.realpath(name)
        if write:
            if os.path.dirname(name) == os.path.dirname(target) and flags & os.O_CREAT:
                raise PermissionError(13, "Permission denied", name)
        elif name == target:
            raise PermissionError(13, "Permission denied", name)
        return real_open(file, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", guarded_open)
