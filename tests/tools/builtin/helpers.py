"""A session-less harness for the built-in tools: a workspace context, a fake editor, a runner."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from acp_sidecar.tools import (
    CancelSignal,
    TextContent,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolRegistry,
    ToolResult,
)
from acp_sidecar.tools.builtin import builtin_tools
from acp_sidecar.tools.context import EditorFiles


@attrs.define
class Workspace:
    """What a session gives a tool (satisfies ``ToolContext``)."""

    cwd: str
    allow_outside_workspace: bool = False
    files: EditorFiles | None = None
    permissions: None = None  # no one to ask: a tool test has no session

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


class FakeEditor:
    """The editor's files: ``buffers`` hold unsaved text; other paths read from disk."""

    def __init__(
        self,
        buffers: dict[str, str] | None = None,
        *,
        can_read: bool = True,
        can_write: bool = True,
    ) -> None:
        self.buffers = dict(buffers or {})
        self._can_read = can_read
        self._can_write = can_write
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.fail: Exception | None = None

    @property
    def can_read(self) -> bool:
        return self._can_read

    @property
    def can_write(self) -> bool:
        return self._can_write

    async def read_text_file(
        self, path: str, *, line: int | None = None, limit: int | None = None
    ) -> str:
        self.reads.append(path)
        if self.fail is not None:
            raise self.fail
        if path in self.buffers:
            return self.buffers[path]
        with open(path, encoding="utf-8") as f:
            return f.read()

    async def write_text_file(self, path: str, content: str) -> None:
        if self.fail is not None:
            raise self.fail
        self.writes.append((path, content))
        self.buffers[path] = content


class RecordingSink:
    """A progress sink that keeps what a call streamed."""

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.texts: list[str] = []

    async def text(self, text: str) -> None:
        self.texts.append(text)

    async def output(self, data: str) -> None:
        self.chunks.append(data)

    @property
    def streamed(self) -> str:
        return "".join(self.chunks)


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


def meta(result: ToolExecutionResult) -> Mapping[str, Any]:
    """The result's meta object (asserting it is one)."""
    assert isinstance(result.meta, dict), result.meta
    return result.meta


def text(result: ToolExecutionResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, TextContent))


def failure(result: ToolExecutionResult) -> tuple[str, str]:
    """``(code, message)`` of an error result."""
    assert result.is_error, text(result)
    assert result.error is not None
    return result.error.code, text(result)


def outcome(result: ToolExecutionResult) -> ToolResult:
    """What ``present_result`` receives for ``result``."""
    return ToolResult(content=result.content, is_error=result.is_error, meta=result.meta)


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
