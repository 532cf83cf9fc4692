"""Benchmark: stream-loading a 10,000-call session log vs ``json.loads`` of every line.

Run: ``.venv/bin/python benchmarks/bench_store.py [--calls 10000] [--runs 5]
[--modes json,store,history,load,load-cold] [--baseline DIR] [--keep DIR]``

A synthetic session (about 50 MB: terminal, edit and grep calls, a prompt every 10) is written
through the store, then each mode runs in a fresh interpreter, alternately, ``--runs`` times:
``json`` (the floor: ``json.loads`` of every line), ``store`` / ``history`` (the log decoded),
``load`` (a real sidecar's ``session/load``, timed from the request to its answer, warm;
``load-cold``: its first request). Peak RSS is ``VmHWM`` (the sidecar's for ``load``).
``--baseline DIR`` also loads through another checkout's sidecar (``DIR/acp_sidecar``), in the
same runs. The figure (issue 26): ``load`` ≤ 3× ``json``, peak RSS no higher than the baseline's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SESSION_ID = "bench-session"
CWD = "/work/project"


# -- the synthetic session ---------------------------------------------------------------


def _text(seed: int, size: int) -> str:
    line = f"line {seed:05d}: the quick brown fox jumps over the lazy dog\n"
    return (line * (size // len(line) + 1))[:size]


def build_session(directory: Path, calls: int) -> Path:
    """Write the synthetic session into ``directory``; returns the log's path."""
    from acp_sidecar.store import SessionStore
    from acp_sidecar.tools.content import TextContent
    from acp_sidecar.tools.result import ToolExecutionResult

    store = SessionStore(directory, fsync="never")
    with store.create(SESSION_ID, CWD, mode="default") as writer:
        for n in range(calls):
            if n % 10 == 0:
                writer.user_message([{"type": "text", "text": f"step {n // 10}: continue"}])
                writer.agent_text(_text(n, 500))
            call_id = f"call-{n}"
            shape = n % 3
            if shape == 0:
                output = _text(n, 2500)
                arguments: object = {"command": f"pytest -q tests/test_{n}.py", "cwd": CWD}
                content = output
                meta: Any = {"exit_code": n % 2, "output": output}
                name = "run"
            elif shape == 1:
                old, new = _text(n, 900), _text(n + 1, 900)
                arguments = {"path": f"src/mod_{n}.py", "old_string": old, "new_string": new}
                content = f"Edited src/mod_{n}.py"
                meta = {"path": f"{CWD}/src/mod_{n}.py", "old_text": old, "new_text": new}
                name = "edit"
            else:
                matches = [
                    {"path": f"{CWD}/src/f{k}.py", "line": k * 7, "text": _text(k, 80)}
                    for k in range(20)
                ]
                arguments = {"pattern": f"needle{n}", "path": CWD}
                content = "".join(f"{m['path']}:{m['line']}: {m['text']}\n" for m in matches)
                meta = {"matches": matches, "truncated": False}
                name = "grep"
            writer.tool_call(call_id, name, arguments)
            writer.tool_result(
                ToolExecutionResult(
                    call_id=call_id,
                    content=[TextContent(content)],
                    is_error=shape == 0 and n % 2 == 1,
                    meta=meta,
                )
            )
            if n % 10 == 9:
                writer.end_turn("end_turn")
    return store.path_of(SESSION_ID)


# -- modes (each runs in a fresh child) ----------------------------------------------------


def load_json(path: Path) -> int:
    """The baseline: ``json.loads`` of every line."""
    count = 0
    loads = json.loads
    with open(path, "rb") as stream:
        for line in stream:
            loads(line)
            count += 1
    return count


def load_store(path: Path) -> int:
    """Every record through the store's streaming loader."""
    from acp_sidecar.store import SessionLog

    count = 1  # the header
    with SessionLog(path) as log:
        for _ in log:
            count += 1
    return count


def load_history(path: Path) -> int:
    """The model's view of the session."""
    from acp_sidecar.store import History, SessionLog

    count = 0
    with SessionLog(path) as log:
        for _ in History(log):
            count += 1
    return count


def _status_mb(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def load_over_the_wire(path: Path, *, warm: bool = True, code: Path = ROOT) -> dict[str, float]:
    """The full ``session/load``: a real sidecar replays the log to a client through the
    bridge's translator. Times the request until its answer; RSS is the sidecar's.

    ``warm``: load once untimed first, so the timed load does not include what every first
    request of a process pays once (building the tool registry, importing the store).
    ``code``: the checkout whose ``acp_sidecar`` serves (another revision, for a baseline)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "acp_sidecar", "--store", str(path.parent)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code)},
    )
    assert process.stdin is not None and process.stdout is not None

    def send(message: dict[str, Any]) -> None:
        process.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]

    caps = {"_meta": {"terminal_output": True}}
    send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 1, "clientCapabilities": caps},
        }
    )
    process.stdout.readline()

    def load(msg_id: int) -> tuple[float, int]:
        marker = f'"id":{msg_id},'.encode()
        start = time.perf_counter()
        send(
            {
                "jsonrpc": "2.0",
                "id": msg_id,
                "method": "session/load",
                "params": {"sessionId": SESSION_ID, "cwd": CWD, "mcpServers": []},
            }
        )
        updates = 0
        for line in process.stdout:  # type: ignore[union-attr]
            if marker in line[:40]:
                answer = json.loads(line)
                if answer.get("id") == msg_id:
                    assert "result" in answer, answer
                    break
            updates += 1
        return time.perf_counter() - start, updates

    if warm:
        load(2)
    idle = _status_mb(process.pid, "VmRSS")
    seconds, updates = load(3)
    rss = _status_mb(process.pid, "VmHWM")
    process.stdin.close()
    process.wait(timeout=30)
    return {"seconds": seconds, "count": updates, "rss": rss, "idle": idle}


MODES: dict[str, Callable[[Path], int]] = {
    "json": load_json,
    "store": load_store,
    "history": load_history,
}
"""Name → loader; each returns how many records (or items) it handled."""


def _peak_rss_mb() -> float:
    """This process's peak RSS: ``VmHWM`` (fresh at exec), else ``ru_maxrss``.

    ``ru_maxrss`` alone would not do in a child: Linux carries the forking parent's
    high-water mark into it across ``fork`` and ``exec``.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


BASELINE_VARIABLE = "BENCH_STORE_BASELINE"
"""Hands ``--baseline DIR`` to the children that run the ``load-base`` mode."""

WIRE_MODES: dict[str, Callable[[Path], dict[str, float]]] = {
    "load": load_over_the_wire,
    "load-cold": lambda path: load_over_the_wire(path, warm=False),
    "load-base": lambda path: load_over_the_wire(path, code=Path(os.environ[BASELINE_VARIABLE])),
}
"""Modes that measure another process: they report their own figures."""


def child(mode: str, path: Path) -> None:
    """Run one mode once and print its figures as JSON."""
    if mode in WIRE_MODES:
        print(json.dumps(WIRE_MODES[mode](path)))
        return
    loader = MODES[mode]
    import acp_sidecar.store  # noqa: F401 - every mode pays the same imports before timing

    idle = _peak_rss_mb()
    start = time.perf_counter()
    count = loader(path)
    seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "count": count, "rss": _peak_rss_mb(), "idle": idle}))


def run_child(mode: str, path: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def measure(modes: list[str], path: Path, runs: int) -> dict[str, list[dict[str, float]]]:
    """Every mode ``runs`` times, alternating the order each round."""
    results: dict[str, list[dict[str, float]]] = {mode: [] for mode in modes}
    for round_ in range(runs):
        order = modes if round_ % 2 == 0 else list(reversed(modes))
        for mode in order:
            results[mode].append(run_child(mode, path))
    return results


def revision(code: Path) -> str:
    """The checkout's commit (short), or its path when it is not a git checkout."""
    done = subprocess.run(
        ["git", "-C", str(code), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else str(code)


def figure(results: dict[str, list[dict[str, float]]], baseline: Path | None) -> None:
    """The replay figure: ``session/load`` against the ``json.loads`` floor, same run."""
    if "load" not in results:
        return

    def median(mode: str) -> float:
        return statistics.median(r["seconds"] for r in results[mode])

    def peak(mode: str) -> float:
        return max(r["rss"] for r in results[mode])

    floor = median("json")
    print("\nreplay figure (session/load of the whole log; medians, same run):")
    print(f"  json.loads floor   {floor:8.3f} s   peak RSS {peak('json'):7.1f} MB")
    rows = [("our replay", "load")]
    if "load-base" in results and baseline is not None:
        rows.append((f"baseline {revision(baseline)}", "load-base"))
    for label, mode in rows:
        print(
            f"  {label:<18} {median(mode):8.3f} s   peak RSS {peak(mode):7.1f} MB   "
            f"{median(mode) / floor:5.2f}× the floor"
        )
    print(f"  goal: ≤ 3.00× the floor{', RSS ≤ the baseline' if len(rows) > 1 else ''}")


def report(results: dict[str, list[dict[str, float]]], size: int) -> None:
    base = statistics.median(r["seconds"] for r in results["json"])
    print(
        f"{'mode':<10} {'median s':>9} {'MB/s':>8} {'records':>8} {'× json':>7} "
        f"{'peak RSS MB':>12} {'idle RSS MB':>12}"
    )
    for mode, runs in results.items():
        seconds = statistics.median(r["seconds"] for r in runs)
        rss = max(r["rss"] for r in runs)
        idle = statistics.median(r["idle"] for r in runs)
        print(
            f"{mode:<10} {seconds:>9.3f} {size / 1e6 / seconds:>8.1f} {int(runs[0]['count']):>8} "
            f"{seconds / base:>7.2f} {rss:>12.1f} {idle:>12.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--modes", default="json,store,history,load,load-cold")
    parser.add_argument("--keep", type=Path, help="write the session here and keep it")
    parser.add_argument(
        "--baseline", type=Path, help="also load through this checkout's sidecar (load-base)"
    )
    parser.add_argument("--child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return
    modes = [m for m in args.modes.split(",") if m]
    if "json" not in modes:
        modes.insert(0, "json")
    if "load-base" in modes and args.baseline is None:
        parser.error("load-base needs --baseline DIR")
    if args.baseline is not None:
        os.environ[BASELINE_VARIABLE] = str(args.baseline.resolve())
        if "load-base" not in modes:
            modes.append("load-base")
    unknown = set(modes) - MODES.keys() - WIRE_MODES.keys()
    if unknown:
        parser.error(f"unknown modes: {', '.join(sorted(unknown))} (known: {', '.join(MODES)})")
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.keep or Path(scratch)
        start = time.perf_counter()
        path = build_session(directory, args.calls)
        size = path.stat().st_size
        with open(path, "rb") as stream:
            lines = sum(1 for _ in stream)
        print(
            f"session: {args.calls:,} calls, {lines:,} records, {size / 1e6:.1f} MB "
            f"(written in {time.perf_counter() - start:.1f} s) — {path}"
        )
        print(f"runs: {args.runs} per mode, alternating; each in a fresh interpreter\n")
        results = measure(modes, path, args.runs)
        report(results, size)
        figure(results, args.baseline)


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    main()
