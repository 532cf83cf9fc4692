"""Benchmark: ``grep`` over a tree of 10,000 files, beside ``grep -r`` and ``rg``.

Run: ``.venv/bin/python benchmarks/bench_grep.py [--files 10000] [--rounds 7] [--baseline REV]
[--anchored]``

Builds a tree of ``--files`` small source-like files (about 2 KB each, in 100 directories,
with a .gitignore), then times, in the same run and round-robin:

- our ``grep`` tool through a real ``ToolRegistry`` with ripgrep on PATH (when present),
- the same with ripgrep hidden, so the pure-Python engine runs,
- ``grep -rn PATTERN .`` and ``rg -n PATTERN`` (when present) as subprocesses.

``--anchored`` searches ``^    needle_\\d+ = True$`` instead, the same lines but for the
comments: anchors that the Python engine must not make it search line by line.

The pattern matches about 1,200 lines in 1,000 files, under ``max_results`` (2,000), so every
contender reads the whole tree. Our figures include the walk with .gitignore rules, which
``grep -r`` does not do. Prints medians in ms. The machine is shared and noisy: trust medians.

``--baseline REV`` adds the pure-Python engine of git revision ``REV`` (its ``acp_sidecar``
exported to a temporary directory) beside this tree's, each timed in a fresh child process,
alternating round by round, and prints the ratio of their medians: what a change to the
engine costs, measured in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
# Appended, not inserted: a ``--child`` must import the ``acp_sidecar`` its PYTHONPATH names.
sys.path.append(str(REPOSITORY))

from acp_sidecar.tools import ToolExecutionInput, ToolRegistry  # noqa: E402
from acp_sidecar.tools.builtin import grep as grep_module  # noqa: E402
from acp_sidecar.tools.builtin import grep_tool  # noqa: E402
from acp_sidecar.tools.context import LocalContext  # noqa: E402
from benchmarks.sidecar_process import export_revision  # noqa: E402

PATTERN = r"needle_\d+"
ANCHORED = r"^    needle_\d+ = True$"
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "value",
    "result",
    "config",
    "handler",
    "request",
    "response",
]


def build_tree(root: str, files: int) -> None:
    rng = random.Random(7)
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write("*.tmp\nbuild/\n")
    for index in range(files):
        directory = os.path.join(root, f"pkg{index % 100:02}")
        os.makedirs(directory, exist_ok=True)
        lines = []
        for line in range(40):
            words = " ".join(rng.choice(WORDS) for _ in range(6))
            lines.append(f"    def f{line}(self): return {words!r}\n")
        if index % 10 == 0:
            lines[rng.randrange(40)] = f"    needle_{index} = True\n"
            if index % 50 == 0:
                lines[0] = f"# needle_{index}\n"
        with open(os.path.join(directory, f"mod{index:05}.py"), "w") as f:
            f.writelines(lines)


async def run_tool(registry: ToolRegistry, workspace: LocalContext) -> int:
    result = await registry.execute(
        ToolExecutionInput(
            call_id="b",
            name="grep",
            arguments={"pattern": PATTERN, "max_results": 2000},
            context=workspace,
        )
    )
    assert not result.is_error and isinstance(result.meta, dict), result.content
    matches = result.meta["matches"]
    assert isinstance(matches, int) and not result.meta["truncated"]
    return matches


def run_command(command: list[str], cwd: str) -> int:
    done = subprocess.run(command, cwd=cwd, capture_output=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout.count(b"\n")


async def child_time(root: str) -> None:
    """``--child ROOT``: one warm-up, then one timed pure-Python grep; prints milliseconds."""
    registry = ToolRegistry()
    registry.register(grep_tool)
    grep_module.ripgrep = lambda: None
    await run_tool(registry, LocalContext(root))
    started = time.perf_counter()
    matches = await run_tool(registry, LocalContext(root))
    print(f"{(time.perf_counter() - started) * 1000:.3f} {matches}")


def child_run(source: str, root: str) -> tuple[float, int]:
    """Time one pure-Python grep with the ``acp_sidecar`` found in ``source``."""
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            root,
            *(["--anchored"] if PATTERN == ANCHORED else []),
        ],
        capture_output=True,
        check=True,
        env={**os.environ, "PYTHONPATH": source},
        text=True,
    )
    elapsed, matches = done.stdout.split()
    return float(elapsed) / 1000, int(matches)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--baseline", metavar="REV", help="git revision to compare against")
    parser.add_argument("--anchored", action="store_true", help=f"search {ANCHORED!r}")
    parser.add_argument("--child", metavar="ROOT", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.anchored:
        global PATTERN
        PATTERN = ANCHORED
    if options.child:
        await child_time(options.child)
        return
    rg = shutil.which("rg")
    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as old:
        build_tree(root, options.files)
        registry = ToolRegistry()
        registry.register(grep_tool)
        workspace = LocalContext(root)
        real_ripgrep = grep_module.ripgrep

        async def ours_python() -> int:
            grep_module.ripgrep = lambda: None
            try:
                return await run_tool(registry, workspace)
            finally:
                grep_module.ripgrep = real_ripgrep

        contenders: dict[str, Callable[[], object]] = {}
        if rg is not None:
            contenders["grep tool (ripgrep engine)"] = lambda: run_tool(registry, workspace)
        contenders["grep tool (pure Python engine)"] = ours_python
        contenders["grep -rn (GNU grep)"] = lambda: run_command(
            ["grep", "-rnP", PATTERN, "."], root
        )
        if rg is not None:
            contenders["rg -n"] = lambda: run_command([rg, "-n", PATTERN], root)
        timed_by_child: dict[str, str] = {}
        if options.baseline:
            export_revision(options.baseline, old)
            timed_by_child[f"Python engine, {options.baseline} (child)"] = old
            timed_by_child["Python engine, this tree (child)"] = str(REPOSITORY)
        times: dict[str, list[float]] = {name: [] for name in contenders}
        counts: dict[str, int] = {}
        for _round in range(options.rounds + 1):  # the first round warms the page cache
            for name, contender in contenders.items():
                started = time.perf_counter()
                outcome = contender()
                if asyncio.iscoroutine(outcome):
                    outcome = await outcome
                elapsed = time.perf_counter() - started
                assert isinstance(outcome, int)
                counts[name] = outcome
                if _round:
                    times[name].append(elapsed)
            if _round:  # a child warms up itself
                for name, source in timed_by_child.items():
                    elapsed, counts[name] = child_run(source, root)
                    times.setdefault(name, []).append(elapsed)
    print(f"tree: {options.files:,} files; pattern {PATTERN!r}; {options.rounds} rounds")
    medians = {name: statistics.median(found) for name, found in times.items()}
    for name in times:
        print(f"{name:40} median {medians[name] * 1000:8.1f} ms ({counts[name]} matching lines)")
    if timed_by_child:
        before, after = (medians[name] for name in timed_by_child)
        print(f"Python engine, this tree / {options.baseline}: {after / before:.2f}x")


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    asyncio.run(main())
