"""The workspace boundary: every way out is refused with a clear error, unless allowed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_sidecar.tools import ToolArgsError, ToolRegistry
from acp_sidecar.tools.builtin.errors import OutsideWorkspaceError
from acp_sidecar.tools.builtin.files.paths import resolve_path
from tests.results import failure, text

from .helpers import Workspace, run, tree_bytes


@pytest.fixture
def outside(tmp_path: Path) -> str:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n")
    return str(secret)


def test_a_relative_path_resolves_against_the_workspace(workspace: Workspace) -> None:
    resolved = resolve_path(workspace, "src/../a.txt")
    assert resolved.path == workspace.path("a.txt")
    assert resolved.shown == "a.txt"
    assert resolved.root == workspace.cwd


def test_an_absolute_path_inside_is_shown_relative(workspace: Workspace) -> None:
    assert resolve_path(workspace, workspace.path("x", "y.txt")).shown == "x/y.txt"
    assert resolve_path(workspace, workspace.cwd).shown == "."


def test_a_symlink_inside_the_workspace_keeps_its_path_and_resolves_for_writing(
    workspace: Workspace,
) -> None:
    workspace.put("real.txt", "x")
    os.symlink("real.txt", workspace.path("link.txt"))
    resolved = resolve_path(workspace, "link.txt")
    assert resolved.path == workspace.path("link.txt")
    assert resolved.real == workspace.path("real.txt")


@pytest.mark.parametrize("raw", ["../secret.txt", "a/../../secret.txt"])
def test_dot_dot_escapes_are_refused(workspace: Workspace, raw: str) -> None:
    with pytest.raises(OutsideWorkspaceError) as caught:
        resolve_path(workspace, raw)
    assert str(caught.value) == (
        f"{raw} is outside the workspace ({workspace.cwd}). Only paths inside the workspace "
        "can be used; give a path relative to the workspace root."
    )


async def test_an_absolute_path_elsewhere_is_refused(
    workspace: Workspace, registry: ToolRegistry, outside: str
) -> None:
    result = await run(registry, workspace, "read", {"path": outside})
    assert failure(result) == (
        "OUTSIDE_WORKSPACE",
        f"{outside} is outside the workspace ({workspace.cwd}). Only paths inside the "
        "workspace can be used; give a path relative to the workspace root.",
    )


async def test_a_symlink_out_of_the_workspace_is_refused_without_naming_its_target(
    workspace: Workspace, registry: ToolRegistry, outside: str
) -> None:
    """Issue 25 §6: the refusal named the resolved target outside the workspace, telling the
    model where a link points that it may not follow."""
    os.symlink(outside, workspace.path("link.txt"))
    result = await run(registry, workspace, "read", {"path": "link.txt"})
    assert failure(result) == (
        "OUTSIDE_WORKSPACE",
        "link.txt resolves through a symbolic link to a place outside the workspace "
        f"({workspace.cwd}). Only paths inside the workspace can be used.",
    )


async def test_a_search_started_through_a_symlink_out_does_not_name_its_target(
    workspace: Workspace, registry: ToolRegistry, outside: str
) -> None:
    os.makedirs(os.path.join(os.path.dirname(outside), "sub"), exist_ok=True)
    os.symlink(os.path.dirname(outside), workspace.path("linkdir"))
    result = await run(registry, workspace, "glob", {"pattern": "linkdir/sub/*"})
    assert failure(result) == (
        "OUTSIDE_WORKSPACE",
        "linkdir/sub resolves through a symbolic link to a place outside the workspace "
        f"({workspace.cwd}). Only paths inside the workspace can be used.",
    )


async def test_a_file_below_a_symlinked_directory_out_is_refused_for_writing(
    workspace: Workspace, registry: ToolRegistry, outside: str
) -> None:
    os.symlink(os.path.dirname(outside), workspace.path("out"))
    before = tree_bytes(os.path.dirname(outside))
    result = await run(registry, workspace, "write", {"path": "out/new.txt", "content": "x"})
    assert failure(result)[0] == "OUTSIDE_WORKSPACE"
    assert tree_bytes(os.path.dirname(outside)) == before


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("read", {"path": "../secret.txt"}),
        ("write", {"path": "../secret.txt", "content": "overwritten"}),
        ("edit", {"path": "../secret.txt", "old_string": "top", "new_string": "no"}),
        ("bash", {"command": "pwd", "cwd": ".."}),
        ("grep", {"pattern": "secret", "path": ".."}),
        ("glob", {"pattern": "*", "path": ".."}),
    ],
)
async def test_every_tool_refuses_to_leave_the_workspace(
    workspace: Workspace, registry: ToolRegistry, outside: str, tool: str, arguments: dict[str, str]
) -> None:
    result = await run(registry, workspace, tool, arguments)
    code, message = failure(result)
    assert code == "OUTSIDE_WORKSPACE"
    assert "is outside the workspace" in message
    with open(outside) as f:
        assert f.read() == "top secret\n"


async def test_allow_outside_workspace_lets_paths_out(
    workspace: Workspace, registry: ToolRegistry, outside: str
) -> None:
    workspace.allow_outside_workspace = True
    result = await run(registry, workspace, "read", {"path": "../secret.txt"})
    assert not result.is_error
    assert text(result) == "     1\ttop secret"


@pytest.mark.parametrize(
    ("raw", "message"),
    [("", "/path: must not be empty"), ("a\0b", "/path: must not contain NUL characters")],
)
def test_an_empty_or_nul_path_is_an_argument_error(
    workspace: Workspace, raw: str, message: str
) -> None:
    with pytest.raises(ToolArgsError) as caught:
        resolve_path(workspace, raw)
    assert caught.value.violations == (message,)


@pytest.fixture
def extra_root(tmp_path: Path, workspace: Workspace) -> str:
    """A second workspace root (``additionalDirectories``) beside the cwd, with a file."""
    root = tmp_path / "lib"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("VALUE = 1\n")
    workspace.additional_roots = (str(root),)
    return str(root)


def test_a_path_in_an_additional_root_resolves_to_that_root(
    workspace: Workspace, extra_root: str
) -> None:
    resolved = resolve_path(workspace, os.path.join(extra_root, "pkg", "mod.py"))
    assert resolved.root == extra_root
    assert resolved.shown == os.path.join(extra_root, "pkg", "mod.py")  # absolute: not the cwd's
    assert resolve_path(workspace, "a.txt").root == workspace.cwd


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("read", {"path": "{root}/pkg/mod.py"}, "VALUE = 1"),
        ("write", {"path": "{root}/pkg/new.py", "content": "NEW = 2\n"}, "new.py"),
        ("glob", {"pattern": "**/*.py", "path": "{root}"}, "mod.py"),
        ("grep", {"pattern": "VALUE", "path": "{root}"}, "mod.py"),
        ("bash", {"command": "ls", "cwd": "{root}/pkg"}, "mod.py"),
    ],
)
async def test_every_tool_works_in_an_additional_root(
    workspace: Workspace,
    registry: ToolRegistry,
    extra_root: str,
    tool: str,
    arguments: dict[str, str],
    expected: str,
) -> None:
    filled = {key: value.replace("{root}", extra_root) for key, value in arguments.items()}
    result = await run(registry, workspace, tool, filled)
    assert not result.is_error, text(result)
    assert expected in text(result)


async def test_an_additional_root_does_not_open_anything_else(
    workspace: Workspace, registry: ToolRegistry, extra_root: str, outside: str
) -> None:
    os.symlink(outside, os.path.join(extra_root, "link.txt"))
    via_link = await run(registry, workspace, "read", {"path": f"{extra_root}/link.txt"})
    assert failure(via_link)[0] == "OUTSIDE_WORKSPACE"
    beside = await run(registry, workspace, "read", {"path": outside})
    assert failure(beside)[0] == "OUTSIDE_WORKSPACE"
    workspace.additional_roots = ()  # without the root, its files are outside again
    result = await run(registry, workspace, "read", {"path": f"{extra_root}/pkg/mod.py"})
    assert failure(result)[0] == "OUTSIDE_WORKSPACE"
