"""A directory swapped for a symlink after the boundary check never leads the file tools out.

Over the wire: a sidecar subprocess in auto mode writes, edits and reads ``d/f.txt`` while a
thread keeps swapping the workspace directory ``d`` with a symlink to an outside directory.
Every call may fail; none may overwrite, create or return anything outside. And
deterministically: the swap is made between the check and the I/O by wrapping the tool's
``resolve_path``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from acp_sidecar.tools import ToolRegistry
from acp_sidecar.tools.builtin import edit, read, write
from acp_sidecar.tools.builtin.files.paths import WorkspacePath
from tests.results import failure

from .helpers import Workspace, run
from .sidecar import auto_sidecar, call, command

OUTSIDE_TEXT = "inside: the outside file\n"
"""The outside file's content; it contains the edit's old_string, so an escaped edit shows."""


def _swapper(directory: Path, outside: Path, stop: threading.Event) -> None:
    """Swap ``directory`` with a symlink to ``outside`` and back until ``stop`` is set."""
    parked = directory.with_name(directory.name + ".parked")
    while not stop.is_set():
        try:
            os.rename(directory, parked)
        except OSError:
            time.sleep(0.0005)
            continue
        with contextlib.suppress(FileExistsError):  # a write made it in the gap: removed below
            os.symlink(outside, directory)
        time.sleep(0.001)
        while True:  # a write may make the directory again at any moment: retry until back
            if directory.is_symlink():
                directory.unlink()
            elif directory.exists():
                shutil.rmtree(directory, ignore_errors=True)
            try:
                os.rename(parked, directory)
                break
            except OSError:
                continue
        time.sleep(0.001)


@contextmanager
def swapping(directory: Path, outside: Path) -> Iterator[None]:
    stop = threading.Event()
    thread = threading.Thread(target=_swapper, args=(directory, outside, stop), daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(10)


@pytest.mark.process
async def test_a_swap_race_never_escapes_the_workspace(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    (workspace / "d").mkdir(parents=True)
    outside.mkdir()
    (outside / "f.txt").write_text(OUTSIDE_TEXT)
    (workspace / "d" / "f.txt").write_text("inside: start\n")
    leaked: list[str] = []
    outcomes: dict[str, int] = {}
    async with auto_sidecar(workspace) as sidecar:
        with swapping(workspace / "d", outside):
            for round_ in range(80):
                for text in (
                    command("write", path="d/f.txt", content=f"inside: round {round_}\n"),
                    command("edit", path="d/f.txt", old_string="inside", new_string="edited"),
                    "/read d/f.txt",
                ):
                    status, result = await call(sidecar, text)
                    outcomes[status] = outcomes.get(status, 0) + 1
                    if "the outside file" in result:
                        leaked.append(result)
    assert leaked == []
    assert sorted(os.listdir(outside)) == ["f.txt"], "a temporary file was left outside"
    assert (outside / "f.txt").read_text() == OUTSIDE_TEXT, "the outside file was replaced"
    assert outcomes.get("completed", 0) > 0, outcomes  # the race did not just fail everything


def _swap_after_resolving(
    monkeypatch: pytest.MonkeyPatch, module: Any, directory: str, outside: str
) -> None:
    """Make ``module.resolve_path`` swap ``directory`` for a link to ``outside`` once it has
    checked the path: the race, made to happen every time."""
    real_resolve = module.resolve_path

    def resolve_then_swap(*args: Any, **kwargs: Any) -> WorkspacePath:
        target = real_resolve(*args, **kwargs)
        os.rename(directory, directory + ".parked")
        os.symlink(outside, directory)
        return target

    monkeypatch.setattr(module, "resolve_path", resolve_then_swap)


@pytest.mark.parametrize(
    ("tool", "module", "args"),
    [
        ("read", read, {"path": "d/f.txt"}),
        ("write", write, {"path": "d/f.txt", "content": "new\n"}),
        ("edit", edit, {"path": "d/f.txt", "old_string": "inside", "new_string": "edited"}),
        ("write", write, {"path": "d/new/g.txt", "content": "new\n"}),
    ],
)
async def test_a_directory_swapped_after_the_check_fails_the_call(
    workspace: Workspace,
    registry: ToolRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    module: Any,
    args: dict[str, Any],
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text(OUTSIDE_TEXT)
    workspace.put("d/f.txt", "inside: the workspace file\n")
    _swap_after_resolving(monkeypatch, module, workspace.path("d"), str(outside))
    result = await run(registry, workspace, tool, args)
    code, message = failure(result)
    assert code == "PATH_CHANGED"
    assert "changed while the call ran" in message and "Nothing was read or written" in message
    assert sorted(os.listdir(outside)) == ["f.txt"]
    assert (outside / "f.txt").read_text() == OUTSIDE_TEXT


async def test_a_link_that_stops_being_one_while_resolved_fails_the_call(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The swap race once hit realpath between its lstat (a link) and its readlink (a
    # directory again): EINVAL escaped as EXECUTION_FAILED.
    workspace.put("real/f.txt", "inside\n")
    os.symlink(workspace.path("real"), workspace.path("d"))

    def readlink_of_a_swapped_back_link(*_args: Any, **_kwargs: Any) -> str:
        raise OSError(errno.EINVAL, "Invalid argument", workspace.path("d"))

    monkeypatch.setattr(os, "readlink", readlink_of_a_swapped_back_link)
    result = await run(registry, workspace, "write", {"path": "d/f.txt", "content": "new\n"})
    code, message = failure(result)
    assert code == "PATH_CHANGED"
    assert "changed while it was being resolved" in message
    assert workspace.get("real/f.txt") == b"inside\n"
