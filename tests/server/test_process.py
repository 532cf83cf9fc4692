"""The sidecar as a real process: stdout purity, big lines, shutdown on EOF and SIGTERM."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import pytest

from acp_sidecar.protocol import INVALID_REQUEST
from tests.procfs import peak_rss
from tests.server.wire import WireClient, spawned

pytestmark = pytest.mark.process  # fd 1, EOF and signals, memory of the process

ROOT = Path(__file__).resolve().parents[2]
MiB = 1024 * 1024


def sidecar(
    *args: str,
) -> AbstractAsyncContextManager[tuple[WireClient, asyncio.subprocess.Process]]:
    """``acp-sidecar serve --driver tests.drivers:ScriptDriver`` as a subprocess."""
    return spawned("serve", "--driver", "tests.drivers:ScriptDriver", *args)


async def finish(client: WireClient, process: asyncio.subprocess.Process) -> tuple[int, bytes]:
    """Wait for exit; check what is left on stdout; the exit status and stderr."""
    assert process.stderr is not None
    rest, stderr = await asyncio.wait_for(
        asyncio.gather(client.reader.read(), process.stderr.read()), 30
    )  # a hang guard
    for line in rest.splitlines():
        message = json.loads(line)
        client.check(message)
        client.received.append(message)
    return await process.wait(), stderr


async def test_stdout_carries_only_protocol_messages() -> None:
    async with sidecar() as (client, process):
        await client.initialize()
        session = await client.new_session()
        response = await client.next_response(await client.start_prompt(session, "noise"))
        assert response["result"] == {"stopReason": "end_turn"}
        assert client.texts() == ["quiet"]
        client.close()
        status, stderr = await finish(client, process)
    assert status == 0
    for noise in (b"print() noise", b"raw fd 1 noise", b"child noise", b"shell noise"):
        assert noise in stderr


@pytest.mark.parametrize("how", ["eof", "sigterm"])
async def test_shutdown_cancels_the_running_turn_and_exits_0(how: str) -> None:
    async with sidecar() as (client, process):
        await client.initialize()
        session = await client.new_session()
        prompt = await client.start_prompt(session, "ignore-cancel")  # the worst case
        await client.next_update()
        if how == "eof":
            client.close()
        else:
            process.send_signal(signal.SIGTERM)
        # The turn ignores cancellation for an hour: exiting at all is the shutdown bound.
        status, _ = await finish(client, process)
    assert status == 0
    answers = [m for m in client.received if m.get("id") == prompt]
    assert answers == [{"jsonrpc": "2.0", "id": prompt, "result": {"stopReason": "cancelled"}}]


async def test_a_50_mib_line_is_handled_with_bounded_memory() -> None:
    async with sidecar() as (client, process):
        await client.initialize()
        baseline = peak_rss(process.pid)
        blob = "x" * (50 * MiB)
        response = await client.request(
            "session/new", {"cwd": "/tmp", "mcpServers": [], "_meta": {"blob": blob}}, msg_id="big"
        )
        assert "sessionId" in response["result"]
        grown = peak_rss(process.pid) - baseline
        assert await client.new_session()
        client.close()
        status, _ = await finish(client, process)
    assert status == 0
    # The line, its text and the decoded value: a small multiple of the line, not more.
    assert grown < 4 * 50 * MiB, grown / MiB


async def test_a_line_over_64_mib_is_refused_unbuffered_and_serving_goes_on() -> None:
    async with sidecar() as (client, process):
        await client.initialize()
        baseline = peak_rss(process.pid)
        line = b'{"jsonrpc":"2.0","id":"huge","method":"initialize","params":{"x":"'
        await client.send_line(line + b"y" * (100 * MiB) + b'"}}')
        refusal = await client.receive()
        assert refusal["id"] is None
        assert refusal["error"]["code"] == INVALID_REQUEST
        assert str(64 * MiB) in refusal["error"]["message"]
        grown = peak_rss(process.pid) - baseline
        assert await client.new_session()
        client.close()
        status, _ = await finish(client, process)
    assert status == 0
    # At most the 64 MiB limit was buffered, never the whole 100 MiB line.
    assert grown < 64 * MiB + 16 * MiB, grown / MiB


async def test_a_bad_driver_spec_is_a_usage_error() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acp_sidecar",
        "serve",
        "--driver",
        "tests.drivers:NoSuchDriver",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 10)
    assert process.returncode == 2
    assert stdout == b""
    assert b"NoSuchDriver" in stderr


async def test_stdin_from_dev_null_exits_at_once() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "acp_sidecar",
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=ROOT,
    )
    stdout, stderr = await asyncio.wait_for(process.communicate(), 10)
    assert process.returncode == 0, stderr
    assert stdout == b""


async def test_requests_from_a_regular_file_are_answered(tmp_path: Path) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_text(
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
        '{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}'
    )
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "acp_sidecar", stdin=stdin, stdout=stdout, cwd=ROOT
        )
        assert await asyncio.wait_for(process.wait(), 10) == 0
    messages = [json.loads(line) for line in answers.read_text().splitlines()]
    assert [m.get("id") for m in messages] == [1, 2, None]
    assert "sessionId" in messages[1]["result"]
    # The console advertises the tools right after the session/new answer.
    assert messages[2]["params"]["update"]["sessionUpdate"] == "available_commands_update"


async def test_serving_collects_cycles_with_the_start_ups_objects_frozen() -> None:
    # cli.main pauses the collector for the start; serve must resume it once built.
    async with sidecar() as (client, process):
        await client.initialize()
        session = await client.new_session()
        await client.next_response(await client.start_prompt(session, "gc"))
        assert client.texts() == ["enabled=True frozen=True"]
        client.close()
        status, _ = await finish(client, process)
    assert status == 0
