"""Every process a built-in tool starts gets the sidecar's environment without its secrets."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from acp_sidecar.tools import ToolRegistry
from acp_sidecar.tools.builtin import grep as grep_module

from .helpers import Workspace, run

KEY = "sk-test-kept-from-ripgrep"


async def test_ripgrep_runs_without_the_sidecars_api_key(
    workspace: Workspace,
    registry: ToolRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A stand-in ripgrep that writes down the environment it was started with, then
    # finds nothing (exit status 1, as rg does).
    seen = tmp_path / "rg-env.txt"
    rg = tmp_path / "rg"
    rg.write_text(f"#!/bin/sh\nenv > {seen}\nexit 1\n")
    rg.chmod(rg.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(grep_module, "ripgrep", lambda: str(rg))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ACP_SIDECAR_TEST_VISIBLE", "yes")
    workspace.put("a.txt", "hello\n")

    result = await run(registry, workspace, "grep", {"pattern": "hello"})

    assert not result.is_error
    assert "ACP_SIDECAR_TEST_VISIBLE=yes" in seen.read_text()
    assert KEY not in seen.read_text()
