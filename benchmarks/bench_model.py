"""Benchmark: the model driver's overhead per streamed token, through the real sidecar.

Run: ``.venv/bin/python benchmarks/bench_model.py [--deltas 20000] [--runs 7]``

A scripted OpenAI-compatible server (``tests/agent/model/fake_openai.py``, on 127.0.0.1, in
a process of its own) answers every request with N small text deltas (``data: {...}`` SSE
chunks, encoded once up front and written as fast as the socket takes them) and ``[DONE]``.
Each answer's first byte is stamped with ``CLOCK_MONOTONIC``, which every process on the
machine shares, and reported to this process. Measured per run, from that first byte:

- **sidecar** (issue 7's figure): ``python -m acp_sidecar --model bench --base-url URL
  --store TMP --fsync never`` as a subprocess, driven over its pipes by a minimal NDJSON
  client that parses every line it reads; until the client has read the answer to
  ``session/prompt`` (a fresh ``session/new`` per run, so every request carries the same
  empty history; the session logs go to a temporary directory, never the user's);
- **in-process**: ``ModelDriver.run_turn`` in this process, its ``send`` serialising each
  update as the wire does (``to_wire(SessionNotification(...))`` then ``json.dumps``): the
  driver's own share of the cost, without the pipe and the server;
- **bare**, the baseline, in the same run: a bare ``openai`` client loop (``async for
  chunk in stream``, reading ``choices[0].delta.content``) consuming the same stream.

Each kind warms up once (imports, connections), then the three alternate, rotating which
goes first. Printed: medians, deltas per second, and the ratios to the bare loop. Goal
(issue 7): sidecar <= 1.5x bare.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from acp_sidecar.agent.driver import Turn  # noqa: E402
from acp_sidecar.agent.model import ModelConfig, ModelDriver  # noqa: E402
from acp_sidecar.bridge.context import CardContext  # noqa: E402
from acp_sidecar.bridge.modes import SessionPolicy  # noqa: E402
from acp_sidecar.bridge.policy import CallScope, install_policy  # noqa: E402
from acp_sidecar.protocol import (  # noqa: E402
    ClientCapabilities,
    SessionNotification,
    SessionUpdate,
    TextContentBlock,
    to_wire,
)
from acp_sidecar.tools.cancel import CancelSignal  # noqa: E402
from acp_sidecar.tools.registry import ToolRegistry  # noqa: E402
from tests.agent.model.fake_openai import (  # noqa: E402
    Reply,
    ScriptedOpenAI,
    encoded,
    say,
    stop,
)

SESSION = "sess_bench"
PROMPT_TEXT = "write a lot"
REPLIES = 10_000
"""Answers the server process has scripted (far more than a run of the benchmark asks)."""


def monotonic() -> float:
    """The machine-wide clock both the server and this process stamp with."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


# -- the server, in its own process -------------------------------------------------------


def stream_reply(deltas: int) -> Reply:
    return encoded(Reply([*say(*(f"tok{i % 10} " for i in range(deltas))), stop()]))


async def serve(deltas: int) -> None:
    """Serve until stdin closes: print the base URL, then one first-byte stamp per answer."""
    reply = stream_reply(deltas)
    out = sys.stdout
    async with ScriptedOpenAI() as server:
        server.script(*([reply] * REPLIES))

        def stamp() -> None:
            out.write(f"{monotonic()!r}\n")
            out.flush()

        server.on_first_byte = stamp
        out.write(server.base_url + "\n")
        out.flush()
        await asyncio.to_thread(sys.stdin.read)


class FakeServer:
    """The server process, and the first-byte stamps it reports."""

    def __init__(self, deltas: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--deltas", str(deltas)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
            text=True,
        )
        assert self.process.stdout is not None
        self._stdout = self.process.stdout
        self.base_url = self._stdout.readline().strip()
        if not self.base_url.startswith("http://"):
            raise RuntimeError("the fake server did not start")

    def first_byte(self) -> float:
        """When the last answer's first byte went out (blocks until it has)."""
        return float(self._stdout.readline())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(10)


# -- the sidecar, over its pipes ----------------------------------------------------------


class Sidecar:
    """``python -m acp_sidecar`` with a model, and a blocking NDJSON client on its pipes."""

    def __init__(self, base_url: str, store: str) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ACP_SIDECAR_", "OPENAI_"))}
        env |= {"OPENAI_API_KEY": "bench", "ACP_SIDECAR_STORE": store}
        argv = [sys.executable, "-m", "acp_sidecar", "--model", "bench-model"]
        argv += ["--base-url", base_url, "--store", store, "--fsync", "never"]
        self.process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT, env=env
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in: IO[bytes] = self.process.stdin
        self._out: IO[bytes] = self.process.stdout
        self._ids = 0
        self.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    def request(self, method: str, params: dict[str, Any]) -> tuple[Any, int]:
        """Send a request; read every line until its answer: (result, message chunks read).

        Only ``agent_message_chunk`` updates are counted: a first prompt also gets the
        session's title (a ``session_info_update``) after its turn."""
        self._ids += 1
        message = {"jsonrpc": "2.0", "id": self._ids, "method": method, "params": params}
        self._in.write(json.dumps(message).encode() + b"\n")
        self._in.flush()
        updates = 0
        readline = self._out.readline
        loads = json.loads
        while line := readline():
            received = loads(line)
            if received.get("method") == "session/update":
                updates += received["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
            elif received.get("id") == self._ids:
                if "result" not in received:
                    raise RuntimeError(f"{method} failed: {received}")
                return received["result"], updates
        raise RuntimeError("the sidecar closed its output")

    def prompt(self) -> tuple[float, int, str]:
        """One turn in a new session: (when its answer was read, updates, stop reason)."""
        session, _ = self.request("session/new", {"cwd": str(ROOT), "mcpServers": []})
        prompt = [{"type": "text", "text": PROMPT_TEXT}]
        result, updates = self.request(
            "session/prompt", {"sessionId": session["sessionId"], "prompt": prompt}
        )
        return monotonic(), updates, result["stopReason"]

    def close(self) -> None:
        self._in.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def run_sidecar(sidecar: Sidecar, server: FakeServer, deltas: int) -> float:
    answered, updates, stop_reason = sidecar.prompt()
    elapsed = answered - server.first_byte()
    assert stop_reason == "end_turn", stop_reason
    assert updates == deltas, (updates, deltas)
    return elapsed


# -- in this process ----------------------------------------------------------------------


class WireSink:
    """``turn.send`` as the server does it, minus the pipe: serialise every update."""

    def __init__(self) -> None:
        self.updates = 0

    async def send(self, update: SessionUpdate) -> None:
        json.dumps(to_wire(SessionNotification(session_id=SESSION, update=update)))
        self.updates += 1


class NoClient:
    capabilities = ClientCapabilities()

    async def request_permission(self, *_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError

    async def read_text_file(self, *_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError

    async def write_text_file(self, *_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError


def make_turn(sink: WireSink) -> Turn:
    signal = CancelSignal()
    client = NoClient()
    scope = CallScope(
        session_id=SESSION,
        cards=CardContext(cwd=str(ROOT)),
        policy=SessionPolicy(mode="auto"),
        send=sink.send,
        asker=client,
        signal=signal,
    )
    return Turn(
        session_id=SESSION,
        cwd=str(ROOT),
        prompt=(TextContentBlock(text=PROMPT_TEXT),),
        signal=signal,
        send=sink.send,
        client=client,
        scope=scope,
    )


async def run_driver(driver: ModelDriver, server: FakeServer, deltas: int) -> float:
    sink = WireSink()
    stop_reason = await driver.run_turn(make_turn(sink))
    elapsed = monotonic() - server.first_byte()
    assert stop_reason == "end_turn", stop_reason
    assert sink.updates == deltas, (sink.updates, deltas)
    return elapsed


async def run_bare(client: Any, server: FakeServer, deltas: int) -> float:
    stream = await client.chat.completions.create(
        model="bench-model",
        messages=[{"role": "user", "content": PROMPT_TEXT}],
        stream=True,
    )
    received = 0
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            received += 1
    elapsed = monotonic() - server.first_byte()
    assert received == deltas, (received, deltas)
    return elapsed


# -- the comparison -----------------------------------------------------------------------


async def bench(deltas: int, runs: int) -> None:
    import openai

    server = FakeServer(deltas)
    store = tempfile.TemporaryDirectory(prefix="bench-model-sessions-")
    sidecar = Sidecar(server.base_url, store.name)
    registry = ToolRegistry()
    install_policy(registry)
    config = ModelConfig(model="bench-model", base_url=server.base_url, api_key="bench")
    driver = ModelDriver(config, lambda: registry)
    client = openai.AsyncOpenAI(api_key="bench", base_url=server.base_url)
    kinds: dict[str, Callable[[], Awaitable[float]]] = {
        "bare": lambda: run_bare(client, server, deltas),
        "in-process": lambda: run_driver(driver, server, deltas),
        "sidecar": lambda: asyncio.to_thread(run_sidecar, sidecar, server, deltas),
    }
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    try:
        for run in kinds.values():
            await run()  # warm-up: imports, connections
        names = list(kinds)
        for index in range(runs):
            shift = index % len(names)
            for kind in names[shift:] + names[:shift]:
                times[kind].append(await kinds[kind]())
    finally:
        sidecar.close()
        await driver.aclose()
        await client.close()
        server.close()
        store.cleanup()
    medians = {kind: statistics.median(values) for kind, values in times.items()}
    bare = medians["bare"]
    print(f"openai {openai.__version__}, {deltas} text deltas per answer, {runs} runs (medians)")
    print("from the server's first byte of the streamed answer until:")
    rows = [
        ("bare", "the bare openai client loop has read the last delta"),
        ("in-process", "ModelDriver.run_turn returns (each update serialised)"),
        ("sidecar", "the client has read the session/prompt answer (every line parsed)"),
    ]
    for kind, what in rows:
        median = medians[kind]
        ratio = "" if kind == "bare" else f"  {median / bare:.2f}x bare"
        print(
            f"  {kind:<10} {median * 1000:8.1f} ms  ({deltas / median:>9,.0f} deltas/s){ratio}"
            f"  - {what}"
        )
    print(f"  sidecar / bare: {medians['sidecar'] / bare:.2f}x   (goal <= 1.5x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.deltas))
        return
    asyncio.run(bench(args.deltas, args.runs))


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    main()
