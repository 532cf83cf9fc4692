"""Benchmark: an MCP tool through the sidecar against the same call made directly.

Run: ``.venv/bin/python benchmarks/bench_mcp.py [--calls 300] [--cold-runs 9] [--rounds 3]``

The peer is ``benchmarks/mcp_noop_server.py`` (the MCP SDK's server side over stdio, one
read-only tool ``noop`` that returns ``"ok"``). Both parts measure the sidecar and its
baseline in the same run, alternating, and print medians and ratios:

- per call: ``--calls`` sequential calls of ``noop`` (after a warm-up), each timed
  - through the sidecar: ``session/prompt`` ``/mcp__noop__noop`` sent → its answer read (the
    console driver; the tool-call card's updates read on the way; the session log written),
    once with ``--fsync never`` (what the MCP path costs) and once with the default
    ``--fsync turn`` (plus the log's sync at each turn's end, which the answer waits for), and
  - directly: ``ClientSession.call_tool("noop")`` of the MCP client library on its own
    connection to another copy of the server;
  the figure is the difference of the medians (what the sidecar adds per call).
- cold start: ``--cold-runs`` fresh sidecars, each initialized, timed from sending
  ``session/new`` naming one stdio server to its answer (which waits for the server to have
  started and listed its tools), beside ``session/new`` without servers in fresh sidecars
  and the server's own start through the MCP client library (spawn → ``initialize`` answered
  → ``tools/list`` answered).

Goals (issue 13): at most 1.5 ms added per call; ``session/new`` with servers no slower than
the slowest server's own start plus 50 ms. The machine is shared and noisy: trust medians and
ratios measured in the same run, not single figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.sidecar_process import Pipes, start_sidecar  # noqa: E402

PEER = ROOT / "benchmarks" / "mcp_noop_server.py"
SERVER = {"name": "noop", "command": sys.executable, "args": [str(PEER)], "env": []}
CALL = "/mcp__noop__noop"


class Client(Pipes):
    """A minimal ACP client: requests, answered in order; updates are read and counted."""

    async def request(self, method: str, params: Any) -> Any:
        msg_id = await self.send_request(method, params)
        while True:
            message = json.loads(await self.stdout.readline())
            if message.get("id") == msg_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            if "id" in message and "method" in message:
                raise RuntimeError(f"unexpected request {message['method']}")

    async def close(self) -> None:
        self.stdin.close()
        await asyncio.wait_for(self.process.wait(), 10)


async def sidecar(store: Path, *args: str) -> Client:
    client = Client(await start_sidecar("--store", str(store), *args))
    await client.request("initialize", {"protocolVersion": 1})
    return client


async def through_sidecar(calls: int, workdir: Path, fsync: str) -> list[float]:
    client = await sidecar(workdir / "store", "--fsync", fsync)
    try:
        session = (
            await client.request("session/new", {"cwd": str(workdir), "mcpServers": [SERVER]})
        )["sessionId"]
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": CALL}]}
        for _ in range(20):  # warm-up
            await client.request("session/prompt", prompt)
        times = []
        for _ in range(calls):
            began = time.perf_counter()
            answer = await client.request("session/prompt", prompt)
            times.append(time.perf_counter() - began)
            assert answer["stopReason"] == "end_turn"
        return times
    finally:
        await client.close()


async def direct(calls: int) -> list[float]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(PEER)])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        for _ in range(20):
            await session.call_tool("noop", {})
        times = []
        for _ in range(calls):
            began = time.perf_counter()
            result = await session.call_tool("noop", {})
            times.append(time.perf_counter() - began)
            assert not result.is_error
        return times


async def server_start() -> float:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=[str(PEER)])
    began = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        took = time.perf_counter() - began
    return took


async def session_new(workdir: Path, servers: list[dict[str, Any]]) -> float:
    client = await sidecar(workdir / "store")
    try:
        began = time.perf_counter()
        await client.request("session/new", {"cwd": str(workdir), "mcpServers": servers})
        return time.perf_counter() - began
    finally:
        await client.close()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f} ms"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cold-runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        if args.rounds:
            plain: list[float] = []
            via: dict[str, list[float]] = {"never": [], "turn": []}
            for _ in range(args.rounds):
                plain += await direct(args.calls)
                for fsync, times in via.items():
                    times += await through_sidecar(args.calls, workdir, fsync)
            m_plain = statistics.median(plain)
            print(f"per call ({args.rounds} x {args.calls} calls of a no-op MCP tool, medians)")
            print(f"  direct (MCP client library)            {ms(m_plain)}")
            for fsync, times in via.items():
                m_via = statistics.median(times)
                print(
                    f"  through the sidecar, --fsync {fsync:<6}    {ms(m_via)}"
                    f"   ratio {m_via / m_plain:5.2f}x   added {ms(m_via - m_plain)}"
                )
            print("  goal: at most 1.50 ms added (the MCP path: --fsync never)")
        if args.cold_runs:
            own, bare, with_server = [], [], []
            for _ in range(args.cold_runs):
                own.append(await server_start())
                bare.append(await session_new(workdir, []))
                with_server.append(await session_new(workdir, [SERVER]))
            m_own, m_bare, m_with = map(statistics.median, (own, bare, with_server))
            print(f"cold start ({args.cold_runs} fresh sidecars each, medians)")
            print(f"  the server's own start (spawn -> initialize -> tools/list) {ms(m_own)}")
            print(f"  session/new without servers                               {ms(m_bare)}")
            print(f"  session/new with the server                               {ms(m_with)}")
            print(
                f"  with the server - its own start                            "
                f"{ms(m_with - m_own)}   goal <=    50.00 ms"
            )


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    # Each part's figures as soon as it ends: a full run takes minutes, and a pipe would
    # otherwise hold every line until the last.
    sys.stdout.reconfigure(line_buffering=True)
    asyncio.run(main())
