"""``acp-sidecar demo``: ``serve`` as a subprocess under a small client built in here, driven
through a scripted session in a temporary workspace and drawn as ``replay`` draws.

It touches nothing outside its temporary directories (and ``--store``), and always shuts
the subprocess down.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from acp_sidecar.console import output_console
from acp_sidecar.render import TranscriptRenderer

GREETING = 'def greet(name):\n    return "Hello, " + name\n\nprint(greet("world"))\n'

SCRIPT: tuple[str, ...] = (
    "/write " + json.dumps({"path": "greet.py", "content": GREETING}),
    "/edit "
    + json.dumps(
        {"path": "greet.py", "old_string": '"Hello, " + name', "new_string": 'f"Hello, {name}!"'}
    ),
    "/read greet.py",
    "!python3 greet.py && echo exit status $?",
    "/grep greet",
)
"""The scripted prompts, in order."""

LINE_LIMIT = 256 * 1024 * 1024


class DemoClient:
    """A minimal ACP client over the subprocess's stdio."""

    def __init__(self, process: asyncio.subprocess.Process, renderer: TranscriptRenderer) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._renderer = renderer
        self._next_id = 0
        self.commands: list[str] = []
        """The slash commands the sidecar offered (shown at the end, not mid-prompt)."""

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        """Send a request and answer what the sidecar asks until its response arrives."""
        self._next_id += 1
        msg_id = self._next_id
        await self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            line = await self._stdout.readline()
            if not line:
                raise RuntimeError(f"the sidecar exited while answering {method}")
            message = json.loads(line)
            if message.get("method") == "session/update":
                self._update(message["params"])
            elif "method" in message and "id" in message:
                await self._answer(message)
            elif message.get("id") == msg_id:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error'].get('message')}")
                return message.get("result")

    def _update(self, params: dict[str, Any]) -> None:
        update = params.get("update") or {}
        if update.get("sessionUpdate") == "available_commands_update":
            # It follows session/new on its own time, so it lands inside the first prompt.
            names = (command.get("name") for command in update.get("availableCommands") or ())
            self.commands = [f"/{name}" for name in names if isinstance(name, str)]
            return
        self._renderer.feed(params)

    async def _answer(self, message: dict[str, Any]) -> None:
        if message["method"] == "session/request_permission":
            result: Any = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
        else:
            await self._send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {"code": -32601, "message": f"Method not found: {message['method']}"},
                }
            )
            return
        await self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def _send(self, message: dict[str, Any]) -> None:
        self._stdin.write(json.dumps(message).encode() + b"\n")
        await self._stdin.drain()


async def demo(console: Console, tools: Sequence[str] = (), store: str | None = None) -> int:
    """Run the scripted session; the exit status.

    The session is logged in ``store`` when given (so it can be replayed), else in a
    temporary directory that goes away with the workspace.
    """
    with tempfile.TemporaryDirectory(prefix="acp-sidecar-demo-") as temporary:
        workspace = Path(temporary) / "workspace"
        sessions = Path(store) if store is not None else Path(temporary) / "sessions"
        workspace.mkdir()
        # The scripted console session whatever the user configured: no model, ask mode.
        arguments = [
            *(sys.executable, "-m", "acp_sidecar", "serve", "--no-model", "--mode", "ask"),
            *("--store", str(sessions)),
        ]
        for spec in tools:
            arguments += ["--tools", spec]
        process = await asyncio.create_subprocess_exec(
            *arguments,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=workspace,
            limit=LINE_LIMIT,
        )
        renderer = TranscriptRenderer(console, cwd=str(workspace))
        client = DemoClient(process, renderer)
        try:
            await client.request(
                "initialize",
                {
                    "protocolVersion": 1,
                    "clientCapabilities": {"_meta": {"terminal_output": True}},
                },
            )
            session = await client.request("session/new", {"cwd": str(workspace), "mcpServers": []})
            console.rule(f"acp-sidecar demo — workspace {workspace}")
            for text in SCRIPT:
                prompt = [{"type": "text", "text": text}]
                renderer.user_prompt(prompt)
                result = await client.request(
                    "session/prompt", {"sessionId": session["sessionId"], "prompt": prompt}
                )
                renderer.end_turn(result.get("stopReason"))
            renderer.finish()
        finally:
            assert process.stdin is not None
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 5)
            except TimeoutError:
                process.terminate()
                await process.wait()
        console.rule("end of the demo")
        for line in next_steps(client.commands, kept=store is not None):
            console.print(line, markup=False, highlight=False)
        return 0 if process.returncode == 0 else 1


def next_steps(commands: Sequence[str], *, kept: bool) -> list[str]:
    """What to try after the demo: the console's commands, a model, an editor."""
    offered = " ".join(commands) or "/read /write /edit /bash /grep /glob /plan"
    replay = (
        "Replay this session: acp-sidecar sessions, then acp-sidecar replay SESSION_ID."
        if kept
        else "Keep the next demo's session to replay it: acp-sidecar demo --store DIR."
    )
    return [
        "What to try next:",
        f"  The console, no model needed: {offered}",
        "  Answer prompts with a model: acp-sidecar configure, then acp-sidecar doctor.",
        '  Use it from your editor: see "Use it from an editor" in the README.',
        f"  {replay}",
    ]


def run_demo(tools: Sequence[str] = (), store: str | None = None) -> int:
    """``acp-sidecar demo``: run :func:`demo` on the terminal."""
    return asyncio.run(demo(output_console(frames=True), tools, store))
