"""Soak: the session store under SIGKILL and under thousands of sessions.

Run: ``.venv/bin/python benchmarks/soak_store.py [--trials 130] [--sessions 10000]``

(a) **SIGKILL trials.** Each trial starts a sidecar on one store, loads the previous trial's
session (it must load: the kernel dropped the dead process's lock), then in a new session
runs two turns to completion (``/read`` and a ``!echo``) and starts a third, a long ``!``
command, and SIGKILLs the sidecar after its first update plus a random 0-200 ms. A record is
*committed* when the ``session/prompt`` that produced it was answered: by then its turn's
``turn_end`` is written and (fsync policy ``turn``, the default) synced — see
``acp_sidecar/store/writer.py``. The trial reads the log back and counts the committed
records missing (``user_message``, ``tool_call``, ``tool_result``, ``turn_end`` of each answered
turn). Goal: 0 lost, 0 failed loads.

(b) **Sessions before EMFILE.** One sidecar at the default ``RLIMIT_NOFILE`` (``--nofile``,
1024 as on most Linux systems) creates
``--sessions`` sessions and runs ``/read`` in each; it counts failed turns, sessions whose user
was told they are not recorded, logs missing their records afterwards, and samples the
sidecar's open descriptors (``/proc/PID/fd``) for the peak; then times one ``session/list``
page, and a second sidecar on the same store tries to resume and to delete the oldest sessions
(their logs released long ago, the sessions still the first one's: every attempt must be
refused); a ``!`` command runs at the end.
The baseline beside it is the descriptor limit: before logs were held in a bounded set, every
session kept one descriptor for the life of the process, so the peak grew with the sessions
and passed the limit at about 1,000.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from acp_sidecar.server.held import MAX_HELD, MIN_HELD  # noqa: E402
from acp_sidecar.store import SessionLog  # noqa: E402
from benchmarks.sidecar_process import Pipes, start_sidecar  # noqa: E402

CODE = ROOT
"""The checkout the sidecar runs from (``--code``: e.g. an older commit, for a baseline)."""
NOT_RECORDED = "this session is not being recorded"
LONG_COMMAND = "!for i in $(seq 1 100000); do echo line $i; sleep 0.002; done"


class Client(Pipes):
    """A minimal NDJSON client of one sidecar subprocess."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        super().__init__(process)
        self.warnings = 0
        self.updates = 0
        self.last_status = ""
        """The status of the last tool call update that carried one."""

    @classmethod
    async def start(cls, store: Path, nofile: int = 0) -> Client:
        def limit() -> None:
            if nofile:
                _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))

        return cls(await start_sidecar("--store", str(store), code=CODE, preexec_fn=limit))

    async def receive(self) -> dict[str, Any]:
        line = await asyncio.wait_for(self.stdout.readline(), 60)
        if not line:
            raise EOFError("the sidecar closed its output")
        message: dict[str, Any] = json.loads(line)
        if message.get("method") == "session/update":
            self.updates += 1
            update = message["params"]["update"]
            if update.get("sessionUpdate") == "tool_call_update" and "status" in update:
                self.last_status = update["status"]
            if update.get("sessionUpdate") == "agent_message_chunk":
                self.warnings += NOT_RECORDED in update["content"].get("text", "")
        return message

    async def response(self, msg_id: int) -> dict[str, Any]:
        while True:
            message = await self.receive()
            if "method" not in message and message.get("id") == msg_id:
                return message

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await self.response(await self.send_request(method, params))

    async def initialize(self) -> None:
        await self.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    async def new_session(self, cwd: str) -> str:
        result = await self.request("session/new", {"cwd": cwd, "mcpServers": []})
        return str(result["result"]["sessionId"])

    async def prompt(self, session: str, text: str) -> dict[str, Any]:
        prompt = [{"type": "text", "text": text}]
        return await self.request("session/prompt", {"sessionId": session, "prompt": prompt})

    async def close(self) -> int:
        self.stdin.close()
        return await asyncio.wait_for(self.process.wait(), 30)


def kinds_of(path: Path) -> list[str]:
    """The record types of a log (none when the session never got one)."""
    try:
        with SessionLog(path) as log:
            return [type(record).__name__ for record in log]
    except FileNotFoundError:
        return []


TURN = ["UserMessageRecord", "ToolCallRecord", "ToolResultRecord", "TurnEndRecord"]


def lost_of_answered_turns(kinds: list[str], answered: int) -> int:
    """Records of the first ``answered`` turns missing from ``kinds`` (each turn as TURN)."""
    lost = 0
    position = 0
    for _ in range(answered):
        for kind in TURN:
            try:
                position = kinds.index(kind, position) + 1
            except ValueError:
                lost += 1
    return lost


async def sigkill_trials(trials: int, work: Path) -> None:
    store = work / "kill-store"
    cwd = work / "kill-cwd"
    cwd.mkdir()
    (cwd / "f.txt").write_text("hello\n")
    lost = failed_loads = failed_turns = 0
    previous: str | None = None
    started = time.perf_counter()
    for _trial in range(trials):
        client = await Client.start(store)
        await client.initialize()
        if previous is not None:
            params = {"sessionId": previous, "cwd": str(cwd), "mcpServers": []}
            if "result" not in await client.request("session/load", params):
                failed_loads += 1
        session = await client.new_session(str(cwd))
        await client.request("session/set_mode", {"sessionId": session, "modeId": "auto"})
        answered = 0
        for text in ("/read f.txt", "!echo committed"):
            response = await client.prompt(session, text)
            if response.get("result", {}).get("stopReason") == "end_turn":
                answered += 1
            else:
                failed_turns += 1
        await client.send_request(
            "session/prompt",
            {"sessionId": session, "prompt": [{"type": "text", "text": LONG_COMMAND}]},
        )
        while True:  # the long command's card is open
            message = await client.receive()
            kind = message.get("params", {}).get("update", {}).get("sessionUpdate", "")
            if message.get("method") == "session/update" and kind.startswith("tool_call"):
                break
        await asyncio.sleep(random.uniform(0, 0.2))
        client.process.kill()
        await client.process.wait()
        lost += lost_of_answered_turns(kinds_of(store / f"{session}.jsonl"), answered)
        previous = session
    elapsed = time.perf_counter() - started
    print(f"(a) SIGKILL trials: {trials} (in {elapsed:.0f} s)")
    print(f"    committed records lost: {lost}   (goal 0)")
    print(f"    loads of the killed session that failed: {failed_loads}   (goal 0)")
    print(f"    answered turns that did not end_turn: {failed_turns}")


async def count_fds(pid: int, peak: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            peak[0] = max(peak[0], len(os.listdir(f"/proc/{pid}/fd")))
        except OSError:
            return
        await asyncio.sleep(0.02)


async def taken_elsewhere(
    store: Path, cwd: Path, sessions: list[str], nofile: int
) -> tuple[int, int]:
    """How many of another sidecar's ``session/resume`` and ``session/delete`` of ``sessions``
    (open in the first one, their logs long released) were refused, of how many tried."""
    other = await Client.start(store, nofile)
    await other.initialize()
    refused = tried = 0
    for session in sessions:
        for method, params in (
            ("session/resume", {"sessionId": session, "cwd": str(cwd), "mcpServers": []}),
            ("session/delete", {"sessionId": session}),
        ):
            answer = await other.request(method, params)
            tried += 1
            refused += "another acp-sidecar process" in answer.get("error", {}).get("message", "")
    await other.close()
    return refused, tried


async def many_sessions(count: int, work: Path, nofile: int) -> None:
    store = work / "many-store"
    cwd = work / "many-cwd"
    cwd.mkdir()
    (cwd / "f.txt").write_text("hello\n")
    soft = nofile or resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    client = await Client.start(store, nofile)
    peak = [0]
    stop = asyncio.Event()
    sampler = asyncio.create_task(count_fds(client.process.pid, peak, stop))
    await client.initialize()
    failed = 0
    sessions: list[str] = []
    started = time.perf_counter()
    for _ in range(count):
        session = await client.new_session(str(cwd))
        sessions.append(session)
        response = await client.prompt(session, "/read f.txt")
        if response.get("result", {}).get("stopReason") != "end_turn":
            failed += 1
    elapsed = time.perf_counter() - started
    listed = time.perf_counter()
    await client.request("session/list", {"cwd": str(cwd)})
    page_seconds = time.perf_counter() - listed
    refused, tried = await taken_elsewhere(store, cwd, sessions[: min(20, count)], nofile)
    await client.request("session/set_mode", {"sessionId": sessions[0], "modeId": "auto"})
    shell = await client.prompt(sessions[0], "!echo ok")
    answered = shell.get("result", {}).get("stopReason") == "end_turn"
    shell_ok = answered and client.last_status == "completed"
    stop.set()
    await sampler
    status = await client.close()
    held = max(MIN_HELD, min(MAX_HELD, soft // 4))  # default_bound() in the sidecar
    unrecorded = sum(
        1
        for session in sessions
        if lost_of_answered_turns(kinds_of(store / f"{session}.jsonl"), 1) != 0
    )
    print(f"(b) sessions at RLIMIT_NOFILE {soft}: {count} (in {elapsed:.0f} s)")
    print(f"    failed turns: {failed}   told 'not recorded': {client.warnings}")
    print(f"    logs missing records: {unrecorded}   (goal 0)")
    print(f"    peak open descriptors: {peak[0]}   (logs held at most: {held})")
    print(
        f"    another sidecar's resume or delete of the oldest (released) sessions refused: "
        f"{refused} of {tried}   (goal: all)"
    )
    print(f"    session/list, the first page of {count}: {page_seconds:.3f} s")
    print(f"    baseline: one descriptor per session would need {count} (limit {soft})")
    outcome = "ok" if shell_ok else f"FAILED (card {client.last_status or 'none'})"
    print(f"    a `!` command afterwards: {outcome}; exit {status}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=130)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument(
        "--nofile",
        type=int,
        default=1024,
        help="the sidecar's soft RLIMIT_NOFILE in (b): Linux's usual default (0: inherit)",
    )
    parser.add_argument(
        "--code",
        type=Path,
        default=ROOT,
        help="run the sidecar from this checkout (e.g. `git archive` of an older commit)",
    )
    args = parser.parse_args()
    global CODE
    CODE = args.code.resolve()
    with tempfile.TemporaryDirectory(prefix="soak-store-") as work:
        if args.trials:
            await sigkill_trials(args.trials, Path(work))
        if args.sessions:
            await many_sessions(args.sessions, Path(work), args.nofile)


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    asyncio.run(main())
