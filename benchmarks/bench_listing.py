"""Benchmark: listing, resuming and loading stored sessions when logs are big or many.

Run: ``.venv/bin/python benchmarks/bench_listing.py [--prompt-mb 60] [--line-mb 80]
[--sessions 10000] [--runs 5] [--cases list,stall,resume,load,page,cli,cli-tty]
[--baseline REV]``

Three stores are written first, straight through :class:`acp_sidecar.store.SessionStore`:

- *big*: 20 ordinary sessions and one whose prompt is ``--prompt-mb`` MB of text (a pasted
  file: one line of the log);
- *line*: one session whose agent message is a single line of ``--line-mb`` MB;
- *many*: ``--sessions`` sessions of one short turn each.

Each case runs a real ``python -m acp_sidecar`` subprocess (or the CLI) and times it from the
request to its answer; every figure is the median of ``--runs``:

- ``list``: ``session/list`` on *big* (the first list of the process, then the later ones);
- ``stall``: how long a request unrelated to the store (``session/set_mode`` of no session,
  answered by its handler on the event loop) waits when sent just after a ``session/list``
  on *big*;
- ``resume``: ``session/resume`` of the big session (then ``session/close``, untimed);
- ``load``: ``session/load`` of the one-line session, replay included (then
  ``session/close``; a baseline without it loads the loaded session again);
- ``page``: ``session/list`` on *many*: its first page, then the page after it;
- ``cli``: ``acp-sidecar sessions --store MANY`` piped (every page, then the table), the
  whole process; ``cli-tty``: the same on a pseudo-terminal (200 columns, colours).

The baseline measured in the same run is that unrelated request's round trip on an idle
sidecar (``ping``); ``--baseline REV`` also runs every case with the ``acp_sidecar`` of git revision
``REV`` (``main``, say) on the same stores; a method it lacks shows ``n/a``. The machine is shared and noisy: trust medians
measured side by side.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import math
import os
import pty
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.sidecar_process import Pipes, export_revision, start_sidecar  # noqa: E402

CWD = "/work/project"
BIG = "big-session"
LINE = "one-line-session"
CASES = ("list", "stall", "resume", "load", "page", "cli", "cli-tty")
METHOD_NOT_FOUND = -32601


# -- the stores ----------------------------------------------------------------------------


def _turn(store: Any, session_id: str, prompt: str, answer: str, mtime: float) -> None:
    with store.create(session_id, CWD, mode="ask") as log:
        log.user_message([{"type": "text", "text": prompt}])
        log.agent_text(answer)
        log.end_turn("end_turn")
    os.utime(store.path_of(session_id), (mtime, mtime))


def build_stores(work: Path, prompt_mb: int, line_mb: int, sessions: int) -> dict[str, Path]:
    """The three stores (see the module docstring), below ``work``."""
    from acp_sidecar.store import SessionStore

    now = time.time()
    big = SessionStore(work / "big", fsync="never")
    for n in range(20):
        _turn(big, f"small-{n:02d}", f"question {n}", "an answer", now - 100 - n)
    _turn(big, BIG, "x" * (prompt_mb * 1_000_000), "read it", now)
    line = SessionStore(work / "line", fsync="never")
    _turn(line, LINE, "tell me everything", "y" * (line_mb * 1_000_000), now)
    many = SessionStore(work / "many", fsync="never")
    for n in range(sessions):
        _turn(many, f"s{n:06d}", f"task number {n}: fix the bug", "done", now - n)
    return {"big": big.directory, "line": line.directory, "many": many.directory}


# -- one sidecar ---------------------------------------------------------------------------


class Client(Pipes):
    """A raw NDJSON client that times requests (updates are read and dropped)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        super().__init__(process)
        self.early: dict[int, dict[str, Any]] = {}
        """Answers read while waiting for another one."""

    async def answer(self, msg_id: int) -> dict[str, Any]:
        if msg_id in self.early:
            return self.early.pop(msg_id)
        while True:
            line = await self.stdout.readline()
            if not line:
                raise EOFError("the sidecar closed its output")
            if b'"method"' in line[:80]:
                continue  # a notification (replayed history, commands)
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == msg_id:
                return message
            self.early[message["id"]] = message

    async def timed(self, method: str, params: dict[str, Any]) -> float:
        """Seconds from the request to its answer; NaN when the method does not exist (a
        baseline older than it)."""
        start = time.perf_counter()
        message = await self.answer(await self.send_request(method, params))
        elapsed = time.perf_counter() - start
        if message.get("error", {}).get("code") == METHOD_NOT_FOUND:
            return math.nan
        if method != PING_METHOD and "result" not in message:
            raise RuntimeError(f"{method}: {message}")
        return elapsed


async def with_sidecar(code: Path, store: Path, work: Callable[[Client], Awaitable[None]]) -> None:
    process = await start_sidecar("--store", str(store), code=code)
    client = Client(process)
    await client.timed("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    try:
        await work(client)
    finally:
        client.stdin.close()
        await process.wait()


PING_METHOD = "session/set_mode"
PING: dict[str, Any] = {"sessionId": "no-such-session", "modeId": "ask"}
"""A request unrelated to the store: its handler runs on the event loop and answers at once
with ``-32002`` (no such session)."""


async def case_list(code: Path, stores: dict[str, Path], runs: int) -> dict[str, float]:
    figures: dict[str, list[float]] = {"ping": [], "first list": [], "later lists": []}

    async def work(client: Client) -> None:
        for _ in range(runs):
            figures["ping"].append(await client.timed(PING_METHOD, PING))
        figures["first list"].append(await client.timed("session/list", {}))
        for _ in range(runs):
            figures["later lists"].append(await client.timed("session/list", {}))

    await with_sidecar(code, stores["big"], work)
    return {name: statistics.median(values) for name, values in figures.items()}


async def case_stall(code: Path, stores: dict[str, Path], runs: int) -> dict[str, float]:
    waits: list[float] = []

    async def work(client: Client) -> None:
        for _ in range(runs):
            listing = await client.send_request("session/list", {})
            start = time.perf_counter()
            await client.answer(await client.send_request(PING_METHOD, PING))
            waits.append(time.perf_counter() - start)
            await client.answer(listing)

    await with_sidecar(code, stores["big"], work)
    return {"ping during a list": statistics.median(waits)}


async def case_resume(code: Path, stores: dict[str, Path], runs: int) -> dict[str, float]:
    times: list[float] = []
    params = {"sessionId": BIG, "cwd": CWD, "mcpServers": []}

    async def work(client: Client) -> None:
        for _ in range(runs):
            times.append(await client.timed("session/resume", params))
            await client.timed("session/close", {"sessionId": BIG})

    await with_sidecar(code, stores["big"], work)
    return {"resume big session": statistics.median(times)}


async def case_load(code: Path, stores: dict[str, Path], runs: int) -> dict[str, float]:
    times: list[float] = []
    params = {"sessionId": LINE, "cwd": CWD, "mcpServers": []}

    async def work(client: Client) -> None:
        for _ in range(runs):
            times.append(await client.timed("session/load", params))
            await client.timed("session/close", {"sessionId": LINE})

    await with_sidecar(code, stores["line"], work)
    return {"load one-line log": statistics.median(times)}


async def case_page(code: Path, stores: dict[str, Path], runs: int) -> dict[str, float]:
    figures: dict[str, list[float]] = {"first page": [], "next page": []}

    async def work(client: Client) -> None:
        for _ in range(runs):
            msg_id = await client.send_request("session/list", {})
            start = time.perf_counter()
            first = await client.answer(msg_id)
            figures["first page"].append(time.perf_counter() - start)
            cursor = first["result"]["nextCursor"]
            figures["next page"].append(await client.timed("session/list", {"cursor": cursor}))

    await with_sidecar(code, stores["many"], work)
    return {name: statistics.median(values) for name, values in figures.items()}


async def case_cli(code: Path, stores: dict[str, Path], runs: int) -> dict[str, float]:
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "acp_sidecar",
            "sessions",
            "--store",
            str(stores["many"]),
            stdout=asyncio.subprocess.DEVNULL,
            cwd=code,
            env={**os.environ, "PYTHONPATH": str(code)},
        )
        if await process.wait() != 0:
            raise RuntimeError("acp-sidecar sessions failed")
        times.append(time.perf_counter() - start)
    return {"acp-sidecar sessions": statistics.median(times)}


def _in_a_terminal(code: Path, store: Path) -> float:
    """``acp-sidecar sessions`` on a pseudo-terminal (200 columns, colours), read to its end."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "acp_sidecar", "sessions", "--store", str(store)],
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=subprocess.DEVNULL,
        cwd=code,
        env={**os.environ, "PYTHONPATH": str(code), "TERM": "xterm-256color"},
    )
    os.close(terminal)
    try:
        while os.read(controller, 1 << 16):
            pass
    except OSError:  # EIO: the terminal's other end closed
        pass
    finally:
        os.close(controller)
    if process.wait() != 0:
        raise RuntimeError("acp-sidecar sessions failed")
    return time.perf_counter() - start


async def case_cli_tty(code: Path, stores: dict[str, Path], runs: int) -> dict[str, float]:
    times = [await asyncio.to_thread(_in_a_terminal, code, stores["many"]) for _ in range(runs)]
    return {"sessions in a terminal": statistics.median(times)}


RUNNERS: dict[str, Callable[[Path, dict[str, Path], int], Awaitable[dict[str, float]]]] = {
    "list": case_list,
    "stall": case_stall,
    "resume": case_resume,
    "load": case_load,
    "page": case_page,
    "cli": case_cli,
    "cli-tty": case_cli_tty,
}


# -- the run -------------------------------------------------------------------------------


async def run(options: argparse.Namespace) -> None:
    cases = [case for case in options.cases.split(",") if case]
    unknown = set(cases) - set(CASES)
    if unknown:
        raise SystemExit(f"unknown cases: {', '.join(sorted(unknown))} (known: {CASES})")
    with tempfile.TemporaryDirectory(prefix="bench-listing-") as scratch:
        work = Path(scratch)
        start = time.perf_counter()
        stores = build_stores(work, options.prompt_mb, options.line_mb, options.sessions)
        print(
            f"stores: a {options.prompt_mb} MB prompt among 20 sessions; one {options.line_mb} "
            f"MB line; {options.sessions:,} sessions (written in "
            f"{time.perf_counter() - start:.1f} s)"
        )
        codes = {"this tree": ROOT}
        if options.baseline:
            (work / "baseline").mkdir()
            codes[options.baseline] = Path(
                export_revision(options.baseline, str(work / "baseline"))
            )
        print(f"runs: {options.runs} per figure (medians, seconds)\n")
        print(f"{'figure':<24}" + "".join(f"{name:>14}" for name in codes))
        for case in cases:
            results = [await RUNNERS[case](code, stores, options.runs) for code in codes.values()]
            for figure in results[0]:
                print(f"{figure:<24}" + "".join(_shown(r[figure]) for r in results))


def _shown(seconds: float) -> str:
    return f"{'n/a':>14}" if math.isnan(seconds) else f"{seconds:>14.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompt-mb", type=int, default=60)
    parser.add_argument("--line-mb", type=int, default=80)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--baseline", metavar="REV", help="git revision to compare against")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    main()
