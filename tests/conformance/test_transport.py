"""The stdio transport: only ACP messages on stdout, UTF-8 lines, and a prompt exit.

Spec: https://agentclientprotocol.com/protocol/transports ("stdio").
"""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest

from tests.conformance.peer import EXIT_TIMEOUT, SCRIPT_DRIVER, TOOLS, sidecar, sidecar_process


@pytest.mark.process  # fd 1 of a process
async def test_stdout_carries_only_acp_messages(workspace: Path) -> None:
    """Transports, "stdio": "The agent MUST NOT write anything to its stdout that is not a
    valid ACP message"; it "MAY write UTF-8 strings to its standard error (stderr) for
    logging purposes". A turn that prints, writes to file descriptor 1 directly and starts
    child processes that write to their stdout: every line on the agent's stdout is still
    one valid ACP message (each is parsed and validated as it is read, the rest after
    exit), and the noise went to stderr."""
    async with sidecar_process(*SCRIPT_DRIVER) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        turn = await agent.prompt(session, "noise")
        assert turn.stop_reason == "end_turn"
        process = agent.process
    assert process is not None and process.stderr is not None
    stderr = await asyncio.wait_for(process.stderr.read(), EXIT_TIMEOUT)
    for noise in (b"print() noise", b"raw fd 1 noise", b"child noise", b"shell noise"):
        assert noise in stderr


TEXTS = [
    "two\nlines\r\nand a tab\t",
    "line separators \u2028 \u2029 and NUL \x00",
    "non-ASCII: é ✓ 𝄞 🙂",
    "a lone surrogate: \ud800",
]


async def test_messages_are_single_utf8_lines(workspace: Path) -> None:
    """Transports: "JSON-RPC messages MUST be UTF-8 encoded"; "Messages are delimited by
    newlines (\\n), and MUST NOT contain embedded newlines." Text with newlines, line and
    paragraph separators, NUL, characters outside the BMP — and a lone surrogate, which has
    no UTF-8 form — comes back from the agent on one line of valid UTF-8 each (the line is
    decoded strictly as it is read), with the text intact wherever UTF-8 can carry it."""
    async with sidecar(*SCRIPT_DRIVER) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        for text in TEXTS:
            turn = await agent.prompt(session, f"echo {text}")
            (chunk,) = turn.of_kind("agent_message_chunk")
            assert chunk["content"]["text"] == text


async def test_messages_are_framed_by_newlines_not_by_writes(workspace: Path) -> None:
    """Transports, "stdio": "Messages are delimited by newlines (\\n)". A request that
    arrives in pieces over several writes, and several requests in a single write, are each
    read as the messages the newlines delimit, and each is answered."""
    async with sidecar(*SCRIPT_DRIVER) as agent:
        await agent.initialize()
        line = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": "split",
                "method": "session/new",
                "params": {"cwd": str(workspace), "mcpServers": []},
            }
        ).encode()
        for piece in (line[:7], line[7:30], line[30:]):
            agent.wire.writer.write(piece)
            await agent.wire.writer.drain()
            await asyncio.sleep(0.05)
        agent.wire.sent_methods["split"] = "session/new"
        agent.wire.writer.write(b"\n")
        assert "sessionId" in (await agent.response_to("split"))["result"]
        batch = b"".join(
            json.dumps({"jsonrpc": "2.0", "id": f"b{i}", "method": "session/list"}).encode() + b"\n"
            for i in range(3)
        )
        agent.wire.sent_methods.update({f"b{i}": "session/list" for i in range(3)})
        await agent.wire.send_line(batch)
        # Each is answered; JSON-RPC matches answers by id, in whatever order they come.
        pending = {f"b{i}" for i in range(3)}
        while pending:
            answer = await agent.read_until(lambda m: "method" not in m and m.get("id") in pending)
            assert "sessions" in answer["result"]
            pending.discard(answer["id"])


@pytest.mark.process  # exit and signals of a process
@pytest.mark.parametrize("how", ["end of input", "SIGTERM"])
async def test_the_agent_exits_promptly_when_told_to(how: str, workspace: Path) -> None:
    """Transports, "stdio": "The client launches the agent as a subprocess" and speaks to it
    over stdin/stdout. The documentation does not spell out shutdown; what a client needs is
    that the subprocess ends promptly when its input ends or it is sent SIGTERM — here with a
    30-second command running — exiting 0 within a few seconds, after answering the running
    prompt (JSON-RPC 2.0: every request gets a response), ``cancelled``."""
    async with sidecar_process(*TOOLS) as agent:
        await agent.initialize()
        session = await agent.new_session(workspace)
        prompt = await agent.start(session, "!sleep 30")
        await agent.update_where(lambda u: u.get("status") == "in_progress")
        if how == "SIGTERM":
            assert agent.process is not None
            agent.process.send_signal(signal.SIGTERM)
        # Exiting before the command ends (EXIT_TIMEOUT, a hang guard, is far less than 30 s).
        status = await agent.close()
    assert status == 0
    answers = [m for m in agent.wire.received if "method" not in m and m.get("id") == prompt]
    assert answers == [{"jsonrpc": "2.0", "id": prompt, "result": {"stopReason": "cancelled"}}]
