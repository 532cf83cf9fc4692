"""The store's benchmarks run, at a smoke size: their figures are printed, never asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.process, pytest.mark.timeout(300)]  # each spawns several sidecars

ROOT = Path(__file__).resolve().parents[2]


def run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, f"benchmarks/{script}", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_bench_listing_runs_every_case() -> None:
    out = run(
        "bench_listing.py", "--prompt-mb", "1", "--line-mb", "1", "--sessions", "60", "--runs", "1"
    )
    for figure in (
        "first list",
        "later lists",
        "ping during a list",
        "resume big session",
        "load one-line log",
        "first page",
        "next page",
        "acp-sidecar sessions",
        "sessions in a terminal",
    ):
        assert figure in out, out


def test_soak_store_runs_both_parts() -> None:
    out = run("soak_store.py", "--trials", "1", "--sessions", "24", "--nofile", "64")
    assert "committed records lost: 0" in out, out
    assert "logs missing records: 0" in out, out
    assert "released) sessions refused: 40 of 40" in out, out


def test_bench_store_prints_the_replay_figure() -> None:
    out = run(
        "bench_store.py", "--calls", "60", "--runs", "1", "--modes", "json,store,history,load"
    )
    for figure in ("replay figure", "json.loads floor", "our replay", "× the floor", "peak RSS"):
        assert figure in out, out
