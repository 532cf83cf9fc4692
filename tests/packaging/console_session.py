"""A short ACP session with an installed ``acp-sidecar``, over its stdio, as an editor opens
one: ``initialize``, ``session/new`` in a workspace, one console prompt (``/read`` of a file
there), then end of input — after which the sidecar must exit 0.

Every line the sidecar writes is checked against the official ACP schema
(:class:`tests.server.wire.WireClient`), so an installed build that printed anything but ACP
on stdout fails here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from tests.server.wire import READ_LIMIT, WireClient

START_TIMEOUT = 120.0
"""How long the first answer may take: ``uvx`` may resolve and install the environment first."""

TURN_TIMEOUT = 30.0

FILE_TEXT = "packaged and working\n"


@attrs.frozen
class ConsoleRun:
    initialize: dict[str, Any]
    stop_reason: str
    updates: list[dict[str, Any]]
    returncode: int
    stderr: str

    def read_output(self) -> str:
        """The text the ``/read`` card shows when it completes."""
        texts = [
            block["content"]["text"]
            for update in self.updates
            if update["sessionUpdate"] == "tool_call_update" and update.get("status") == "completed"
            for block in update.get("content") or []
            if block.get("type") == "content" and block["content"].get("type") == "text"
        ]
        return "".join(texts)


async def console_session(
    argv: Sequence[str | Path], *, workspace: Path, env: Mapping[str, str]
) -> ConsoleRun:
    """Run the session described above against ``argv`` (the sidecar's command line)."""
    (workspace / "hello.txt").write_text(FILE_TEXT, encoding="utf-8")
    process = await asyncio.create_subprocess_exec(
        *map(str, argv),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=workspace,
        env=dict(env),
        limit=READ_LIMIT,
    )
    assert process.stdin is not None and process.stdout is not None
    assert process.stderr is not None
    stderr = asyncio.create_task(process.stderr.read())
    client = WireClient(process.stdout, process.stdin)
    try:
        init_id = await client.send_request(
            "initialize", {"protocolVersion": 1, "clientCapabilities": {}}
        )
        initialized = await client.next_response(init_id, timeout=START_TIMEOUT)
        assert "result" in initialized, initialized
        new_id = await client.send_request("session/new", {"cwd": str(workspace), "mcpServers": []})
        created = await client.next_response(new_id, timeout=TURN_TIMEOUT)
        session_id = created["result"]["sessionId"]
        prompt_id = await client.start_prompt(session_id, "/read hello.txt")
        answer = await client.next_response(prompt_id, timeout=TURN_TIMEOUT)
        assert "result" in answer, answer
        client.close()
        returncode = await asyncio.wait_for(process.wait(), TURN_TIMEOUT)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return ConsoleRun(
        initialize=initialized["result"],
        stop_reason=answer["result"]["stopReason"],
        updates=[
            u["params"]["update"] for u in client.updates if u["params"]["sessionId"] == session_id
        ],
        returncode=returncode,
        stderr=(await stderr).decode("utf-8", "replace"),
    )
