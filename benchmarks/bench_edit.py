"""Benchmark: ``edit`` of one line in a 10 MB file, result diff included, vs plain Python I/O.

Run: ``.venv/bin/python benchmarks/bench_edit.py [--size-mb 10] [--rounds 15]``

Each round edits one line in the middle of a ~10 MB text file through a real
``ToolRegistry`` (validation, boundary check, read, match, atomic write with fsync, result
meta) and then builds the result card with ``present_result``. The baseline, measured in the
same run and alternating with it, reads the same file and writes it back with plain Python
(``open().read()`` / ``open("w").write()``, no fsync, not atomic) — the floor any edit pays.
Prints medians in ms and their ratio. The machine is shared and noisy: trust medians.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time

import attrs

from acp_sidecar.tools import ToolExecutionInput, ToolRegistry, ToolResult
from acp_sidecar.tools.builtin import edit_tool


@attrs.define
class Workspace:
    cwd: str
    allow_outside_workspace: bool = False
    files: None = None
    permissions: None = None


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


async def one_edit(registry: ToolRegistry, workspace: Workspace, old: str, new: str) -> float:
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


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=float, default=10)
    parser.add_argument("--rounds", type=int, default=15)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "big.txt")
        lines = make_file(path, int(options.size_mb * 1_000_000))
        middle = lines // 2
        target = f"{middle:08d} the quick brown fox"
        registry = ToolRegistry()
        registry.register(edit_tool)
        workspace = Workspace(cwd=root)
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
