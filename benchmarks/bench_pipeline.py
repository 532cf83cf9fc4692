"""Benchmark: one no-op call through the full tool pipeline vs a direct call of its ``execute``.

Run: ``.venv/bin/python benchmarks/bench_pipeline.py [--calls N] [--rounds R]``

The tool is built with ``define_tool`` (so argument validation is included) and registered
with three listeners on every seam: pre-execute, guard, execute wrapper, post-execute and
result observer. The baseline is the same ``execute`` called directly, measured in the same
run, alternating rounds. Prints median µs per call, calls/s and the ratio. The machine is
shared and noisy: trust medians and ratios, not single figures.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from acp_sidecar.tools import (
    Accept,
    SchemaProp,
    ToolExecution,
    ToolExecutionInput,
    ToolExecutionResult,
    ToolRegistry,
    define_tool,
)

ARGS = {"path": "src/main.py", "line": 3}


async def noop(args: Any, execution: ToolExecution) -> str:
    return "ok"


def build_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register(
        define_tool(
            name="noop",
            description="does nothing",
            parameters={
                "path": SchemaProp(type="string", required=True, description="a path"),
                "line": SchemaProp(type="integer", description="a line"),
            },
            execute=noop,
        )
    )
    for _ in range(3):
        registry.on_pre_execute(lambda execution, next_: next_())
        registry.add_guard(lambda execution: None)

        async def wrap(execution: ToolExecution, next_: Any) -> ToolExecutionResult:
            result: ToolExecutionResult = await next_()
            return result

        registry.on_execute(wrap)

        async def post(execution: ToolExecution, result: ToolExecutionResult, next_: Any) -> Accept:
            decision: Accept = await next_()
            return decision

        registry.on_post_execute(post)
        registry.on_result(lambda execution, result: None)
    return registry


async def time_pipeline(registry: ToolRegistry, calls: int) -> float:
    start = time.perf_counter()
    for index in range(calls):
        result = await registry.execute(
            ToolExecutionInput(call_id=f"c{index}", name="noop", arguments=ARGS)
        )
        assert not result.is_error, result
    return (time.perf_counter() - start) / calls


async def time_direct(registry: ToolRegistry, calls: int) -> float:
    definition = registry.get("noop")
    assert definition is not None
    execute = definition.execute
    sample = ToolExecution(
        call_id="c", name="noop", arguments=None, agent=None, parent=None, signal=None
    )
    start = time.perf_counter()
    for _ in range(calls):
        await execute(ARGS, sample)
    return (time.perf_counter() - start) / calls


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=9)
    options = parser.parse_args()
    registry = build_registry()
    await time_pipeline(registry, 500)  # warm up
    await time_direct(registry, 500)
    pipeline: list[float] = []
    direct: list[float] = []
    for _ in range(options.rounds):
        pipeline.append(await time_pipeline(registry, options.calls))
        direct.append(await time_direct(registry, options.calls))
    p, d = statistics.median(pipeline), statistics.median(direct)
    print(f"rounds={options.rounds} calls/round={options.calls} (15 listeners: 3 per seam)")
    print(f"{'':24}{'µs/call (median)':>18}{'calls/s':>12}")
    print(f"{'full pipeline':24}{p * 1e6:>18.1f}{1 / p:>12,.0f}")
    print(f"{'direct execute()':24}{d * 1e6:>18.1f}{1 / d:>12,.0f}")
    print(f"pipeline / direct = {p / d:.1f}x; pipeline overhead = {(p - d) * 1e6:.1f} µs/call")
    print("target: <= 50 µs/call for the full pipeline (median)")


if __name__ == "__main__":
    asyncio.run(main())
