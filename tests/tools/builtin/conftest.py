from __future__ import annotations

import os
from pathlib import Path

import pytest

from acp_sidecar.tools import ToolRegistry

from .helpers import Workspace, builtin_registry


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir()
    return Workspace(cwd=os.path.realpath(root))


@pytest.fixture
def registry() -> ToolRegistry:
    return builtin_registry()
