"""``benchmarks/bench_wire.py`` runs to its end at a smoke size, so a change cannot break it
unseen; its figures are printed, never asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # every test here runs a benchmark script

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.timeout(300)
def test_bench_wire_runs_every_figure_at_a_smoke_size() -> None:
    argv = ["--cold-runs", "1", "--requests", "3", "--flood", "300", "--rounds", "1"]
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_wire.py", *argv, "--no-ts-sdk"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for figure in (
        "acp-sidecar / pygls-floor =",
        "acp-sidecar / sdk-agent p50 =",
        "acp-sidecar / sdk-agent-echo p50 =",
        "acp-sidecar / sdk-agent =",
        "acp-sidecar-v2 / acp-sidecar =",
        "acp-sidecar-v2 / acp-sidecar p50 =",
    ):
        assert figure in done.stdout, done.stdout
