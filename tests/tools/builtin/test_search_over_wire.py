"""``grep`` and ``glob`` walks, driven as found: a sidecar (in process), over the wire.

- A glob whose literal start goes through a symlink out of the workspace is refused.
- A tree 1,600 directories deep is walked (no ``RecursionError``), by both tools.
- A glob that backtracks on long names (``*a*a*a*a*a*a*b``: ``re`` took 50 s on a name of
  100 ``a``s, holding the GIL) does not freeze the server.

Every grep here runs the pure-Python engine: the sidecar serves with a ``PATH`` without ripgrep
(whose regex engine is linear-time, so it would hide what these tests are about).
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.tools.builtin.sidecar import open_session, run, served_sidecar, text_of

DEPTH = 1600
"""Nested directories: deeper than Python's default recursion limit (1,000)."""


async def test_glob_through_a_symlinked_parent_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "secret-name.txt").write_text("x")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "linkdir").symlink_to(outside, target_is_directory=True)
    (workspace / "mine.txt").write_text("x")
    async with served_sidecar(tmp_path) as (wire, _server):
        session = await open_session(wire, workspace)
        card = await run(wire, session, '/glob {"pattern": "linkdir/sub/*"}')
        assert card["status"] == "failed"
        text = text_of(card)
        assert "secret-name" not in text
        assert "linkdir/sub resolves through a symbolic link" in text
        assert str(outside) not in text  # where the link points is not said
        assert "outside the workspace" in text
        # A start that is the symlink itself is skipped, as the walk skips every symlink.
        card = await run(wire, session, '/glob {"pattern": "linkdir/**"}')
        assert "secret-name" not in text_of(card)
        card = await run(wire, session, '/grep {"pattern": "x", "glob": "linkdir/sub/*"}')
        assert "secret-name" not in text_of(card)
        # The server keeps serving, and a glob inside the workspace still works.
        card = await run(wire, session, '/glob {"pattern": "*.txt"}')
        assert card["status"] == "completed" and text_of(card) == "mine.txt"


def make_deep_tree(root: Path) -> str:
    """``DEPTH`` nested directories under ``root``; the relative path of a file at the bottom."""
    rel = "/".join(["d"] * DEPTH)
    for depth in range(1, DEPTH + 1):  # os.makedirs recurses once per level
        os.mkdir(root / "/".join(["d"] * depth))
    (root / rel / "deep.txt").write_text("the needle is here\n")
    return f"{rel}/deep.txt"


def remove_deep_tree(root: Path) -> None:
    """Bottom up, without recursion (``shutil.rmtree`` recurses once per level)."""
    rel = "/".join(["d"] * DEPTH)
    (root / rel / "deep.txt").unlink()
    for depth in range(DEPTH, 0, -1):
        os.rmdir(root / "/".join(["d"] * depth))


async def test_grep_and_glob_walk_a_tree_1600_directories_deep(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "top.txt").write_text("a needle on top\n")
    deep = make_deep_tree(workspace)
    try:
        async with served_sidecar(tmp_path) as (wire, _server):
            session = await open_session(wire, workspace)
            card = await run(wire, session, '/glob {"pattern": "**/*.txt"}')
            assert card["status"] == "completed", card
            assert sorted(text_of(card).splitlines()) == sorted([deep, "top.txt"])
            card = await run(wire, session, '/grep {"pattern": "needle"}')
            assert card["status"] == "completed", card
            text = text_of(card)
            assert f"{deep}\n1: the needle is here" in text
            assert "top.txt\n1: a needle on top" in text
            assert "[2 matching lines in 2 files.]" in text
    finally:
        remove_deep_tree(workspace)


async def test_a_backtracking_glob_does_not_freeze_the_server(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / ("a" * 120)).write_text("x")
    async with served_sidecar(tmp_path) as (wire, _server):
        session = await open_session(wire, workspace)
        card = await run(wire, session, '/glob {"pattern": "*a*a*a*a*a*a*b"}', timeout=5)
        assert card["status"] == "completed", card
        assert text_of(card) == "No files match '*a*a*a*a*a*a*b' in the workspace."
        card = await run(wire, session, '/grep {"pattern": "x", "glob": "*a*a*a*a*a*a*b"}', 5)
        assert card["status"] == "completed", card
