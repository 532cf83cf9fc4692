"""Soak: fuzz acp-sidecar over the raw wire, then flood it with a client that never reads.

Run: ``.venv/bin/python benchmarks/soak_wire.py [--cases 5000] [--seed 11]
[--never-read-seconds 5]`` (``--cases 0`` or ``--never-read-seconds 0`` skips that part)

Fuzz: one ``acp-sidecar serve`` subprocess (the console driver and the built-in tools, a
temporary workspace and store) gets ``--cases`` cases generated from ``--seed`` — the same
seed gives the same cases. A case is one or a few lines:

- ``line``: malformed lines — truncated JSON, random bytes, invalid UTF-8, deep nesting,
  ``NaN``/``Infinity``/``1e999``, ids of 30 and 5000 digits, blank lines;
- ``envelope``: JSON that is not JSON-RPC — arrays, scalars, a wrong ``jsonrpc``, a method or
  params of the wrong type, ids that are floats, booleans, objects or 100 KiB strings;
- ``mutation``: an ACP request (``initialize`` … ``session/prompt``, unknown methods) whose
  params had values replaced by junk of every JSON type, keys dropped or added;
- ``stray``: responses nobody asked for, with the ids of the client's own requests in flight,
  with both ``result`` and ``error`` or neither;
- ``kind``: request methods sent as notifications, ``session/cancel`` and
  ``$/cancel_request`` sent as requests, ``initialize`` again, a client request reusing the id
  of the agent's pending request.

The permission dialogs the prompts open are answered at random — reject, cancelled, an error,
or malformed (both ``result`` and ``error``, a result that does not decode) — never allow, so
nothing is changed. After every batch of cases a sentinel request must be answered. Figures:
cases sent, server crashes (the process died) and hangs (a sentinel unanswered for 15 s;
the server is restarted after either), stdout corruption (a line that is not JSON or not
valid ACP per ``tests/acp_schema.py``), requests answered more than once or never (every
request with a usable id must get exactly one answer), and tracebacks on stderr.

Never-reading client: a fresh sidecar; the client writes unknown-method requests (a
1000-character name, about 2 KiB per answer) as fast as the pipe takes them for
``--never-read-seconds`` without reading, sampling the sidecar's VmRSS; then it reads every
answer. Figures: requests written, RSS at start / peak / end of the flood, answers read.

``SOAK_TRANSCRIPT=FILE`` appends every line sent (``>``) and read (``<``) to FILE, cut to
400 bytes, to look into a failure.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import selectors
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.acp_schema import SchemaViolation, validate_agent_message  # noqa: E402
from tests.server.wire import popen_sidecar  # noqa: E402

MiB = 1024 * 1024
TRANSCRIPT = os.environ.get("SOAK_TRANSCRIPT")
BATCH = 20
SENTINEL_TIMEOUT = 15.0
PROMPTS = [
    "hello",
    "/read notes.txt",
    "/grep hello",
    '/glob {"pattern": "*"}',
    '/write {"path": "out.txt", "content": "x"}',
    "/bash echo hi",
    '/edit {"path": "notes.txt", "old_string": "hello", "new_string": "bye"}',
]
JUNK: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**63,
    -(2**63) - 1,
    1.5,
    "",
    "x",
    "../../etc/passwd",
    "/",
    "\u0000",
    "\ud800",
    "é" * 50,
    [],
    {},
    [1, "a", None],
    {"a": {"b": [{}]}},
]


def strict_loads(line: bytes) -> Any:
    """The client's own reading of a line, independent of the sidecar's."""

    def refuse(name: str) -> Any:
        raise ValueError(name)

    def finite(text: str) -> float:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise ValueError(text)
        return value

    return json.loads(line.decode("utf-8"), parse_constant=refuse, parse_float=finite)


def usable_id(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
    )


class Sidecar:
    """One ``acp-sidecar serve`` subprocess on non-blocking pipes."""

    def __init__(self, workspace: Path, store: Path, stderr: Path) -> None:
        self.stderr_file = stderr.open("ab")
        self.process, self.stdin, self.stdout = popen_sidecar(
            "serve", "--store", str(store), stderr=self.stderr_file, cwd=workspace
        )
        self.unsent = bytearray()
        self.partial = bytearray()
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.stdout, selectors.EVENT_READ)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def write(self, data: bytes) -> None:
        self.unsent += data
        if TRANSCRIPT:
            with open(TRANSCRIPT, "ab") as f:
                f.write(b"> " + data[:400].rstrip(b"\n") + b"\n")

    def flush_some(self) -> None:
        if not self.unsent:
            return
        try:
            written = os.write(self.stdin, self.unsent)
        except BlockingIOError:
            return
        except BrokenPipeError:
            self.unsent.clear()
            return
        del self.unsent[:written]

    def lines(self, timeout: float) -> list[bytes]:
        """Write what the pipe takes; the complete lines that arrive within ``timeout``."""
        self.flush_some()
        out: list[bytes] = []
        for _key, _events in self.selector.select(timeout):
            try:
                chunk = os.read(self.stdout, 1 << 20)
            except BlockingIOError:
                continue
            if not chunk:
                return out
            self.partial += chunk
            *complete, rest = self.partial.split(b"\n")
            self.partial = bytearray(rest)
            out.extend(bytes(line) for line in complete)
            if TRANSCRIPT:
                with open(TRANSCRIPT, "ab") as f:
                    for line in complete:
                        f.write(b"< " + bytes(line[:400]) + b"\n")
        return out

    def vm(self, field: str) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self) -> None:
        if self.alive:
            self.process.kill()
        self.process.wait()
        self.selector.close()
        self.stderr_file.close()


class Fuzzer:
    """Generates cases from one seed and checks every answer."""

    def __init__(self, seed: int, workspace: Path, store: Path, stderr: Path) -> None:
        # The cases come from ``rng`` alone, so a seed gives the same sequence of cases; what
        # depends on timing (which requests are in flight, the permission dialogs) draws from
        # the other two.
        self.rng = random.Random(seed)
        self.pick = random.Random(seed + 1)
        self.answers = random.Random(seed + 2)
        self.workspace = workspace
        self.store = store
        self.stderr = stderr
        self.counter = 0
        self.expected: collections.Counter[Any] = collections.Counter()
        self.answered: collections.Counter[Any] = collections.Counter()
        self.methods: dict[Any, str] = {}
        self.sent: dict[Any, bytes] = {}
        self.null_id_requests = 0
        self.null_id_answers = 0
        self.sessions: list[str] = []
        self.client_pending: list[Any] = []
        self.agent_pending: dict[Any, str] = {}
        self.corrupt: list[str] = []
        self.crashes = 0
        self.hangs = 0
        self.cases = collections.Counter[str]()
        self.sidecar = self.start()

    # ---- the connection ----

    def start(self) -> Sidecar:
        sidecar = Sidecar(self.workspace, self.store, self.stderr)
        self.sidecar = sidecar
        self.sessions.clear()
        self.client_pending.clear()
        self.agent_pending.clear()
        init = {"protocolVersion": 1, "clientCapabilities": {}}
        self.roundtrip("initialize", init)
        for _ in range(3):
            self.roundtrip("session/new", {"cwd": str(self.workspace), "mcpServers": []})
        return sidecar

    def fresh_id(self) -> Any:
        self.counter += 1
        return f"f{self.counter}" if self.counter % 3 else 10**9 + self.counter

    def send(self, message: Any, raw: bytes | None = None) -> None:
        """Send ``message`` (or the bytes ``raw`` standing for it); note what must be answered."""
        line = raw if raw is not None else json.dumps(message).encode()
        try:
            parsed = strict_loads(line)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and parsed.get("id", 0) is None and "method" in parsed:
            self.null_id_requests += 1
        if isinstance(parsed, dict) and "id" in parsed and usable_id(parsed["id"]):
            msg_id = parsed["id"]
            # Anything with an id and no method is shaped like a response: never answered
            # (its id may be one of the client's own requests in flight).
            is_response = "method" not in parsed
            ours = "method" not in parsed and msg_id in self.agent_pending
            if not is_response and not ours:
                self.expected[msg_id] += 1
                self.sent[msg_id] = self.sent.get(msg_id, b"") + line[:300] + b" | "
                if isinstance(parsed.get("method"), str):
                    self.methods[msg_id] = parsed["method"]
                    self.client_pending.append(msg_id)
            if ours:
                self.agent_pending.pop(msg_id, None)
        self.sidecar.write(line + b"\n")

    def roundtrip(self, method: str, params: Any) -> dict[str, Any] | None:
        msg_id = self.fresh_id()
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return self.wait_for(msg_id)

    def wait_for(self, msg_id: Any) -> dict[str, Any] | None:
        deadline = time.monotonic() + SENTINEL_TIMEOUT
        while time.monotonic() < deadline:
            if not self.sidecar.alive:
                return None
            found = None
            for line in self.sidecar.lines(0.05):  # every line is taken, even after the answer
                answer = self.take(line)
                if answer is not None and answer.get("id") == msg_id:
                    found = answer
            if found is not None:
                return found
        return None

    def take(self, line: bytes) -> dict[str, Any] | None:
        """Check one line from the sidecar and react; the message when it is a response."""
        try:
            message = json.loads(line)
        except ValueError:
            self.corrupt.append(f"not JSON: {line[:120]!r}")
            return None
        if not isinstance(message, dict):
            self.corrupt.append(f"not an object: {line[:120]!r}")
            return None
        is_response = "id" in message and "method" not in message
        method = (
            self.methods.get(message["id"]) if is_response and usable_id(message["id"]) else None
        )
        if message.get("id", 0) is None and "result" in message and self.null_id_requests:
            # A request with ``id: null`` is answered ``id: null``: correct JSON-RPC, though
            # the schema's envelope wants a non-null id on a result.
            self.null_id_answers += 1
            return message
        try:
            validate_agent_message(message, request_method=method)
        except (SchemaViolation, ValueError) as exc:  # ValueError: a method with no answer
            self.corrupt.append(f"{str(exc)[:200]} in {line[:200]!r}")
        if is_response:
            msg_id = message["id"]
            if msg_id is not None:
                self.answered[msg_id] += 1
                if msg_id in self.client_pending:
                    self.client_pending.remove(msg_id)
            result = message.get("result")
            if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
                self.sessions.append(result["sessionId"])
                del self.sessions[:-20]
            return message
        if "id" in message:  # the agent asks: permission (fs is not advertised)
            self.agent_pending[message["id"]] = message.get("method", "")
            self.answer_agent(message["id"])
        return None

    def answer_agent(self, msg_id: Any) -> None:
        rng = self.answers
        choice = rng.random()
        if choice < 0.1 and self.agent_pending:
            # A client request reusing the pending id first: it must be answered on its own.
            self.expected[msg_id] += 1
            self.methods[msg_id] = "session/list"
            self.sidecar.write(
                json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "session/list"}).encode()
                + b"\n"
            )
        reject = {"outcome": {"outcome": "selected", "optionId": "reject_once"}}
        answers: list[dict[str, Any]] = [
            {"result": reject},
            {"result": {"outcome": {"outcome": "cancelled"}}},
            {"error": {"code": -32603, "message": "editor failed"}},
            {"result": reject, "error": {"code": 1, "message": "both"}},
            {"result": {"outcome": {"outcome": "selected"}}},
            {"result": rng.choice(JUNK)},
            {"error": rng.choice(JUNK)},
            {},
        ]
        self.agent_pending.pop(msg_id, None)
        body = {"jsonrpc": "2.0", "id": msg_id, **rng.choice(answers)}
        self.sidecar.write(json.dumps(body).encode() + b"\n")

    # ---- cases ----

    def session(self) -> str:
        return self.pick.choice(self.sessions) if self.sessions else "no-session"

    def valid_request(self) -> dict[str, Any]:
        rng = self.rng
        cwd = str(self.workspace)
        templates: list[tuple[str, Any]] = [
            ("initialize", {"protocolVersion": 1, "clientCapabilities": {}}),
            ("authenticate", {"methodId": "none"}),
            ("session/new", {"cwd": cwd, "mcpServers": []}),
            ("session/load", {"sessionId": self.session(), "cwd": cwd, "mcpServers": []}),
            ("session/list", {}),
            (
                "session/prompt",
                {
                    "sessionId": self.session(),
                    "prompt": [{"type": "text", "text": rng.choice(PROMPTS)}],
                },
            ),
            (
                "session/set_mode",
                {"sessionId": self.session(), "modeId": rng.choice(["ask", "read-only", "nope"])},
            ),
            ("session/cancel", {"sessionId": self.session()}),
            (rng.choice(["_x/y", "session/teleport", "$/ping", "fs/read_text_file"]), {}),
        ]
        method, params = rng.choice(templates)
        return {"jsonrpc": "2.0", "id": self.fresh_id(), "method": method, "params": params}

    def mutate(self, value: Any, depth: int = 0) -> Any:
        rng = self.rng
        if isinstance(value, dict) and value and rng.random() < 0.7:
            value = dict(value)
            key = rng.choice(list(value))
            roll = rng.random()
            if roll < 0.2:
                del value[key]
            elif roll < 0.35:
                value[rng.choice(["_meta", "extra", "sessionId", "cwd"])] = rng.choice(JUNK)
            else:
                value[key] = self.mutate(value[key], depth + 1)
            return value
        if isinstance(value, list) and value and rng.random() < 0.6:
            value = list(value)
            index = rng.randrange(len(value))
            value[index] = self.mutate(value[index], depth + 1)
            return value
        if rng.random() < 0.1:
            return "y" * rng.choice([1000, 70_000])
        return rng.choice(JUNK)

    def case_mutation(self) -> None:
        message = self.valid_request()
        message["params"] = self.mutate(message["params"])
        if message["method"] == "session/set_mode" and message["params"] == {"modeId": "auto"}:
            message["params"]["modeId"] = "ask"  # never let junk allow every call
        self.send(message)

    def case_line(self) -> None:
        rng = self.rng
        good = json.dumps(self.valid_request()).encode()
        kind = rng.randrange(10)
        if kind == 0:
            raw = good[: rng.randrange(1, len(good))]
        elif kind == 1:
            raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(
                b"\n", b" "
            )
        elif kind == 2:
            raw = good.replace(b'"params"', b'"x": "\xff\xfe", "params"')
        elif kind == 3:
            raw = b"[" * rng.choice([100, 5000, 100_000])
        elif kind == 4:
            number = rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e400"])
            raw = good.replace(b'"params"', b'"n": ' + number + b', "params"')
        elif kind == 5:
            raw = (
                b'{"jsonrpc": "2.0", "id": '
                + b"9" * rng.choice([20, 30, 4301, 5000])
                + b', "method": "session/list"}'
            )
        elif kind == 6:
            raw = rng.choice([b"", b"   ", b"\r", b"\t\t"])
        elif kind == 7:
            raw = good + b" trailing"
        elif kind == 8:
            raw = good.replace(b"{", b"{{", 1)
        else:
            raw = (
                b'{"jsonrpc": "2.0", "id": "x", "method": "session/list", "params": {"a": '
                + b"1" * rng.choice([10, 4400])
                + b"}}"
            )
        self.send(None, raw)

    def case_envelope(self) -> None:
        rng = self.rng
        message: Any = self.valid_request()
        kind = rng.randrange(8)
        if kind == 0:
            message = [message] if rng.random() < 0.5 else []
        elif kind == 1:
            message = rng.choice([42, "initialize", None, True, 1.5])
        elif kind == 2:
            message["jsonrpc"] = rng.choice(["1.0", 2.0, None, ""])
        elif kind == 3:
            del message["jsonrpc"]
        elif kind == 4:
            message["method"] = rng.choice(JUNK)
        elif kind == 5:
            message["params"] = rng.choice(["x", 5, True, [1, 2]])
        elif kind == 6:
            message["id"] = rng.choice([1.5, True, {"a": 1}, [1], 2**64, "i" * 100_000, None])
        else:
            message["extra"] = rng.choice(JUNK)
        self.send(message)

    def case_stray(self) -> None:
        rng = self.rng
        fresh = self.fresh_id()  # drawn every time: later ids must not depend on timing
        pool = self.client_pending or [fresh]
        msg_id = self.pick.choice(pool) if rng.random() < 0.7 else fresh
        body = rng.choice(
            [
                {"result": rng.choice(JUNK)},
                {"error": {"code": -1, "message": "stray"}},
                {"result": {}, "error": {"code": -1, "message": "both"}},
                {},
                {"error": rng.choice(JUNK)},
            ]
        )
        self.send({"jsonrpc": "2.0", "id": msg_id, **body})

    def case_kind(self) -> None:
        rng = self.rng
        kind = rng.randrange(4)
        if kind == 0:
            message = self.valid_request()
            del message["id"]  # a request method as a notification: not run, not answered
        elif kind == 1:
            message = {
                "jsonrpc": "2.0",
                "id": self.fresh_id(),
                "method": "session/cancel",
                "params": {"sessionId": self.session()},
            }
        elif kind == 2:
            target = self.pick.choice(self.client_pending) if self.client_pending else 0
            message = {
                "jsonrpc": "2.0",
                "id": self.fresh_id(),
                "method": "$/cancel_request",
                "params": {"requestId": target},
            }
        else:
            message = {
                "jsonrpc": "2.0",
                "id": self.fresh_id(),
                "method": "initialize",
                "params": {"protocolVersion": 1},
            }
        self.send(message)

    def run(self, cases: int) -> None:
        kinds = {
            "line": self.case_line,
            "envelope": self.case_envelope,
            "mutation": self.case_mutation,
            "stray": self.case_stray,
            "kind": self.case_kind,
        }
        names = list(kinds)
        weights = [2, 2, 4, 1, 1]
        for number in range(cases):
            name = self.rng.choices(names, weights)[0]
            self.cases[name] += 1
            kinds[name]()
            for line in self.sidecar.lines(0):
                self.take(line)
            if number % BATCH == BATCH - 1:
                self.checkpoint()
        self.checkpoint()
        # Let running turns end: cancel every session, then wait for the last answers.
        for session in list(self.sessions):
            self.send(
                {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}
            )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.unanswered():
            for line in self.sidecar.lines(0.1):
                self.take(line)

    def checkpoint(self) -> None:
        answer = self.roundtrip("authenticate", {"methodId": "sentinel"})
        if answer is not None:
            return
        if self.sidecar.alive:
            self.hangs += 1
        else:
            self.crashes += 1
        self.forget_unanswered()
        self.sidecar.stop()
        self.start()

    def unanswered(self) -> list[Any]:
        return [i for i, n in self.expected.items() if self.answered[i] < n]

    def forget_unanswered(self) -> None:
        # A restart loses what was in flight; those are counted by the crash or hang.
        for msg_id in self.unanswered():
            self.expected[msg_id] = self.answered[msg_id]

    def report(self) -> None:
        over = [i for i, n in self.answered.items() if n > self.expected[i]]
        tracebacks = self.stderr.read_text(errors="replace").count("Traceback")
        total = sum(self.cases.values())
        detail = ", ".join(f"{k} {v}" for k, v in sorted(self.cases.items()))
        print(f"fuzz cases: {total} ({detail})")
        print(f"requests that needed an answer: {sum(self.expected.values())}")
        print(f"server crashes: {self.crashes}   hangs: {self.hangs}")
        print(f"stdout corruption (non-JSON or schema-invalid lines): {len(self.corrupt)}")
        for example in self.corrupt[:5]:
            print(f"  {example}")
        print(f"requests answered more than once: {len(over)}   never: {len(self.unanswered())}")
        for msg_id in (over + self.unanswered())[:5]:
            print(f"  {str(msg_id)[:60]}: {self.sent.get(msg_id, b'?')!r}")
        print(
            f"results to requests with id null, answered id null (correct JSON-RPC): "
            f"{self.null_id_answers}"
        )
        print(f"tracebacks on stderr: {tracebacks}")


def never_reading_client(seconds: float, workdir: Path) -> None:
    sidecar = Sidecar(workdir, workdir / "rss-store", workdir / "rss-stderr.log")
    try:
        sidecar.write(
            b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}\n'
        )
        while not any(b'"id":0' in line for line in sidecar.lines(0.1)):
            pass
        start = sidecar.vm("VmRSS")
        method = "_flood/" + "m" * 1000
        sent = 0
        samples: list[int] = []
        end = time.monotonic() + seconds
        next_sample = 0.0
        while time.monotonic() < end:
            if len(sidecar.unsent) < 64 * 1024:
                for _ in range(100):
                    sent += 1
                    sidecar.write(
                        json.dumps({"jsonrpc": "2.0", "id": sent, "method": method}).encode()
                        + b"\n"
                    )
            before = len(sidecar.unsent)
            sidecar.flush_some()
            if len(sidecar.unsent) == before:
                time.sleep(0.001)
            if time.monotonic() >= next_sample:
                samples.append(sidecar.vm("VmRSS"))
                next_sample = time.monotonic() + 0.5
        end_rss = sidecar.vm("VmRSS")
        peak = sidecar.vm("VmHWM")
        answers = 0
        deadline = time.monotonic() + 120
        while answers < sent and time.monotonic() < deadline:
            answers += sum(1 for line in sidecar.lines(0.2) if b'"error"' in line)
        print(f"never-reading client, {seconds:g} s: {sent} requests written")
        print(
            f"  sidecar RSS: start {start / MiB:.1f} MiB, peak {peak / MiB:.1f} MiB, "
            f"end of flood {end_rss / MiB:.1f} MiB "
            f"(samples: {', '.join(f'{s / MiB:.0f}' for s in samples)})"
        )
        print(f"  answers read once the client reads: {answers} of {sent}")
    finally:
        sidecar.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--never-read-seconds", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="soak-wire-") as tmp:
        workdir = Path(tmp)
        workspace = workdir / "ws"
        workspace.mkdir()
        (workspace / "notes.txt").write_text("hello\n")
        if args.cases:
            started = time.monotonic()
            fuzzer = Fuzzer(args.seed, workspace, workdir / "store", workdir / "stderr.log")
            try:
                fuzzer.run(args.cases)
            finally:
                fuzzer.sidecar.stop()
            print(f"seed {args.seed}, {time.monotonic() - started:.0f} s")
            fuzzer.report()
        if args.never_read_seconds:
            never_reading_client(args.never_read_seconds, workdir)


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    main()
