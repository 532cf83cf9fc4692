"""Benchmark: 50 MB of terminal output streamed through the bridge to a real client.

Run: ``.venv/bin/python benchmarks/bench_bridge.py [--megabytes 50] [--runs 3]``

The sidecar runs as a subprocess with a benchmark driver (this file's ``bench_driver``): the
console driver on a registry holding one ``flood`` tool, which writes N MB of terminal output
in 64 KiB chunks through ``execution.write_output``, with the bridge's policy and an extra
outermost execute wrapper that notes when dispatch starts. The client is a plain NDJSON
reader that advertises ``_meta.terminal_output`` and counts the bytes of terminal data that
arrive. Printed, medians over the runs:

- MB/s of terminal data delivered and the number of updates sent, beside a baseline measured
  in the same run: a bare Python process writing the same chunks as NDJSON notifications;
- the sidecar's RSS growth during the call (VmHWM at the end minus VmRSS before the prompt);
- the latency from dispatch start to the ``in_progress`` update arriving at the client
  (both sides read CLOCK_MONOTONIC, which is system-wide on Linux).

Goals (issue 4): >= 50 MB/s, RSS growth <= 64 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CHUNK = 64 * 1024
LIMIT = 256 * 1024 * 1024


def bench_driver() -> Any:
    """The sidecar side: the console driver over a registry with the flood tool."""
    from acp_sidecar.agent.direct import ConsoleDriver
    from acp_sidecar.bridge.policy import install_policy
    from acp_sidecar.tools import SchemaProp, ToolExecution, ToolRegistry, define_tool
    from acp_sidecar.tools.presentation import TerminalCallView, TerminalResultView

    started: dict[str, float] = {}

    async def note_dispatch(execution: ToolExecution, next_: Any) -> Any:
        started[execution.call_id] = time.monotonic()
        return await next_()

    async def flood(args: Any, execution: ToolExecution) -> str:
        await execution.report_progress(f"T0={started[execution.call_id]!r}")
        line = ("x" * 127 + "\n") * (CHUNK // 128)
        for _ in range(int(args["megabytes"] * 1024 * 1024) // CHUNK):
            await execution.write_output(line)
        return "done"

    registry = ToolRegistry()
    registry.register(
        define_tool(
            name="flood",
            description="write lots of terminal output",
            parameters={"megabytes": SchemaProp(type="number", required=True)},
            execute=flood,
            present_call=lambda a: TerminalCallView(card="terminal", title="flood"),
            present_result=lambda a, r: TerminalResultView(card="terminal", exit_code=0),
        )
    )
    install_policy(registry)
    registry.on_execute(note_dispatch, prepend=True)
    return ConsoleDriver(lambda: registry)


BASELINE = r"""
import json, sys
line = ("x" * 127 + "\n") * (65536 // 128)
out = sys.stdout.buffer
for _ in range(int(sys.argv[1]) * 1024 * 1024 // 65536):
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s",
        "update": {"sessionUpdate": "tool_call_update", "toolCallId": "c",
        "_meta": {"terminal_output": {"terminal_id": "c", "data": line}}}}}
    out.write(json.dumps(message).encode() + b"\n")
out.flush()
"""


def vm(pid: int, key: str) -> int:
    """A ``/proc/PID/status`` figure in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0


async def count_terminal_bytes(reader: asyncio.StreamReader) -> tuple[int, int]:
    data = updates = 0
    while line := await reader.readline():
        message = json.loads(line)
        meta = message.get("params", {}).get("update", {}).get("_meta", {})
        if "terminal_output" in meta:
            data += len(meta["terminal_output"]["data"])
            updates += 1
    return data, updates


async def run_baseline(megabytes: int) -> dict[str, float]:
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", BASELINE, str(megabytes), stdout=asyncio.subprocess.PIPE, limit=LIMIT
    )
    assert process.stdout is not None
    data, updates = await count_terminal_bytes(process.stdout)
    await process.wait()
    elapsed = time.perf_counter() - start
    return {"mb_s": data / elapsed / 1e6, "updates": updates}


async def run_sidecar(megabytes: float) -> dict[str, float]:
    store = tempfile.mkdtemp(prefix="bench-bridge-sessions-")  # never the user's data dir
    env = dict(os.environ, PYTHONPATH=f"{HERE}{os.pathsep}{ROOT}", ACP_SIDECAR_STORE=store)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acp_sidecar",
        "--driver",
        "bench_bridge:bench_driver",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
        limit=LIMIT,
    )
    assert process.stdin is not None and process.stdout is not None
    ids = iter(range(1, 1_000_000))

    async def request(method: str, params: dict[str, Any]) -> int:
        msg_id = next(ids)
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        process.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        await process.stdin.drain()  # type: ignore[union-attr]
        return msg_id

    async def answer(msg_id: int) -> dict[str, Any]:
        while True:
            message = json.loads(await process.stdout.readline())  # type: ignore[union-attr]
            if message.get("id") == msg_id and "method" not in message:
                return message  # type: ignore[no-any-return]

    caps = {"_meta": {"terminal_output": True}}
    await answer(await request("initialize", {"protocolVersion": 1, "clientCapabilities": caps}))
    created = await answer(await request("session/new", {"cwd": str(ROOT), "mcpServers": []}))
    session = created["result"]["sessionId"]
    await answer(await request("session/set_mode", {"sessionId": session, "modeId": "auto"}))
    await asyncio.sleep(0.2)  # let the commands update and registry settle
    rss_before = vm(process.pid, "VmRSS")
    prompt = {
        "sessionId": session,
        "prompt": [{"type": "text", "text": f'/flood {{"megabytes": {megabytes}}}'}],
    }
    start = time.perf_counter()
    msg_id = await request("session/prompt", prompt)
    data = updates = 0
    in_progress_at = t0 = None
    while True:
        line = await process.stdout.readline()
        message = json.loads(line)
        if message.get("id") == msg_id:
            break
        update = message.get("params", {}).get("update", {})
        if update.get("status") == "in_progress":
            in_progress_at = time.monotonic()
        cards = update.get("sessionUpdate") in ("tool_call", "tool_call_update")
        for block in (update.get("content") or []) if cards else []:
            text = block.get("content", {}).get("text", "")
            if text.startswith("T0="):
                t0 = float(text[3:])
        meta = update.get("_meta", {})
        if "terminal_output" in meta:
            data += len(meta["terminal_output"]["data"])
            updates += 1
    elapsed = time.perf_counter() - start
    peak = vm(process.pid, "VmHWM")
    process.stdin.close()
    await process.wait()
    shutil.rmtree(store, ignore_errors=True)
    assert data == int(megabytes * 1024 * 1024) // CHUNK * CHUNK, data
    assert in_progress_at is not None and t0 is not None
    return {
        "mb_s": data / elapsed / 1e6,
        "updates": updates,
        "rss_growth_mb": (peak - rss_before) / 1e6,
        "in_progress_ms": (in_progress_at - t0) * 1000,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    sidecar: list[dict[str, float]] = []
    baseline: list[dict[str, float]] = []
    for _ in range(options.runs):
        sidecar.append(await run_sidecar(options.megabytes))
        baseline.append(await run_baseline(options.megabytes))

    def med(rows: list[dict[str, float]], key: str) -> float:
        return statistics.median(row[key] for row in rows)

    print(f"{options.megabytes} MB of terminal output, {options.runs} runs (medians)")
    print(f"{'':34}{'sidecar':>12}{'bare writer':>14}")
    print(
        f"{'terminal data delivered (MB/s)':34}{med(sidecar, 'mb_s'):>12.1f}{med(baseline, 'mb_s'):>14.1f}"
    )
    print(f"{'updates sent':34}{med(sidecar, 'updates'):>12.0f}{med(baseline, 'updates'):>14.0f}")
    print(f"sidecar / bare writer throughput: {med(sidecar, 'mb_s') / med(baseline, 'mb_s'):.2f}x")
    print(
        f"sidecar RSS growth during the call: {med(sidecar, 'rss_growth_mb'):.1f} MB (goal <= 64)"
    )
    print(f"dispatch start -> in_progress at the client: {med(sidecar, 'in_progress_ms'):.2f} ms")
    print("goal: >= 50 MB/s")


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    asyncio.run(main())
