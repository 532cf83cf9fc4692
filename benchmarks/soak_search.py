"""Soak: a hostile ``grep`` against a live sidecar, over the wire: stall, cancel, memory.

Run: ``.venv/bin/python benchmarks/soak_search.py [--length 25] [--lines 4] [--baseline REV]``

The sidecar runs as a subprocess with a ``PATH`` without ripgrep, so its pure-Python grep
engine runs (ripgrep's regex engine is linear-time and would hide all of this). Measured:

- **ReDoS**: session A greps ``(a|a)+$`` over ``--lines`` lines of ``--length`` ``a``s (each
  extra ``a`` doubles a backtracking engine's work). While it runs, session B sends
  ``session/set_mode`` requests back to back for ``--probe`` seconds (1): the *server stall* is
  the longest of their round trips (a healthy server answers in milliseconds). Then A is
  cancelled: the *cancel latency* is the time to A's ``cancelled`` answer, and *busy after
  cancel* the time until the sidecar's CPU use drops to idle (the search really stopped).
- **Long line**: grep over one file holding a ``--long-mib`` MiB line: time and growth of the
  sidecar's peak RSS.

``--baseline REV`` runs the same against git revision ``REV``'s ``acp_sidecar`` (exported to
a temporary directory) first, for a figure beside each. The old engine may stall for many
seconds: keep ``--length`` modest (25: about 5 s a line with ``re``).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY))

from benchmarks.sidecar_process import (  # noqa: E402
    Pipes,
    export_revision,
    peak_rss,
    start_sidecar,
)

PATTERN = "(a|a)+$"


class Client(Pipes):
    """A minimal ACP client: responses matched to requests by id, updates counted."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        super().__init__(process)
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.cards: asyncio.Queue[str] = asyncio.Queue()
        self.reader = asyncio.ensure_future(self._read())
        self.sending: set[asyncio.Future[None]] = set()

    async def _read(self) -> None:
        while line := await self.stdout.readline():
            message = json.loads(line)
            if "id" in message and "method" not in message:
                self.pending.pop(message["id"]).set_result(message)
            elif message.get("method") == "session/update":
                update = message["params"]["update"]
                if update["sessionUpdate"] == "tool_call":
                    self.cards.put_nowait(message["params"]["sessionId"])

    def request(self, method: str, params: dict[str, Any]) -> asyncio.Future[dict[str, Any]]:
        msg_id = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = future
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        sending = asyncio.ensure_future(self.write_message(message))
        self.sending.add(sending)
        sending.add_done_callback(self.sending.discard)
        return future

    async def result(self, method: str, params: dict[str, Any]) -> Any:
        response = await self.request(method, params)
        assert "result" in response, response
        return response["result"]

    async def session(self, cwd: str) -> str:
        result = await self.result("session/new", {"cwd": cwd, "mcpServers": []})
        session: str = result["sessionId"]
        return session

    def prompt(self, session: str, text: str) -> asyncio.Future[dict[str, Any]]:
        content = [{"type": "text", "text": text}]
        return self.request("session/prompt", {"sessionId": session, "prompt": content})


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def until_idle(pid: int, limit: float = 120.0) -> float:
    """Seconds until a 200 ms window in which ``pid`` used under 20 ms of CPU."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        before = cpu_seconds(pid)
        await asyncio.sleep(0.2)
        if cpu_seconds(pid) - before < 0.02:
            return time.monotonic() - started - 0.2
    return float("inf")


async def start(source: str, scratch: str) -> Client:
    empty = os.path.join(scratch, "empty-path")
    os.makedirs(empty, exist_ok=True)
    process = await start_sidecar(
        code=source,
        cwd=scratch,  # not the repository: ``-m`` puts the cwd first on sys.path
        env={"PATH": empty, "ACP_SIDECAR_STORE": os.path.join(scratch, "store")},
    )
    client = Client(process)
    await client.result("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    return client


async def stop(client: Client) -> None:
    client.stdin.close()
    try:
        await asyncio.wait_for(client.process.wait(), 5)
    except TimeoutError:
        client.process.kill()
        await client.process.wait()
    client.reader.cancel()


async def redos(source: str, workspace: str, scratch: str, probe: float) -> dict[str, float]:
    client = await start(source, scratch)
    try:
        slow, other = await client.session(workspace), await client.session(workspace)
        turn = client.prompt(slow, json.dumps({"pattern": PATTERN}).join(["/grep ", ""]))
        while await client.cards.get() != slow:
            pass
        rtts: list[float] = []
        began = time.monotonic()
        for mode in itertools.cycle(["read-only", "ask"]):
            if time.monotonic() - began >= probe or turn.done():
                break
            sent = time.monotonic()
            await client.result("session/set_mode", {"sessionId": other, "modeId": mode})
            rtts.append(time.monotonic() - sent)
        still_running = not turn.done()
        cancelled = time.monotonic()
        await client.write_message(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": slow}}
        )
        answer = await turn
        latency = time.monotonic() - cancelled
        busy = await until_idle(client.process.pid)
        return {
            "probes": len(rtts),
            "stall_max": max(rtts),
            "stall_median": statistics.median(rtts),
            "cancel": latency,
            "busy_after_cancel": latency + busy,
            "cancelled": float(answer["result"]["stopReason"] == "cancelled" and still_running),
        }
    finally:
        await stop(client)


async def long_line(source: str, workspace: str, scratch: str) -> dict[str, float]:
    client = await start(source, scratch)
    try:
        session = await client.session(workspace)
        pid = client.process.pid
        await client.prompt(session, '/glob {"pattern": "*"}')  # everything imported
        baseline = peak_rss(pid)
        started = time.monotonic()
        answer = await client.prompt(session, '/grep {"pattern": "needle"}')
        assert answer["result"]["stopReason"] == "end_turn", answer
        return {"seconds": time.monotonic() - started, "rss_growth": peak_rss(pid) - baseline}
    finally:
        await stop(client)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--length", type=int, default=25, help="a's per bad line")
    parser.add_argument("--lines", type=int, default=4, help="bad lines")
    parser.add_argument("--probe", type=float, default=1.0, help="seconds of probing")
    parser.add_argument("--long-mib", type=int, default=256, help="MiB of the long line")
    parser.add_argument("--baseline", metavar="REV", help="git revision to compare against")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        redos_tree = os.path.join(scratch, "redos")
        os.mkdir(redos_tree)
        with open(os.path.join(redos_tree, "bad.txt"), "w") as f:
            f.write(("a" * options.length + "!\n") * options.lines)
        long_tree = os.path.join(scratch, "long")
        os.mkdir(long_tree)
        with open(os.path.join(long_tree, "long.txt"), "wb") as f:
            f.write(b"needle ")
            for _ in range(options.long_mib):
                f.write(b"x" * (1 << 20))
            f.write(b"\nneedle\n")
        sources = {"this tree": str(REPOSITORY)}
        if options.baseline:
            old = os.path.join(scratch, "baseline")
            os.mkdir(old)
            sources = {options.baseline: export_revision(options.baseline, old), **sources}
        print(
            f"ReDoS: {PATTERN!r} over {options.lines} lines of {options.length} a's; "
            f"long line: {options.long_mib} MiB; pure-Python engine, over the wire"
        )
        for name, source in sources.items():
            found = await redos(source, redos_tree, scratch, options.probe)
            print(
                f"{name:>12}: server stall max {found['stall_max']:.3f} s "
                f"(median {found['stall_median'] * 1000:.1f} ms, {found['probes']:.0f} probes); "
                f"cancel latency {found['cancel']:.3f} s; busy after cancel "
                f"{found['busy_after_cancel']:.2f} s; cancelled mid-search: "
                f"{'yes' if found['cancelled'] else 'no'}"
            )
            line = await long_line(source, long_tree, scratch)
            print(
                f"{name:>12}: long line grep {line['seconds']:.2f} s, peak RSS growth "
                f"{line['rss_growth'] / (1 << 20):.0f} MiB"
            )


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    asyncio.run(main())
