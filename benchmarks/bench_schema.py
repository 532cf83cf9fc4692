"""Benchmark: argument validation from a plain spec vs from a compiled one, same run.

Run: ``.venv/bin/python benchmarks/bench_schema.py [--calls N] [--rounds R]``

For a small spec (two scalar props, like ``bench_pipeline.py``'s tool) and a larger one (ten
props, a nested object and an array of objects), it times per call, alternating rounds:

- ``plain``: ``validate_args(spec, args)`` with the plain :data:`SchemaSpec` (what a tool
  author calling the public function does);
- ``compile``: ``compile_spec(spec).validate(args)``, compiling on every call;
- ``held``: ``compiled.validate(args)`` with a :class:`CompiledSpec` made once (what
  ``define_tool`` does): the baseline.

Prints median µs per call and the ratios to ``held``. The machine is shared and noisy: trust
medians and ratios, not single figures.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from acp_sidecar.tools.args import compile_spec, validate_args
from acp_sidecar.tools.schema import SchemaProp, SchemaSpec

SMALL: SchemaSpec = {
    "path": SchemaProp("string", required=True, description="a path"),
    "line": SchemaProp("integer", description="a line"),
}
SMALL_ARGS = {"path": "src/main.py", "line": 3}

FILE = SchemaProp(
    "object",
    properties={"path": SchemaProp("string", required=True), "line": SchemaProp("integer")},
)
LARGE: SchemaSpec = {
    "path": SchemaProp("string", required=True),
    "pattern": SchemaProp("string", required=True),
    "mode": SchemaProp("string", enum=("a", "b", "c"), default="a"),
    "limit": SchemaProp("integer", default=100),
    "ratio": SchemaProp("number"),
    "flag": SchemaProp("boolean", default=False),
    "context": SchemaProp("integer"),
    "glob": SchemaProp("string"),
    "target": FILE,
    "files": SchemaProp("array", items=FILE),
}
LARGE_ARGS = {
    "path": "src",
    "pattern": "def ",
    "mode": "b",
    "ratio": 0.5,
    "context": 2,
    "target": {"path": "a.py", "line": 1},
    "files": [{"path": "b.py"}, {"path": "c.py", "line": 9}],
}


def time_calls(call: Callable[[], object], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) / calls


def measure(name: str, spec: SchemaSpec, args: dict[str, Any], calls: int, rounds: int) -> None:
    compiled = compile_spec(spec)
    ways: dict[str, Callable[[], object]] = {
        "plain": lambda: validate_args(spec, args),
        "compile": lambda: compile_spec(spec).validate(args),
        "held": lambda: compiled.validate(args),
    }
    times: dict[str, list[float]] = {way: [] for way in ways}
    for round_ in range(rounds):
        order = list(ways)
        shift = round_ % len(order)
        for way in order[shift:] + order[:shift]:
            times[way].append(time_calls(ways[way], calls))
    held = statistics.median(times["held"])
    print(f"\n{name} spec ({len(spec)} props), median of {rounds} rounds x {calls} calls")
    for way, values in times.items():
        median = statistics.median(values)
        print(f"  {way:<8} {median * 1e6:7.2f} µs/call   x{median / held:.2f} of held")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    measure("small", SMALL, SMALL_ARGS, args.calls, args.rounds)
    measure("large", LARGE, LARGE_ARGS, args.calls, args.rounds)


if __name__ == "__main__":
    main()
