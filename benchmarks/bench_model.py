"""Benchmark: the model driver's overhead per streamed token.

Run: ``.venv/bin/python benchmarks/bench_model.py [--deltas 20000] [--runs 5]``

A scripted OpenAI-compatible server (``tests/agent/model/fake_openai.py``, on 127.0.0.1, in
its own thread and event loop) answers each request with N small text deltas (``data:
{...}`` SSE chunks, written as fast as the socket takes them) and ``[DONE]``. Measured, per
run, from the moment the server writes the answer's first byte (``time.perf_counter`` is
process-wide):

- driver: until ``ModelDriver.run_turn`` returns, with a ``send`` that serialises each update
  as the wire does (``to_wire(SessionNotification(...))`` then ``json.dumps``);
- baseline, in the same run: until a bare ``openai`` client loop (``async for chunk in
  stream``, reading ``choices[0].delta.content``) has consumed the same stream.

The two alternate, after one warm-up of each. Printed: medians, deltas per second, and the
ratio driver / baseline. Goal (issue 7): <= 1.5x.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

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
from tests.agent.model.fake_openai import Reply, say, serve_in_thread, stop  # noqa: E402

SESSION = "sess_bench"


class WireSink:
    """``turn.send`` as the server does it, minus the pipe: serialise every update."""

    def __init__(self) -> None:
        self.updates = 0
        self.bytes = 0

    async def send(self, update: SessionUpdate) -> None:
        line = json.dumps(to_wire(SessionNotification(session_id=SESSION, update=update)))
        self.updates += 1
        self.bytes += len(line)


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
        cards=CardContext(cwd="/work"),
        policy=SessionPolicy(mode="auto"),
        send=sink.send,
        asker=client,
        signal=signal,
    )
    return Turn(
        session_id=SESSION,
        cwd="/work",
        prompt=(TextContentBlock(text="write a lot"),),
        signal=signal,
        send=sink.send,
        client=client,
        scope=scope,
    )


def stream_reply(deltas: int) -> Reply:
    return Reply([*say(*(f"tok{i % 10} " for i in range(deltas))), stop()])


async def run_driver(driver: ModelDriver, server: Any, deltas: int) -> float:
    server.script(stream_reply(deltas))
    sink = WireSink()
    stop_reason = await driver.run_turn(make_turn(sink))
    elapsed: float = time.perf_counter() - server.first_byte_at[-1]
    assert stop_reason == "end_turn", stop_reason
    assert sink.updates == deltas, (sink.updates, deltas)
    return elapsed


async def run_bare(client: Any, server: Any, deltas: int) -> float:
    server.script(stream_reply(deltas))
    stream = await client.chat.completions.create(
        model="bench-model",
        messages=[{"role": "user", "content": "write a lot"}],
        stream=True,
    )
    received = 0
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            received += 1
    elapsed: float = time.perf_counter() - server.first_byte_at[-1]
    assert received == deltas, (received, deltas)
    return elapsed


async def bench(deltas: int, runs: int) -> None:
    import openai

    with serve_in_thread() as server:
        registry = ToolRegistry()
        install_policy(registry)
        config = ModelConfig(model="bench-model", base_url=server.base_url, api_key="bench")
        driver = ModelDriver(config, registry)
        client = openai.AsyncOpenAI(api_key="bench", base_url=server.base_url)
        await run_driver(driver, server, deltas)  # warm-up: imports, connections
        await run_bare(client, server, deltas)
        driver_times: list[float] = []
        bare_times: list[float] = []
        for _ in range(runs):
            driver_times.append(await run_driver(driver, server, deltas))
            bare_times.append(await run_bare(client, server, deltas))
        await driver.aclose()
        await client.close()
    driver_median = statistics.median(driver_times)
    bare_median = statistics.median(bare_times)
    print(f"openai {openai.__version__}, {deltas} text deltas per answer, {runs} runs (medians)")
    print(
        f"  bare openai client loop : {bare_median * 1000:8.1f} ms  "
        f"({deltas / bare_median:,.0f} deltas/s)"
    )
    print(
        f"  ModelDriver.run_turn    : {driver_median * 1000:8.1f} ms  "
        f"({deltas / driver_median:,.0f} deltas/s, each sent as a serialised session/update)"
    )
    print(f"  ratio driver / bare     : {driver_median / bare_median:.2f}x   (goal <= 1.5x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(bench(args.deltas, args.runs))


if __name__ == "__main__":
    main()
