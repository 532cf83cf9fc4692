"""Soak: MCP servers with enormous tool lists, and what the other sessions feel meanwhile.

Run: ``.venv/bin/python benchmarks/soak_mcp_tools.py [--tools 20000] [--paged-tools 40000]
[--pages 20] [--churn-tools 3000] [--churn-every 0.1] [--duration 60] [--start-timeout 10]
[--runs wide,paged,eof,churn] [--baseline REV]``

The server is ``tests/mcp/peers/crowd_peer.py`` (no SDK: it answers 40,000 tools at once), each
tool with a schema of its own. A sidecar (the console driver) has one quiet session; a second
session names the crowd server, and all the while the quiet session is sent a cheap request
(``session/set_mode``) every 20 ms. A request's *stall* is how long its answer took; the
event loop's stall is the longest of them (a cancel, another session's prompt, the end of
input wait as long). The runs:

- **wide**: one page of ``--tools`` tools: the longest stall, and how long ``session/new``
  with the server took to answer;
- **paged**: ``--paged-tools`` over ``--pages`` pages: the same;
- **eof**: the same server, in a sidecar whose input ends (EOF) 5 s after the server served
  the last page it is asked for: how long it takes to exit;
- **churn**: ``--churn-tools`` tools, of which the server renames one and says
  ``notifications/tools/list_changed`` every ``--churn-every`` s, for ``--duration`` s after the
  session started: the longest stall, stalls over 250 ms per minute, and the re-lists the
  server served.

``--start-timeout`` is the sidecars' ``--mcp-start-timeout`` (10 s, the default): an older
revision that cannot even list 40,000 tools within it needs a longer one to show the stall
that follows. ``--runs`` picks some of the runs. ``--baseline REV`` runs the same against
git revision REV's ``acp_sidecar`` (exported to a temporary directory) first, so both sets of
figures come from the same machine and load. A ``session/new`` not answered within
``--limit`` s (default 300) is reported as such.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.sidecar_process import Pipes, export_revision, start_sidecar  # noqa: E402

CROWD = ROOT / "tests" / "mcp" / "peers" / "crowd_peer.py"
PROBE_EVERY = 0.02
SLOW = 0.25
QUIET = 5.0
"""Seconds without a new page after which a listing has read all it will."""


class Client(Pipes):
    """Requests answered by id (a reader task); updates counted; the crowd's stats read."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        super().__init__(process)
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while line := await self.stdout.readline():
            message = json.loads(line)
            if "method" in message:
                if "id" in message:  # a request of the sidecar's (none is expected): refuse
                    await self.write_message(
                        {
                            "jsonrpc": "2.0",
                            "id": message["id"],
                            "error": {"code": -32601, "message": "no"},
                        }
                    )
                continue
            future = self.waiting.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(EOFError("the sidecar closed its output"))

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        msg_id = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[msg_id] = future
        await self.write_message(
            {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        )
        return await future

    async def close(self) -> str:
        """End its input; how long it took to exit (killed after 60 s)."""
        began = time.perf_counter()
        self.stdin.close()
        try:
            status = await asyncio.wait_for(self.process.wait(), 60)
            return f"exit {time.perf_counter() - began:5.2f} s (status {status})"
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
            return "no exit within 60 s of EOF (killed)"
        finally:
            self.reader.cancel()


def crowd(*args: str) -> dict[str, Any]:
    return {"name": "crowd", "command": sys.executable, "args": [str(CROWD), *args], "env": []}


async def sidecar(code: Path, workdir: Path, timeout: float) -> Client:
    """A sidecar of ``code``, initialized; ``timeout``: its ``--mcp-start-timeout``."""
    args = ("--store", str(workdir / "store"), "--mcp-start-timeout", f"{timeout:g}")
    client = Client(await start_sidecar(*args, code=code))
    await client.request("initialize", {"protocolVersion": 1})
    return client


class Probe:
    """A cheap request to a quiet session every :data:`PROBE_EVERY` s; each one's stall.

    Stopping waits for the request in flight (the one a stall holds up) to be answered, so
    the longest stall is never cut short; one still unanswered after ``patience`` s counts
    with the time it has waited."""

    def __init__(self, client: Client, session: str) -> None:
        self.stalls: list[float] = []
        self._client = client
        self._session = session
        self._stopping = False
        self._began = 0.0
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        params = {"sessionId": self._session, "modeId": "ask"}
        while not self._stopping:
            self._began = time.perf_counter()
            await self._client.request("session/set_mode", params)
            self.stalls.append(time.perf_counter() - self._began)
            await asyncio.sleep(PROBE_EVERY)

    async def stop(self, patience: float = 120.0) -> list[float]:
        self._stopping = True
        try:
            await asyncio.wait_for(asyncio.shield(self._task), patience)
        except TimeoutError:
            self.stalls.append(time.perf_counter() - self._began)
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        return self.stalls


async def listing(
    code: Path, workdir: Path, server: dict[str, Any], args: argparse.Namespace
) -> str:
    """One sidecar: a quiet session probed while a session naming ``server`` starts."""
    limit = args.limit
    client = await sidecar(code, workdir, args.start_timeout)
    try:
        quiet = await client.request("session/new", {"cwd": str(workdir), "mcpServers": []})
        probe = Probe(client, quiet["result"]["sessionId"])
        began = time.perf_counter()
        params = {"cwd": str(workdir), "mcpServers": [server]}
        try:
            await asyncio.wait_for(client.request("session/new", params), limit)
            took = f"{time.perf_counter() - began:7.2f} s"
        except TimeoutError:
            took = f"over {limit:g} s"
        stalls = await probe.stop()
    except BaseException:
        await client.close()
        raise
    return f"session/new {took}   longest stall {max(stalls, default=0):7.3f} s   {await client.close()}"


async def exit_at_eof(code: Path, workdir: Path, tools: int, pages: int, timeout: float) -> str:
    """A sidecar whose input ends :data:`QUIET` s after the crowd server served the last page
    it is asked for: its listing is being checked (or was)."""
    stats = workdir / "eof-stats.json"
    server = crowd(
        *("--tools", str(tools), "--pages", str(pages)),
        *("--salt", f"{workdir}/e", "--stats", str(stats)),
    )
    client = await sidecar(code, workdir, timeout)
    params = {"cwd": str(workdir), "mcpServers": [server]}
    await client.write_message(
        {"jsonrpc": "2.0", "id": 99, "method": "session/new", "params": params}
    )
    served, since = 0, time.perf_counter()
    while not served or time.perf_counter() - since < QUIET:
        await asyncio.sleep(0.01)
        now = json.loads(stats.read_text())["pages"] if stats.exists() else 0
        if now != served:
            served, since = now, time.perf_counter()
    return f"EOF after its {served} pages: {await client.close()}"


async def churn(code: Path, workdir: Path, args: argparse.Namespace) -> str:
    tools, every, duration = args.churn_tools, args.churn_every, args.duration
    client = await sidecar(code, workdir, args.start_timeout)
    try:
        quiet = await client.request("session/new", {"cwd": str(workdir), "mcpServers": []})
        stats = workdir / "churn-stats.json"
        server = crowd(
            "--tools",
            str(tools),
            "--churn",
            str(every),
            "--salt",
            str(workdir),
            "--stats",
            str(stats),
        )
        await client.request("session/new", {"cwd": str(workdir), "mcpServers": [server]})
        listed = json.loads(stats.read_text())["lists"]
        probe = Probe(client, quiet["result"]["sessionId"])
        await asyncio.sleep(duration)
        stalls = await probe.stop()
        relists = (json.loads(stats.read_text())["lists"] - listed) * 60 / duration
        slow = sum(stall > SLOW for stall in stalls) * 60 / duration
    except BaseException:
        await client.close()
        raise
    return (
        f"longest stall {max(stalls, default=0):7.3f} s   stalls over {SLOW:g} s: "
        f"{slow:5.1f}/min   re-lists {relists:5.1f}/min   {await client.close()}"
    )


async def run(name: str, code: Path, args: argparse.Namespace) -> None:
    print(f"{name}:")
    label = f"{args.paged_tools:,} tools / {args.pages} pages"
    with tempfile.TemporaryDirectory() as tmp:
        if "wide" in args.runs:
            wide = crowd("--tools", str(args.tools), "--salt", f"{tmp}/w")
            figures = await listing(code, Path(tmp), wide, args)
            print(f"  wide  {args.tools:>6,} tools:           {figures}")
        if "paged" in args.runs:
            paged = crowd(
                "--tools", str(args.paged_tools), "--pages", str(args.pages), "--salt", f"{tmp}/p"
            )
            print(f"  paged {label:>24}: {await listing(code, Path(tmp), paged, args)}")
        if "eof" in args.runs:
            figures = await exit_at_eof(
                code, Path(tmp), args.paged_tools, args.pages, args.start_timeout
            )
            print(f"  paged {label:>24}: {figures}")
        if "churn" in args.runs:
            figures = await churn(code, Path(tmp), args)
            print(f"  churn {args.churn_tools:>6,} tools every {args.churn_every:g} s: {figures}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=20_000)
    parser.add_argument("--paged-tools", type=int, default=40_000)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--churn-tools", type=int, default=3_000)
    parser.add_argument("--churn-every", type=float, default=0.1)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--limit", type=float, default=300.0)
    parser.add_argument(
        "--start-timeout", type=float, default=10.0, help="the sidecars' --mcp-start-timeout"
    )
    parser.add_argument("--baseline", metavar="REV", help="also run git revision REV first")
    parser.add_argument(
        "--runs",
        type=lambda text: set(text.split(",")),
        default={"wide", "paged", "eof", "churn"},
        help="which runs (comma-separated: wide,paged,eof,churn; default all)",
    )
    args = parser.parse_args()
    if args.baseline:
        with tempfile.TemporaryDirectory() as tmp:
            await run(
                f"baseline ({args.baseline})", Path(export_revision(args.baseline, tmp)), args
            )
    await run("this tree", ROOT, args)


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    asyncio.run(main())
