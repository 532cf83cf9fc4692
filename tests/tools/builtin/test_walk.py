"""The tree walk behind grep and glob: .gitignore semantics, what is skipped, the order."""

from __future__ import annotations

import os

from acp_sidecar.tools.builtin.search.walk import walk_files

from .helpers import Workspace


def walked(workspace: Workspace, start: str | None = None) -> list[str]:
    begin = None if start is None else workspace.path(start)
    return [entry.rel for entry in walk_files(workspace.cwd, begin)]


def test_order_is_depth_first_by_name(workspace: Workspace) -> None:
    for rel in ("b.txt", "a.txt", "a/z.txt", "a/b/c.txt", "A.txt", ".hidden"):
        workspace.put(rel, "")
    assert walked(workspace) == [".hidden", "A.txt", "a/b/c.txt", "a/z.txt", "a.txt", "b.txt"]


def test_git_symlinks_are_skipped(workspace: Workspace) -> None:
    workspace.put(".git/config", "")
    workspace.put("sub/.git", "gitdir: elsewhere")  # a submodule's .git file
    workspace.put("real.txt", "")
    os.symlink("real.txt", workspace.path("link.txt"))
    os.symlink(workspace.path("sub"), workspace.path("linkdir"))
    assert walked(workspace) == ["real.txt"]


def test_gitignore_patterns_follow_git(workspace: Workspace) -> None:
    workspace.put(".gitignore", "*.log\n!keep.log\nbuild/\n/top.txt\n# comment\n")
    for rel in (
        "a.log",
        "keep.log",
        "deep/x.log",
        "build/out.o",
        "deep/build/out.o",
        "top.txt",
        "deep/top.txt",
        "build.txt",
    ):
        workspace.put(rel, "")
    assert walked(workspace) == [".gitignore", "build.txt", "deep/top.txt", "keep.log"]


def test_a_nested_gitignore_applies_below_it_and_overrides_its_parent(
    workspace: Workspace,
) -> None:
    workspace.put(".gitignore", "*.txt\n")
    workspace.put("sub/.gitignore", "!important.txt\n*.tmp\n")
    for rel in ("a.txt", "a.tmp", "sub/b.txt", "sub/important.txt", "sub/c.tmp", "sub/d.md"):
        workspace.put(rel, "")
    assert walked(workspace) == [
        ".gitignore",
        "a.tmp",
        "sub/.gitignore",
        "sub/d.md",
        "sub/important.txt",
    ]


def test_nothing_below_an_ignored_directory_comes_back(workspace: Workspace) -> None:
    workspace.put(".gitignore", "build/\n!build/keep.txt\n")
    workspace.put("build/keep.txt", "")
    assert walked(workspace) == [".gitignore"]


def test_a_walk_started_inside_an_ignored_directory_visits_it(workspace: Workspace) -> None:
    workspace.put(".gitignore", "build/\n*.o\n")
    workspace.put("build/gen.c", "")
    workspace.put("build/gen.o", "")
    assert walked(workspace, "build") == ["build/gen.c"]


def test_the_rules_above_the_start_apply(workspace: Workspace) -> None:
    workspace.put(".gitignore", "*.pyc\n")
    workspace.put("pkg/a.py", "")
    workspace.put("pkg/a.pyc", "")
    assert walked(workspace, "pkg") == ["pkg/a.py"]


def test_a_walk_can_be_cancelled(workspace: Workspace) -> None:
    workspace.put("a/x.txt", "")
    assert list(walk_files(workspace.cwd, cancelled=lambda: True)) == []
