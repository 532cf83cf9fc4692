"""The path of one ``/edit`` prompt and of one model tool call: which modules each runs
through and where it turns back up.

Runs a sidecar subprocess under a profiler, drives ``initialize``, ``session/new`` and one
prompt (answering the permission dialog with "allow once"), and records only while that
prompt is handled. Two cases, each in a sidecar of its own:

- **/edit**: the console driver runs ``/edit`` of one line;
- **model tool call**: the model driver, against the scripted OpenAI-compatible server of
  the suite (``tests/agent/model/fake_openai.py``, in this process), is answered with one
  ``edit`` call of the same line and then a short text.

For each it prints:

- **modules**: the ``acp_sidecar`` modules whose code ran for the prompt;
- **reversals**: the calls that go *up* the layers (``cli > server > agent > bridge > store >
  tools > protocol > shared``, the order of ARCHITECTURE.md), each as ``caller → callee`` with the
  functions on both sides. A call's caller is the nearest ``acp_sidecar`` frame below it,
  looking through library frames (pygls, attrs) but not through the event loop: a task or a
  callback the loop starts has no caller here.

Recording starts once ``session/new``'s own work is done (its log created, nothing sent for
half a second), so the two figures hold only the prompt's; a timer of the sidecar (the
orphan sweep, ``tools.builtin.shell.reaper``) can still fall in the window and add a module.

A call up the layers is not always wrong: the registry's hooks (the spec's pipeline) call the
listeners the bridge registered, and the bridge calls the sender the server handed it. The
list shows each one so a reader can tell an upward call through a protocol the lower layer
declares from one through a field meant for something else.

Usage::

    .venv/bin/python benchmarks/call_path.py              # this tree, both cases
    .venv/bin/python benchmarks/call_path.py --against REV  # and another revision, same run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.sidecar_process import ROOT, Pipes, export_revision, start_sidecar
from tests.agent.model.fake_openai import ScriptedOpenAI, answer, calling, tool_call

Case = Literal["/edit prompt", "model tool call"]
CASES: tuple[Case, ...] = ("/edit prompt", "model tool call")
EDIT = {"path": "notes.txt", "old_string": "beta", "new_string": "BETA"}

LAYERS = ("shared", "protocol", "tools", "settings", "store", "bridge", "agent", "server", "cli")
"""From the bottom up: a call from a layer to one later in this tuple goes up. ``shared`` is
the package's top-level helpers (``acp_sidecar.text``) that every layer may use; ``settings``
(the config file, on the call path since the rules files are read) imports only those."""

COMMAND = ("acp_sidecar", "acp_sidecar.__main__", "acp_sidecar.cli", "acp_sidecar.demo")
"""The modules of the ``acp-sidecar`` command itself: the top layer."""

TRACER = r"""
import json, os, runpy, signal, sys, threading

recording = False
modules = set()
edges = {}

def _module(frame):
    return frame.f_globals.get("__name__", "") or ""

def _caller(frame):
    back = frame.f_back
    while back is not None:
        name = _module(back)
        if name.startswith("acp_sidecar"):
            return back
        if name.startswith(("asyncio", "concurrent", "threading")):
            return None
        back = back.f_back
    return None

def _profile(frame, event, arg):
    if event != "call" or not recording:
        return
    name = _module(frame)
    if not name.startswith("acp_sidecar"):
        return
    modules.add(name)
    caller = _caller(frame)
    if caller is None:
        return
    key = (_module(caller), caller.f_code.co_qualname, name, frame.f_code.co_qualname)
    edges[key] = edges.get(key, 0) + 1

def _start(signum, frame):
    global recording
    recording = True

def _stop(signum, frame):
    global recording
    recording = False
    path = os.environ["CALL_PATH_OUT"]
    with open(path + ".part", "w") as out:
        json.dump({"modules": sorted(modules), "edges": [[*k, n] for k, n in edges.items()]}, out)
    os.replace(path + ".part", path)  # the reader never sees half a file

signal.signal(signal.SIGUSR1, _start)
signal.signal(signal.SIGUSR2, _stop)
threading.setprofile(_profile)
sys.setprofile(_profile)
sys.argv = ["acp_sidecar", *sys.argv[1:]]
runpy.run_module("acp_sidecar", run_name="__main__")
"""


def layer(module: str) -> str:
    """The layer ``module`` belongs to: its package below ``acp_sidecar``, ``cli`` for the
    command's own modules, ``shared`` for the other top-level ones."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS):
        return parts[1]
    return "cli" if module in COMMAND else "shared"


async def read_until(pipes: Pipes, msg_id: int) -> dict[str, Any]:
    """Read messages until the answer to ``msg_id``; allow once every permission asked."""
    while True:
        line = await asyncio.wait_for(pipes.stdout.readline(), 30)
        if not line:
            raise RuntimeError("the sidecar closed its output")
        message = json.loads(line)
        if message.get("method") == "session/request_permission":
            await pipes.write_message(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}},
                }
            )
        elif message.get("id") == msg_id and "method" not in message:
            return message


async def settle(pipes: Pipes, store: Path) -> None:
    """Wait for what ``session/new`` leaves running after its answer (the log created in a
    worker thread, the command list sent), so that the trace holds only the prompt's work:
    until the log exists and the sidecar has sent nothing for half a second."""
    for _ in range(600):
        if any(store.rglob("*.jsonl")):
            break
        await asyncio.sleep(0.05)
    else:
        raise RuntimeError("the session's log was never created")
    while True:
        try:
            line = await asyncio.wait_for(pipes.stdout.readline(), 0.5)
        except TimeoutError:
            return
        if not line:
            raise RuntimeError("the sidecar closed its output")


async def trace(code: Path | str, case: Case) -> dict[str, Any]:
    """Modules and call edges of one ``case`` prompt in ``code``'s sidecar."""
    async with ScriptedOpenAI() as endpoint:
        endpoint.script(calling(tool_call(0, "call_1", "edit", json.dumps(EDIT))), answer("Done."))
        model = ("--model", "call-path", "--base-url", endpoint.base_url)
        traced = await _trace(code, model if case == "model tool call" else ())
        if case == "model tool call" and len(endpoint.requests) != 2:
            raise RuntimeError(f"the model was asked {len(endpoint.requests)} times, not 2")
        return traced


async def _trace(code: Path | str, driver: tuple[str, ...]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        workspace = Path(scratch, "workspace")
        workspace.mkdir()
        (workspace / "notes.txt").write_text("alpha\nbeta\ngamma\n")
        out = Path(scratch, "trace.json")
        process = await start_sidecar(
            "--store",
            str(Path(scratch, "store")),
            *driver,
            code=code,
            cwd=scratch,
            env={"CALL_PATH_OUT": str(out), "PYTHONPATH": str(code), "OPENAI_API_KEY": "trace"},
            program=("-c", TRACER),
        )
        pipes = Pipes(process)
        try:
            init = await pipes.send_request(
                "initialize", {"protocolVersion": 1, "clientCapabilities": {}}
            )
            await read_until(pipes, init)
            new = await pipes.send_request("session/new", {"cwd": str(workspace), "mcpServers": []})
            session = (await read_until(pipes, new))["result"]["sessionId"]
            await settle(pipes, Path(scratch, "store"))
            process.send_signal(signal.SIGUSR1)
            await asyncio.sleep(0.5)
            text = "change beta to BETA in notes.txt" if driver else f"/edit {json.dumps(EDIT)}"
            prompt = await pipes.send_request(
                "session/prompt",
                {"sessionId": session, "prompt": [{"type": "text", "text": text}]},
            )
            answer = await read_until(pipes, prompt)
            process.send_signal(signal.SIGUSR2)
            for _ in range(100):
                if out.exists():
                    break
                await asyncio.sleep(0.05)
            if (workspace / "notes.txt").read_text() != "alpha\nBETA\ngamma\n":
                raise RuntimeError(f"the edit did not happen: {answer}")
            return dict(json.loads(out.read_text()))
        finally:
            pipes.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()


def report(label: str, traced: dict[str, Any]) -> None:
    """Print the modules and the upward calls of one trace."""
    modules: list[str] = traced["modules"]
    up: dict[tuple[str, str], list[str]] = {}
    for caller, caller_fn, callee, callee_fn, _count in traced["edges"]:
        below, above = layer(caller), layer(callee)
        if LAYERS.index(above) > LAYERS.index(below):
            up.setdefault((below, above), []).append(f"{caller}:{caller_fn} → {callee}:{callee_fn}")
    calls = sum(len(v) for v in up.values())
    print(
        f"== {label}: {len(modules)} modules, {len(up)} upward layer crossings, {calls} upward calls"
    )
    for name in modules:
        print(f"   {layer(name):8} {name}")
    for (below, above), names in sorted(up.items()):
        print(f"   up {below} → {above}:")
        for text in sorted(set(names)):
            print(f"      {text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", help="another git revision to trace in the same run")
    options = parser.parse_args()
    for case in CASES:
        report(f"this tree, {case}", asyncio.run(trace(ROOT, case)))
    if options.against:
        with tempfile.TemporaryDirectory() as into:
            code = export_revision(options.against, into)
            for case in CASES:
                report(f"{options.against}, {case}", asyncio.run(trace(code, case)))


if __name__ == "__main__":
    from hermetic import isolate_benchmark

    isolate_benchmark()
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
