"""Soak: daemons that commands start, ended with their calls; and what the cleanup costs.

Runs ``acp-sidecar`` (console driver, ``auto`` mode) as a subprocess and, for each trial, a
``!`` command that starts a double-forked ``setsid`` daemon (its pid written to a file) and
then ends normally, is cancelled (``session/cancel``), or times out. After the call's answer
the daemon gets :data:`SETTLE_S` to be gone; the report counts the daemons still running
(goal: 0) and the ones left as zombies.

The same run measures the median latency of a trivial call (``!true``: prompt sent → answer
received), with the cleanup as shipped and with the baseline — the sidecar started with its
per-call cleanup replaced (in this script only) by the process-group cleanup it had before:
SIGTERM, then SIGKILL, to the call's process group. The baseline's daemon counts show what
the cleanup fixes.

    .venv/bin/python benchmarks/soak_processes.py [--trials 90] [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from acp_sidecar.tools.builtin.shell import reaper  # noqa: E402
from acp_sidecar.tools.builtin.shell.reaper import CallProcesses, snapshot  # noqa: E402
from benchmarks.sidecar_process import Pipes, start_sidecar  # noqa: E402

SETTLE_S = 1.0
"""How long a daemon gets to be gone after its call's answer (the fix ends it before)."""
WARM_UP = 20
ENDINGS = ("normal", "cancel", "timeout")

BASELINE = """
import asyncio, contextlib, os, signal, sys
from acp_sidecar.tools.builtin.shell import reaper

def group_alive(pgid):
    for pid in [name for name in os.listdir("/proc") if name.isdigit()]:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat_file:
                fields = stat_file.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False

def kill_group(pgid, sig):
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)

async def end(self, grace):
    if not group_alive(self.leader):
        return
    kill_group(self.leader, signal.SIGTERM)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while loop.time() < deadline:
        await asyncio.sleep(0.02)
        if not group_alive(self.leader):
            return
    kill_group(self.leader, signal.SIGKILL)

def kill_now(self):
    if group_alive(self.leader):
        kill_group(self.leader, signal.SIGKILL)

reaper.CallProcesses.end = end
reaper.CallProcesses.kill_now = kill_now
from acp_sidecar.cli import main
sys.exit(main(sys.argv[1:]))
"""


class Sidecar(Pipes):
    """The sidecar on pipes, with just enough of a client for this soak."""

    @classmethod
    async def start(cls, store: Path, *, baseline: bool) -> Sidecar:
        program = ("-c", BASELINE) if baseline else ("-m", "acp_sidecar")
        return cls(await start_sidecar("--store", str(store), program=program))

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        return await self.answer(await self.send_request(method, params))

    async def answer(self, msg_id: int) -> Any:
        """Read until the answer to ``msg_id`` (updates are skipped)."""
        while True:
            line = await asyncio.wait_for(self.stdout.readline(), 60)
            if not line:
                raise RuntimeError("the sidecar closed its output")
            message = json.loads(line)
            if message.get("id") == msg_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message["result"]

    async def session(self, cwd: Path) -> str:
        result = await self.request("session/new", {"cwd": str(cwd), "mcpServers": []})
        session_id: str = result["sessionId"]
        await self.request("session/set_mode", {"sessionId": session_id, "modeId": "auto"})
        return session_id

    async def prompt(self, session_id: str, text: str) -> int:
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        return await self.send_request("session/prompt", params)

    async def close(self) -> None:
        self.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()


def state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return stat.rsplit(b")", 1)[1].split()[0].decode()


def daemon(pid_file: Path) -> str:
    return (
        f"(setsid sh -c 'echo $$ > {pid_file}.tmp && mv {pid_file}.tmp {pid_file}; "
        f"exec sleep 1000' &); until [ -e {pid_file} ]; do sleep 0.01; done"
    )


async def trial(sidecar: Sidecar, session: str, work: Path, n: int, ending: str) -> int:
    """One daemon-starting call ending as ``ending``; the daemon's pid."""
    pid_file = work / f"daemon-{n}.pid"
    start = daemon(pid_file)
    if ending == "normal":
        await sidecar.answer(await sidecar.prompt(session, f"!{start}; echo ok"))
    elif ending == "cancel":
        msg_id = await sidecar.prompt(session, f"!{start}; sleep 1000")
        while not pid_file.exists():
            await asyncio.sleep(0.01)
        await sidecar.write_message(
            {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}
        )
        await sidecar.answer(msg_id)
    else:
        arguments = {"command": f"{start}; sleep 1000", "timeout_ms": 500}
        await sidecar.answer(await sidecar.prompt(session, "/bash " + json.dumps(arguments)))
    return int(pid_file.read_text())


async def open_sidecar(work: Path, *, baseline: bool) -> tuple[Sidecar, str]:
    sidecar = await Sidecar.start(work / "store", baseline=baseline)
    await sidecar.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    return sidecar, await sidecar.session(work)


async def latencies(pairs: list[tuple[Sidecar, str]], calls: int) -> list[list[float]]:
    """Trivial-call latencies of each sidecar, taking turns (so both see the same machine),
    after :data:`WARM_UP` calls each that are not counted."""
    times: list[list[float]] = [[] for _ in pairs]
    for n in range(WARM_UP + calls):
        for (sidecar, session), kept in zip(pairs, times, strict=True):
            started = time.perf_counter()
            await sidecar.answer(await sidecar.prompt(session, "!true"))
            if n >= WARM_UP:
                kept.append(time.perf_counter() - started)
    return times


async def daemons(sidecar: Sidecar, session: str, work: Path, trials: int) -> dict[str, Any]:
    """Run the trials; the daemons left running and left as zombies, per ending."""
    left = dict.fromkeys(ENDINGS, 0)
    zombies = dict.fromkeys(ENDINGS, 0)
    pids: list[int] = []
    try:
        for n in range(trials):
            ending = ENDINGS[n % len(ENDINGS)]
            pid = await trial(sidecar, session, work, n, ending)
            pids.append(pid)
            deadline = time.monotonic() + SETTLE_S
            while state(pid) not in (None, "Z") and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            if state(pid) == "Z":
                zombies[ending] += 1
            elif state(pid) is not None:
                left[ending] += 1
    finally:
        await sidecar.close()
        for pid in pids:  # the baseline's leftovers
            if state(pid) not in (None, "Z"):
                os.kill(pid, signal.SIGKILL)
    return {"left": left, "zombies": zombies}


def report(name: str, times: list[float], figures: dict[str, Any], trials: int) -> None:
    per = trials // len(ENDINGS)
    left = ", ".join(f"{e} {figures['left'][e]}/{per}" for e in ENDINGS)
    zombies = sum(figures["zombies"].values())
    print(
        f"{name:<22} trivial call median {statistics.median(times) * 1000:5.1f} ms "
        f"(p90 {statistics.quantiles(times, n=10)[-1] * 1000:5.1f} ms) | daemons left "
        f"running: {left} | zombies: {zombies}"
    )


async def run(args: argparse.Namespace) -> None:
    trials = args.trials - args.trials % len(ENDINGS)
    print(
        f"{trials} daemon-starting calls per sidecar ({trials // len(ENDINGS)} each ending "
        f"normally, cancelled, timed out); {args.calls} trivial calls each, taking turns"
    )
    with tempfile.TemporaryDirectory(prefix="soak-processes-") as temp:
        shipped_dir, baseline_dir = Path(temp, "shipped"), Path(temp, "baseline")
        shipped_dir.mkdir()
        baseline_dir.mkdir()
        shipped = await open_sidecar(shipped_dir, baseline=False)
        baseline = await open_sidecar(baseline_dir, baseline=True)
        shipped_times, baseline_times = await latencies([shipped, baseline], args.calls)
        shipped_daemons = await daemons(*shipped, shipped_dir, trials)
        baseline_daemons = await daemons(*baseline, baseline_dir, trials)
    report("per-call cleanup", shipped_times, shipped_daemons, trials)
    report("baseline (group only)", baseline_times, baseline_daemons, trials)
    scan = CallProcesses()
    scan.started(os.getpid())
    rounds = 200
    count = len(snapshot() or {})
    for label, walk in (("whole /proc (baseline)", False), ("sidecar's tree", True)):
        reaper._tree_walk = walk
        started = time.perf_counter()
        for _ in range(rounds):
            scan.members()
        each = (time.perf_counter() - started) / rounds
        print(
            f"one scan for a call's processes, {label}: {each * 1000:.2f} ms "
            f"with {count} processes running"
        )
    reaper._tree_walk = False
    print(f"longest event-loop stall during a call's end: {await end_stall() * 1000:.1f} ms")


async def end_stall() -> float:
    """The longest the event loop stood still while a call ended (a 1 ms ticker beside it)."""
    call = CallProcesses()
    shell = await asyncio.create_subprocess_exec(
        "sh",
        "-c",
        "trap '' TERM; sleep 30",
        env=call.environment(dict(os.environ)),
        start_new_session=True,
    )
    call.started(shell.pid)
    await asyncio.sleep(0.1)
    gaps = [0.0]

    async def ticker() -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last - 0.001)
            last = now

    ticking = asyncio.create_task(ticker())
    await call.end(grace=1.0)
    ticking.cancel()
    await shell.wait()
    return max(gaps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=90, help="daemon-starting calls")
    parser.add_argument("--calls", type=int, default=200, help="trivial calls timed")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    main()
