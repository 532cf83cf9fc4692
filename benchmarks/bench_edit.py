"""Benchmark: ``edit`` of one line in a 10 MB file, result diff included, vs plain Python I/O;
and ``replace_all`` of millions of occurrences, with its peak memory.

Run: ``.venv/bin/python benchmarks/bench_edit.py [--size-mb 10] [--rounds 15]``
     ``.venv/bin/python benchmarks/bench_edit.py --replace-all [--size-mb 50] [--rounds 3]``

Each round edits one line in the middle of a ~10 MB text file through a real
``ToolRegistry`` (validation, boundary check, read, match, atomic write with fsync, result
meta) and then builds the result card with ``present_result``. The baseline, measured in the
same run and alternating with it, reads the same file and writes it back with plain Python
(``open().read()`` / ``open("w").write()``, no fsync, not atomic) — the floor any edit pays.
Prints medians in ms and their ratio. The machine is shared and noisy: trust medians.

``--replace-all`` writes a file of 15-byte lines that each hold ``foo`` once (50 MB: 3.3
million occurrences) and, in a fresh child process per round, replaces every ``foo`` by
``quux`` the way a session in ask mode does: the call-time preview the user is asked with,
then the call, then its result card. Each child reports its time and its peak resident
memory (``ru_maxrss``), beside the memory of a child that only imported the tools; the
baseline, in the same children, is ``bytes.replace`` and a plain write of the file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from acp_sidecar.tools import (
    Allow,
    Ask,
    ToolExecution,
    ToolExecutionInput,
    ToolRegistry,
    ToolResult,
)
from acp_sidecar.tools.builtin import edit_tool
from acp_sidecar.tools.context import LocalContext


def make_file(path: str, size: int) -> int:
    """Write ``size`` bytes of numbered lines; returns the number of lines."""
    lines = []
    total = 0
    number = 0
    while total < size:
        line = f"{number:08d} the quick brown fox jumps over the lazy dog {number % 97}\n"
        lines.append(line)
        total += len(line)
        number += 1
    with open(path, "w") as f:
        f.write("".join(lines))
    return number


async def one_edit(registry: ToolRegistry, workspace: LocalContext, old: str, new: str) -> float:
    arguments = {"path": "big.txt", "old_string": old, "new_string": new}
    started = time.perf_counter()
    result = await registry.execute(
        ToolExecutionInput(call_id="b", name="edit", arguments=arguments, context=workspace)
    )
    assert edit_tool.present_result is not None
    view = edit_tool.present_result(
        arguments, ToolResult(content=result.content, is_error=result.is_error, meta=result.meta)
    )
    elapsed = time.perf_counter() - started
    assert not result.is_error and view is not None, result.content
    return elapsed


def plain_io(path: str) -> float:
    started = time.perf_counter()
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(text)
    return time.perf_counter() - started


REPLACE_LINE = "{:08d} foo ;\n"
"""15 bytes, one ``foo`` each: 50 MB hold 3.3 million."""


class AskingWorkspace(LocalContext):
    """A session in ask mode whose user allows every call (so the preview is made)."""

    @property
    def permissions(self) -> Any:
        return self

    async def ask(self, execution: ToolExecution, ask: Ask) -> Allow:
        assert ask.preview is not None, "the preview was not made"
        return Allow()

    async def cleared(self, execution: ToolExecution) -> None:
        return None


def make_replace_file(path: str, size: int) -> int:
    """Write ``size`` bytes of :data:`REPLACE_LINE` lines in chunks (so the writer's memory
    stays small); returns the number of occurrences of ``foo``."""
    count = size // len(REPLACE_LINE.format(0))
    with open(path, "w") as f:
        for start in range(0, count, 100_000):
            f.write(
                "".join(REPLACE_LINE.format(n) for n in range(start, min(count, start + 100_000)))
            )
    return count


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


async def child_replace_all(path: str) -> dict[str, float]:
    """One replace_all of ``foo`` in ``path`` through an asking registry (ours), or with
    ``bytes.replace`` (the baseline); its seconds and this process's peak memory."""
    root = os.path.dirname(path)
    registry = ToolRegistry()
    registry.register(edit_tool)
    registry.on_pre_execute(lambda _execution, _next: Ask("bench"))
    arguments = {"path": os.path.basename(path), "old_string": "foo", "new_string": "quux"}
    arguments["replace_all"] = True
    started = time.perf_counter()
    result = await registry.execute(
        ToolExecutionInput(
            call_id="b", name="edit", arguments=arguments, context=AskingWorkspace(root)
        )
    )
    assert edit_tool.present_result is not None
    view = edit_tool.present_result(
        arguments, ToolResult(content=result.content, is_error=result.is_error, meta=result.meta)
    )
    elapsed = time.perf_counter() - started
    assert not result.is_error and view is not None, result.content
    return {"seconds": elapsed, "peak_mb": _peak_mb()}


def child_baseline(path: str) -> dict[str, float]:
    started = time.perf_counter()
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data.replace(b"foo", b"quux"))
    return {"seconds": time.perf_counter() - started, "peak_mb": _peak_mb()}


def _child(mode: str, path: str) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", mode, path]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def replace_all_main(size_mb: float, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "many.txt")
        ours: list[dict[str, float]] = []
        baseline: list[dict[str, float]] = []
        idle = _child("idle", path)
        for _round in range(rounds):
            count = make_replace_file(path, int(size_mb * 1_000_000))
            size = os.path.getsize(path)
            ours.append(_child("ours", path))
            with open(path, "rb") as f:
                data = f.read()
            assert data.count(b"quux") == count and b"foo" not in data, "replace_all missed some"
            del data
            make_replace_file(path, int(size_mb * 1_000_000))
            baseline.append(_child("baseline", path))

    def median(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(run[key] for run in runs)

    print(f"file: {size / 1e6:.1f} MB, {count:,} occurrences; {rounds} rounds")
    print(
        f"replace_all (preview, call, result card): median {median(ours, 'seconds'):8.2f} s, peak RSS median {median(ours, 'peak_mb'):7.0f} MB"
    )
    print(
        f"bytes.replace + write (baseline):          median {median(baseline, 'seconds'):8.2f} s, peak RSS median {median(baseline, 'peak_mb'):7.0f} MB"
    )
    print(
        f"a child that only imported the tools:                          peak RSS {idle['peak_mb']:7.0f} MB"
    )


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=float, default=None)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--replace-all", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.child is not None:
        mode, path = options.child
        if mode == "ours":
            figures = await child_replace_all(path)
        elif mode == "baseline":
            figures = child_baseline(path)
        else:
            figures = {"seconds": 0.0, "peak_mb": _peak_mb()}
        print(json.dumps(figures))
        return
    if options.replace_all:
        replace_all_main(options.size_mb or 50, options.rounds or 3)
        return
    options.size_mb = options.size_mb or 10
    options.rounds = options.rounds or 15
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "big.txt")
        lines = make_file(path, int(options.size_mb * 1_000_000))
        middle = lines // 2
        target = f"{middle:08d} the quick brown fox"
        registry = ToolRegistry()
        registry.register(edit_tool)
        workspace = LocalContext(root)
        ours: list[float] = []
        baseline: list[float] = []
        await one_edit(registry, workspace, target, target.upper())  # warm-up
        await one_edit(registry, workspace, target.upper(), target)
        for round_ in range(options.rounds):
            old, new = (target, target.upper()) if round_ % 2 == 0 else (target.upper(), target)
            ours.append(await one_edit(registry, workspace, old, new))
            baseline.append(plain_io(path))
        size = os.path.getsize(path)
    edit_ms = statistics.median(ours) * 1000
    plain_ms = statistics.median(baseline) * 1000
    print(f"file: {size / 1e6:.1f} MB, {lines:,} lines; {options.rounds} rounds")
    print(f"edit (registry, atomic write + fsync, result diff): median {edit_ms:8.1f} ms")
    print(f"plain Python read + write (baseline):               median {plain_ms:8.1f} ms")
    print(f"ratio: {edit_ms / plain_ms:.2f}x")


if __name__ == "__main__":
    asyncio.run(main())
