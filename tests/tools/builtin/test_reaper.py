"""Which processes the end of a call takes: its own, recognised by session or token; no others.

In process (this test process is the "sidecar"; it is not a subreaper, so these cases keep
their parents): a call that starts a ``setsid`` child — another session, recognised by the
call's token — is cancelled, and a long-lived child of the sidecar that is no call's (as an
MCP server is) and another call's command both keep running.
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from acp_sidecar.tools.builtin.shell.process import run_command
from acp_sidecar.tools.builtin.shell.reaper import CALL_VARIABLE, CallProcesses, read_process
from acp_sidecar.tools.cancel import CancelSignal
from acp_sidecar.tools.environment import child_environment


async def nothing(_text: str) -> None:
    return None


async def pid_in(path: Path) -> int:
    for _ in range(400):
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        await asyncio.sleep(0.025)
    raise AssertionError(f"{path.name} was never written")


def alive(pid: int) -> bool:
    info = read_process(pid)
    return info is not None and not info.dead


async def test_the_end_takes_the_calls_setsid_child_and_spares_other_children(
    tmp_path: Path,
) -> None:
    server = await asyncio.create_subprocess_exec(
        "sleep", "1000", env=child_environment(), start_new_session=True
    )
    other = CallProcesses()
    other_call = await asyncio.create_subprocess_exec(
        "sleep", "1000", env=other.environment(child_environment()), start_new_session=True
    )
    other.started(other_call.pid)
    left: list[int] = []
    try:
        cancel = CancelSignal()
        command = "setsid sh -c 'echo $$ > d.pid; exec sleep 1000' & wait"
        running = asyncio.ensure_future(
            run_command(command, cwd=str(tmp_path), timeout_s=60, signal=cancel, on_output=nothing)
        )
        daemon = await pid_in(tmp_path / "d.pid")
        left.append(daemon)
        info = read_process(daemon)
        assert info is not None and info.session == daemon  # it left the call's session
        environ = Path(f"/proc/{daemon}/environ").read_bytes()
        assert f"{CALL_VARIABLE}=".encode() in environ
        cancel.cancel("session/cancel")
        outcome = await asyncio.wait_for(running, 10)
        assert outcome.cancelled
        assert not alive(daemon)
        assert alive(server.pid) and alive(other_call.pid)
    finally:
        for pid in left:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        for process in (server, other_call):
            if process.returncode is None:
                process.send_signal(signal.SIGKILL)
            await process.wait()
