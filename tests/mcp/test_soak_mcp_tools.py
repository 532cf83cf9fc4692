"""``benchmarks/soak_mcp_tools.py`` runs, at a smoke size (its figures are read by people,
never asserted)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.server.wire import ROOT

pytestmark = pytest.mark.process  # every test here starts an interpreter


@pytest.mark.timeout(240)  # seven sidecars, one after the other
def test_the_tool_list_soak_runs_at_a_smoke_size() -> None:
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "soak_mcp_tools.py"),
            *("--tools", "30", "--paged-tools", "40", "--pages", "2"),
            *("--churn-tools", "10", "--churn-every", "0.05", "--duration", "1", "--limit", "60"),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    assert lines[0] == "this tree:"
    assert [line.split()[0] for line in lines[1:]] == ["wide", "paged", "paged", "churn"]
    assert "longest stall" in lines[1] and "EOF after its" in lines[3] and "re-lists" in lines[4]
