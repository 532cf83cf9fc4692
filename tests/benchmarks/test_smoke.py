"""Every benchmark and soak script runs to its end at a smoke size, so a change that breaks
one fails here; its figures are read by people, never asserted (only that each was printed).

Each runs as a subprocess of this interpreter, in a home of its own; the timeout is a hang
guard. The scripts that already have a smoke test elsewhere are not repeated here:
``bench_listing`` and ``soak_store`` (``tests/store``), ``soak_mcp_tools`` (``tests/mcp``),
``bench_edit`` (``tests/tools/builtin``); ``bench_wire`` and ``bench_store`` are their own
areas' to smoke-test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from tests.isolation import isolated_environment

pytestmark = pytest.mark.process  # every test here runs a benchmark script

ROOT = Path(__file__).resolve().parents[2]


@attrs.frozen
class Smoke:
    script: str
    argv: tuple[str, ...]
    figures: tuple[str, ...]
    """Text each figure's line holds, in the order printed."""

    @property
    def name(self) -> str:
        """The script, and the flags without a value (a variant of it)."""
        after = (*self.argv, "--")[1:]
        flags = [
            arg
            for arg, then in zip(self.argv, after, strict=True)
            if arg.startswith("--") and then.startswith("--")
        ]
        return " ".join((self.script.removesuffix(".py"), *flags))


SMOKES = (
    Smoke(
        "bench_bridge.py",
        ("--megabytes", "1", "--runs", "1"),
        (
            "terminal data delivered (MB/s)",
            "sidecar / bare writer throughput:",
            "sidecar RSS growth during the call:",
            "dispatch start -> in_progress at the client:",
        ),
    ),
    Smoke(
        "bench_export.py",
        ("--calls", "40", "--runs", "1", "--loads", "1"),
        ("json ", "html ", "markdown ", "goal: export", "page load"),
    ),
    Smoke(
        "bench_export_fragments.py",
        ("--calls", "40", "--runs", "1"),
        ("session: 40 calls", "json ", "html ", "html+diffs "),
    ),
    Smoke(
        "bench_export_fragments.py",
        ("--calls", "40", "--runs", "1", "--terminal-output"),
        ("session: 40 calls", "json ", "html ", "html+diffs "),
    ),
    Smoke(
        "bench_grep.py",
        ("--files", "40", "--rounds", "1"),
        ("tree: 40 files", "grep tool (pure Python engine)", "grep -rn (GNU grep)"),
    ),
    Smoke(
        "bench_mcp.py",
        ("--calls", "3", "--rounds", "1", "--cold-runs", "1"),
        (
            "per call (1 x 3 calls",
            "direct (MCP client library)",
            "through the sidecar, --fsync never",
            "through the sidecar, --fsync turn",
            "cold start (1 fresh sidecars each",
            "the server's own start",
            "session/new without servers",
            "session/new with the server",
            "with the server - its own start",
        ),
    ),
    Smoke(
        "bench_model.py",
        ("--deltas", "100", "--runs", "1"),
        ("bare ", "in-process ", "sidecar ", "sidecar / bare:"),
    ),
    Smoke(
        "bench_pipeline.py",
        ("--calls", "200", "--rounds", "1"),
        ("full pipeline", "direct execute()", "pipeline / direct ="),
    ),
    Smoke(
        "bench_schema.py",
        ("--calls", "200", "--rounds", "1"),
        ("small spec", "plain", "compile", "held", "large spec", "plain", "compile", "held"),
    ),
    Smoke(
        "soak_files.py",
        ("--rounds", "3", "--line-mib", "2", "--appends", "5", "--kills", "1", "--write-mib", "2"),
        (
            "1. swap race: 3 rounds",
            "escapes: reads with outside content",
            "escapes: outside files overwritten",
            "escapes: temporaries left outside",
            "2. gigantic line: read of a 2 MiB line",
            "peak RSS before",
            "3. concurrent appends: 5 lines appended",
            "edits done",
            "4. killed writes: 1 SIGKILLs mid-write of 2 MiB",
            "temporaries present after the kills",
        ),
    ),
    Smoke(
        "soak_processes.py",
        ("--trials", "3", "--calls", "3"),
        (
            "3 daemon-starting calls per sidecar",
            "per-call cleanup ",
            "baseline (group only) ",
            "one scan for a call's processes, whole /proc",
            "one scan for a call's processes, sidecar's tree",
            "longest event-loop stall during a call's end",
        ),
    ),
    Smoke(
        "soak_search.py",
        ("--length", "18", "--lines", "1", "--probe", "0.2", "--long-mib", "1"),
        ("ReDoS:", "this tree: server stall max", "this tree: long line grep"),
    ),
    Smoke(
        "soak_wire.py",
        ("--cases", "40", "--never-read-seconds", "0.3"),
        (
            "fuzz cases: 40",
            "requests that needed an answer:",
            "server crashes:",
            "stdout corruption",
            "requests answered more than once:",
            "tracebacks on stderr:",
            "never-reading client, 0.3 s:",
            "sidecar RSS:",
            "answers read once the client reads:",
        ),
    ),
    Smoke(
        "call_path.py",
        (),
        ("== this tree, /edit prompt:", "== this tree, model tool call:"),
    ),
)


def printed_in_order(out: str, figures: tuple[str, ...]) -> list[str]:
    """The figures not found, each looked for in the lines after the previous one's."""
    lines = [line.strip() for line in out.splitlines()]
    missing, at = [], 0
    for figure in figures:
        found = next((i for i in range(at, len(lines)) if figure in lines[i]), None)
        if found is None:
            missing.append(figure)
        else:
            at = found + 1
    return missing


@pytest.mark.timeout(400)
@pytest.mark.parametrize("smoke", SMOKES, ids=[smoke.name for smoke in SMOKES])
def test_the_benchmark_runs_to_its_end_and_prints_its_figures(smoke: Smoke, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / smoke.script), *smoke.argv],
        cwd=ROOT,
        env=isolated_environment(tmp_path, os.environ),
        capture_output=True,
        text=True,
        timeout=360,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert printed_in_order(done.stdout, smoke.figures) == [], done.stdout
