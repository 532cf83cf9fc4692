"""Soak: the file tools' own disk I/O under attack, over the wire, with the figures printed.

Run: ``.venv/bin/python benchmarks/soak_files.py [--rounds 200] [--line-mib 1536]
[--appends 113] [--kills 20] [--write-mib 48]``

Each part runs a real ``python -m acp_sidecar`` subprocess (the console driver: prompts are
slash commands for the tools) in auto mode, in a temporary workspace:

1. **Swap race** — for ``--rounds`` rounds, ``write``, ``edit`` and ``read`` of ``d/f.txt``
   while a thread keeps swapping the directory ``d`` with a symlink to an outside directory.
   Prints the calls' outcomes and the escapes: reads that returned outside content, outside
   files overwritten, temporaries left outside. Every escape count must be 0.
2. **Gigantic line** — ``read`` of a sparse-ish file: 8 KiB of text, then a single line of
   ``--line-mib`` MiB (a hole, read back as NUL bytes after the binary sniff passed). Prints
   the sidecar's peak RSS before and after, and the read's time.
3. **Concurrent appends** — another process appends ``--appends`` lines (opening the file for
   each, like ``echo >>``) while ``edit`` keeps rewriting a counter line; prints the edits,
   those refused with FILE_CHANGED, and the appended lines lost (must be 0).
4. **Killed writes** — ``--kills`` times: a ``--write-mib`` (48) MiB ``write`` whose sidecar
   is SIGKILLed while its temporary exists; prints the temporaries present after the kills,
   after one more write at once (kept: a dead writer's temporary is stale only after ten
   minutes), and after one more write once they are that old (must be 0).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from acp_sidecar.tools.builtin.files.leftovers import DEAD_PID_SECONDS  # noqa: E402
from benchmarks.sidecar_process import MiB, Pipes, peak_rss, start_sidecar  # noqa: E402


class Sidecar(Pipes):
    """A sidecar subprocess with one session in auto mode, spoken to in raw NDJSON."""

    def __init__(self, process: asyncio.subprocess.Process, workspace: Path) -> None:
        super().__init__(process)
        self.workspace = workspace
        self.session = ""

    @classmethod
    async def start(cls, workspace: Path) -> Sidecar:
        process = await start_sidecar(env={"ACP_SIDECAR_STORE": str(workspace.parent / "store")})
        sidecar = cls(process, workspace)
        await sidecar.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        result = await sidecar.request("session/new", {"cwd": str(workspace), "mcpServers": []})
        sidecar.session = result["sessionId"]
        await sidecar.request("session/set_mode", {"sessionId": sidecar.session, "modeId": "auto"})
        return sidecar

    async def request(self, method: str, params: Any) -> Any:
        msg_id = await self.send_request(method, params)
        updates: list[dict[str, Any]] = []
        return (await self._until(msg_id, updates))["result"]

    async def _until(self, msg_id: int, updates: list[dict[str, Any]]) -> dict[str, Any]:
        while True:
            line = await self.stdout.readline()
            if not line:
                raise RuntimeError("the sidecar closed its output")
            message = json.loads(line)
            if message.get("method") == "session/update":
                updates.append(message["params"]["update"])
            elif message.get("id") == msg_id and "method" not in message:
                return dict(message)

    async def call(self, text: str) -> tuple[str, str]:
        """Run one slash command; the final card's status and text."""
        msg_id = await self.send_request(
            "session/prompt",
            {"sessionId": self.session, "prompt": [{"type": "text", "text": text}]},
        )
        updates: list[dict[str, Any]] = []
        await self._until(msg_id, updates)
        finals = [
            u
            for u in updates
            if u["sessionUpdate"] == "tool_call_update"
            and u.get("status") in ("completed", "failed")
        ]
        if not finals:
            # A prompt the console answered without a card (it could not read the command):
            # an outcome of its own, with what the console said.
            said = [
                u["content"].get("text", "")
                for u in updates
                if u["sessionUpdate"] == "agent_message_chunk"
            ]
            return "no card", "".join(said)
        final = finals[-1]
        texts = [c["content"]["text"] for c in final.get("content") or [] if c["type"] == "content"]
        return final["status"], "\n".join(texts)

    def start_prompt(self, text: str) -> asyncio.Task[int]:
        return asyncio.ensure_future(
            self.send_request(
                "session/prompt",
                {"sessionId": self.session, "prompt": [{"type": "text", "text": text}]},
            )
        )

    async def close(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()


def command(tool: str, **args: Any) -> str:
    return f"/{tool} {json.dumps(args)}"


# --- 1. the swap race -------------------------------------------------------------------------


def swapper(directory: Path, outside: Path, stop: threading.Event, swaps: list[int]) -> None:
    parked = directory.with_name(directory.name + ".parked")
    while not stop.is_set():
        try:
            os.rename(directory, parked)
        except OSError:
            time.sleep(0.0005)
            continue
        with contextlib.suppress(FileExistsError):
            os.symlink(outside, directory)
        swaps[0] += 1
        time.sleep(0.001)
        while True:
            if directory.is_symlink():
                directory.unlink()
            elif directory.exists():
                shutil.rmtree(directory, ignore_errors=True)
            try:
                os.rename(parked, directory)
                break
            except OSError:
                continue
        time.sleep(0.001)


REASONS = (
    ("changed while the call ran", "(PATH_CHANGED: swapped under the call)"),
    ("changed while it was being resolved", "(PATH_CHANGED: swapped under the call)"),
    ("outside the workspace", "(OUTSIDE_WORKSPACE: a link at check time)"),
    ("does not exist", "(NOT_FOUND: in the gap between swaps)"),
    ("was not found in", "(NO_MATCH: edited already)"),
    ("No such file or directory", "(IO_ERROR: its new directory removed by the swapper)"),
    ("changed on disk since it was read", "(FILE_CHANGED: swapped between read and write)"),
)


def why(result: str) -> str:
    """A short name for a failed call's reason."""
    for phrase, name in REASONS:
        if phrase in result:
            return name
    return result[:60]


async def swap_race(base: Path, rounds: int) -> None:
    workspace, outside = base / "race-ws", base / "race-outside"
    (workspace / "d").mkdir(parents=True)
    outside.mkdir()
    outside_text = "inside: the outside file\n"
    (outside / "f.txt").write_text(outside_text)
    (workspace / "d" / "f.txt").write_text("inside: start\n")
    outcomes: dict[str, int] = {}
    leaked_reads = reads = 0
    stop, swaps = threading.Event(), [0]
    sidecar = await Sidecar.start(workspace)
    thread = threading.Thread(target=swapper, args=(workspace / "d", outside, stop, swaps))
    thread.start()
    started = time.perf_counter()
    try:
        for round_ in range(rounds):
            for tool, text in (
                ("write", command("write", path="d/f.txt", content=f"inside: {round_}\n")),
                ("edit", command("edit", path="d/f.txt", old_string="inside", new_string="ed")),
                ("read", "/read d/f.txt"),
            ):
                status, result = await sidecar.call(text)
                key = f"{tool} {status}"
                if status != "completed":
                    key += " " + why(result)
                outcomes[key] = outcomes.get(key, 0) + 1
                if tool == "read":
                    reads += 1
                    leaked_reads += "the outside file" in result
    finally:
        stop.set()
        thread.join()
        await sidecar.close()
    elapsed = time.perf_counter() - started
    overwritten = int((outside / "f.txt").read_text() != outside_text)
    strays = [name for name in os.listdir(outside) if name != "f.txt"]
    print(
        f"1. swap race: {rounds} rounds ({3 * rounds} calls, {swaps[0]} swaps) in {elapsed:.1f} s"
    )
    for key in sorted(outcomes):
        print(f"   {key:<56} {outcomes[key]:>5}")
    print(f"   escapes: reads with outside content     {leaked_reads} of {reads}")
    print(f"   escapes: outside files overwritten      {overwritten}")
    print(f"   escapes: temporaries left outside       {len(strays)}")


# --- 2. a gigantic line -----------------------------------------------------------------------


async def gigantic_line(base: Path, line_mib: int) -> None:
    workspace = base / "line-ws"
    workspace.mkdir()
    path = workspace / "huge.txt"
    with open(path, "wb") as f:
        f.write(b"text head\n" * 820)  # 8,200 bytes of text: the binary sniff passes
        f.truncate(8200 + line_mib * MiB)  # the rest is a hole: one line of NUL bytes
    sidecar = await Sidecar.start(workspace)
    try:
        before = peak_rss(sidecar.process.pid)
        started = time.perf_counter()
        status, text = await sidecar.call("/read huge.txt")
        elapsed = time.perf_counter() - started
        after = peak_rss(sidecar.process.pid)
    finally:
        await sidecar.close()
    cut = "line cut" in text
    print(f"2. gigantic line: read of a {line_mib:,} MiB line ({status}, line cut: {cut})")
    print(
        f"   peak RSS before {before / MiB:.0f} MiB, after {after / MiB:.0f} MiB "
        f"(+{(after - before) / MiB:.0f} MiB); read took {elapsed:.2f} s"
    )


# --- 3. concurrent appends --------------------------------------------------------------------

APPENDER = """
import os, sys, time
for i in range(int(sys.argv[2])):
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"appended %d\\n" % i)
    os.close(fd)
    time.sleep(0.01)
"""


async def concurrent_appends(base: Path, appends: int) -> None:
    workspace = base / "append-ws"
    workspace.mkdir()
    log = workspace / "log.txt"
    log.write_bytes(b"counter 0\n" + b"filler line\n" * (MiB // 12))
    sidecar = await Sidecar.start(workspace)
    appender = subprocess.Popen([sys.executable, "-c", APPENDER, str(log), str(appends)])
    counter = edits = refused = 0
    durations: list[float] = []
    try:
        while appender.poll() is None:
            started = time.perf_counter()
            status, text = await sidecar.call(
                command(
                    "edit",
                    path="log.txt",
                    old_string=f"counter {counter}\n",
                    new_string=f"counter {counter + 1}\n",
                )
            )
            durations.append(time.perf_counter() - started)
            edits += 1
            if status == "completed":
                counter += 1
            elif "the file changed" in text:
                refused += 1
    finally:
        appender.wait()
        await sidecar.close()
    content = log.read_text()
    lost = sum(f"appended {i}\n" not in content for i in range(appends))
    print(
        f"3. concurrent appends: {appends} lines appended during {edits} edits "
        f"(median {statistics.median(durations) * 1000:.0f} ms each)"
    )
    print(f"   edits done {counter}, refused FILE_CHANGED {refused}, appended lines lost {lost}")


# --- 4. killed writes -------------------------------------------------------------------------


def temporaries(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.name.endswith(".tmp")]


async def killed_writes(base: Path, kills: int, write_mib: int) -> None:
    workspace = base / "kill-ws"
    workspace.mkdir()
    content = "x" * (write_mib * MiB - 1) + "\n"
    caught = 0
    for _ in range(kills):
        sidecar = await Sidecar.start(workspace)
        known = set(temporaries(workspace))
        sidecar.start_prompt(command("write", path="big.txt", content=content))
        deadline = time.monotonic() + 30
        while set(temporaries(workspace)) <= known and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        sidecar.process.send_signal(signal.SIGKILL)
        await sidecar.process.wait()
        caught += len(set(temporaries(workspace)) - known) > 0
        (workspace / "big.txt").unlink(missing_ok=True)
    left = temporaries(workspace)
    left_mib = sum(p.stat().st_size for p in left) / MiB
    after_young = await one_more_write(workspace)
    # Stand for the ten minutes after which a dead writer's temporary counts as stale.
    aged = time.time() - DEAD_PID_SECONDS - 1
    for path in temporaries(workspace):
        os.utime(path, (aged, aged))
    after_stale = await one_more_write(workspace)
    print(
        f"4. killed writes: {kills} SIGKILLs mid-write of {write_mib} MiB "
        f"({caught} caught with a temporary)"
    )
    print(
        f"   temporaries present after the kills {len(left)} ({left_mib:.0f} MiB); after one "
        f"more write at once {after_young} (kept: younger than {DEAD_PID_SECONDS // 60} "
        f"minutes); once {DEAD_PID_SECONDS // 60} minutes old, after one more write "
        f"{after_stale} (must be 0)"
    )


async def one_more_write(workspace: Path) -> int:
    """How many temporaries are left after a fresh sidecar writes one small file there."""
    sidecar = await Sidecar.start(workspace)
    try:
        # New content each time: a write that changes nothing does not touch the disk.
        content = f"{time.time_ns()}\n"
        status, _text = await sidecar.call(command("write", path="small.txt", content=content))
    finally:
        await sidecar.close()
    assert status == "completed", status
    return len(temporaries(workspace))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--line-mib", type=int, default=1536)
    parser.add_argument("--appends", type=int, default=113)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--write-mib", type=int, default=48, help="MiB of each killed write")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="soak-files-") as temporary:
        base = Path(temporary)
        await swap_race(base, args.rounds)
        await gigantic_line(base, args.line_mib)
        await concurrent_appends(base, args.appends)
        await killed_writes(base, args.kills, args.write_mib)


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    asyncio.run(main())
