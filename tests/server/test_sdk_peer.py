"""A real peer: the official ACP Python SDK's client side drives ``acp-sidecar``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import acp
import pytest
from acp.connection import StreamDirection, StreamEvent
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
)

from tests.acp_schema import SchemaViolation
from tests.fakes import ScriptDriverEditor
from tests.isolation import child_variables
from tests.sdk import SchemaObserver

pytestmark = pytest.mark.process  # the official SDK's client as the sidecar's peer

ROOT = Path(__file__).resolve().parents[2]


async def test_the_sdk_client_runs_initialize_session_prompt_and_cancel(tmp_path: Path) -> None:
    client = ScriptDriverEditor()
    observer = SchemaObserver()
    async with acp.spawn_agent_process(
        client,
        sys.executable,
        "-m",
        "acp_sidecar",
        "serve",
        "--driver",
        "tests.drivers:ScriptDriver",
        env=child_variables() | {"PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        observers=[observer],
    ) as (connection, process):
        init = await connection.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
            ),
        )
        assert init.protocol_version == 1
        assert init.agent_info is not None and init.agent_info.name == "acp-sidecar"
        assert init.agent_capabilities is not None
        assert init.agent_capabilities.load_session is True  # sessions are stored

        session = await connection.new_session(cwd=str(tmp_path), mcp_servers=[])

        done = await connection.prompt(
            session_id=session.session_id, prompt=[acp.text_block("echo hello from the SDK")]
        )
        assert done.stop_reason == "end_turn"
        assert client.texts[-1] == "hello from the SDK"

        done = await connection.prompt(
            session_id=session.session_id, prompt=[acp.text_block("permission")]
        )
        assert done.stop_reason == "end_turn"
        assert client.permission_requests == 1
        assert client.texts[-1] == "permission: selected allow"

        done = await connection.prompt(
            session_id=session.session_id, prompt=[acp.text_block("read /etc/hostname")]
        )
        assert client.texts[-1] == "read: contents of /etc/hostname"

        turn = asyncio.create_task(
            connection.prompt(session_id=session.session_id, prompt=[acp.text_block("wait")])
        )
        await asyncio.wait_for(client.started.wait(), 60)  # hang guards
        await connection.cancel(session_id=session.session_id)
        done = await asyncio.wait_for(turn, 60)
        assert done.stop_reason == "cancelled"
    assert process.returncode == 0
    observer.check_clean()
    assert observer.checked >= 12


def test_a_message_off_the_schema_fails_the_test_though_the_sdk_only_logs_it() -> None:
    removed = {"sessionId": "s", "update": {"sessionUpdate": "plan_removed", "planId": "p"}}
    event = StreamEvent(
        StreamDirection.INCOMING, {"jsonrpc": "2.0", "method": "session/update", "params": removed}
    )
    stable = SchemaObserver()
    with pytest.raises(SchemaViolation):
        stable(event)  # what the SDK catches and logs
    with pytest.raises(AssertionError, match="plan_removed"):
        stable.check_clean()  # what fails the test
    stable.check_clean(since=1)
    unstable = SchemaObserver(unstable=True)  # a plan operation: the unstable schema's
    unstable(event)
    unstable.check_clean()
    broken = {"sessionId": "s", "update": {"sessionUpdate": "plan_removed"}}
    with pytest.raises(SchemaViolation):
        unstable(StreamEvent(event.direction, {**event.message, "params": broken}))
