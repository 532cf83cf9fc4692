"""Fixtures for the conformance suite: a workspace with a file in it."""

from __future__ import annotations

from pathlib import Path

import pytest

FILE_TEXT = "alpha\nbeta\ngamma\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A session's working directory holding ``notes.txt`` (three lines)."""
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "notes.txt").write_text(FILE_TEXT, encoding="utf-8")
    return root
