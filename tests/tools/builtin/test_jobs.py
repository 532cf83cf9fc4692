"""Kept jobs: a ``bash`` call whose processes outlive it only when asked, listed, killed,
stopped with the session, and stopped by the next start after a crash.

In process (this test process is the "sidecar"; it is not a subreaper): the daemons here stay
in the call's session or keep a parent in it, so the reaper finds them; the subreaper case
(a double fork) is in ``tests/server/test_jobs_process.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from acp_sidecar.tools import ToolExecutionResult, ToolRegistry
from acp_sidecar.tools.builtin.bash import BashArgs, present_bash_result
from acp_sidecar.tools.builtin.shell.job_commands import (
    jobs_command,
    keep_command,
    kill_command,
    still_running_notice,
)
from acp_sidecar.tools.builtin.shell.job_records import JobLedger, JobRecord, recover_jobs
from acp_sidecar.tools.builtin.shell.jobs import JobTable
from acp_sidecar.tools.builtin.shell.reaper import CallProcesses, read_process
from acp_sidecar.tools.environment import child_environment
from tests.refused import refuse_stats_under

from .helpers import Workspace, run

BOUND = 20.0
"""A hang guard: every wait ends as soon as its condition holds."""

DAEMON = "sh -c 'echo $$ > d.pid.tmp && mv d.pid.tmp d.pid; exec sleep 300' &"
"""A daemon in the call's session that outlives the shell (which exits at once)."""


@attrs.define
class SessionWorkspace(Workspace):
    """A workspace that carries a session's job table, as a session's call scope does."""

    jobs: JobTable = attrs.field(factory=JobTable)


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[SessionWorkspace]:
    root = tmp_path / "ws"
    root.mkdir()
    workspace = SessionWorkspace(cwd=os.path.realpath(root))
    workspace.jobs = JobTable("s1", JobLedger(tmp_path / "jobs"))
    try:
        yield workspace
    finally:
        await workspace.jobs.close(0.0)


def text(result: ToolExecutionResult) -> str:
    assert not result.is_error, result.error
    return "".join(block.text for block in result.content if hasattr(block, "text"))


def alive(pid: int) -> bool:
    info = read_process(pid)
    return info is not None and not info.dead


async def until(condition: Any, what: str) -> None:
    for _ in range(int(BOUND / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"never: {what}")


async def pid_in(path: Path) -> int:
    await until(path.exists, f"{path.name} written")
    return int(path.read_text())


async def test_a_background_daemon_is_kept_listed_and_killed(
    session: SessionWorkspace, registry: ToolRegistry
) -> None:
    command = f"{DAEMON} echo started"
    result = await run(registry, session, "bash", {"command": command, "background": True})
    daemon = await pid_in(Path(session.path("d.pid")))
    [job] = session.jobs.jobs
    assert text(result).endswith(
        f"[Still running as job 1 (pid {job.running.pid}): it keeps running after this call, "
        "until the user stops it (/kill 1) or the session closes.]"
    )
    assert result.meta is not None and result.meta["job"] == 1
    card = present_bash_result(BashArgs(command=command), result)
    assert card is not None and card.title == f"{command} (kept running as job 1)"
    assert card.exit_code is None and card.signal is None
    assert alive(daemon)
    await until(lambda: job.running.tail.lines(1) == ["started"], "the job's output kept")

    listing = await jobs_command("", session.jobs)
    assert listing.splitlines() == [
        "Jobs of this session:",
        f"1. pid {job.running.pid}, running, started {job.started}: `{command}`",
        "    started",
    ]
    notice = still_running_notice(await session.jobs.views())
    assert notice is not None and notice.splitlines()[0] == "1 job still running:"

    assert await kill_command("1", session.jobs) == f"Stopped job 1 (`{command}`)."
    assert not alive(daemon)
    assert session.jobs.jobs == []
    assert await jobs_command("", session.jobs) == (
        "No jobs: nothing this session started is kept running."
    )
    assert still_running_notice(await session.jobs.views()) is None


async def test_the_default_call_still_reaps_its_daemon_once_the_shell_exits(
    session: SessionWorkspace, registry: ToolRegistry
) -> None:
    # The shell exits at once; its daemon is still in the call's session: it is ended.
    command = "sh -c 'echo $$ > d.pid; exec sleep 300' > /dev/null 2>&1 & sleep 0.1"
    result = await run(registry, session, "bash", {"command": command})
    assert text(result) == "(no output)\n[Exit code 0]"
    daemon = await pid_in(Path(session.path("d.pid")))
    assert not alive(daemon)
    assert session.jobs.jobs == []


async def test_a_background_command_that_leaves_nothing_running_is_a_plain_result(
    session: SessionWorkspace, registry: ToolRegistry
) -> None:
    result = await run(registry, session, "bash", {"command": "echo hi", "background": True})
    assert text(result) == "hi\n[Exit code 0]"
    assert session.jobs.jobs == []


async def test_background_outside_a_session_is_refused(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    result = await run(registry, workspace, "bash", {"command": "sleep 300", "background": True})
    assert result.is_error
    assert "/background: this call runs outside a session: no job can be kept" in str(
        result.content
    )


async def test_keep_takes_the_running_call_as_a_job(
    session: SessionWorkspace, registry: ToolRegistry
) -> None:
    assert keep_command("", session.jobs) == "No command is running that could be kept."
    command = "sh -c 'echo $$ > d.pid; exec sleep 300'"
    call = asyncio.ensure_future(run(registry, session, "bash", {"command": command}))
    daemon = await pid_in(Path(session.path("d.pid")))
    answer = keep_command("", session.jobs)
    assert answer == f"`{command}` keeps running as a job of this session (`/jobs` lists it)."
    result = await asyncio.wait_for(call, BOUND)
    assert "[Still running as job 1" in text(result)
    assert alive(daemon)
    assert keep_command("now", session.jobs).startswith("`/keep` takes no argument")
    await session.jobs.close()
    assert not alive(daemon)


async def test_closing_the_table_stops_every_job_and_forgets_their_records(
    session: SessionWorkspace, registry: ToolRegistry, tmp_path: Path
) -> None:
    pids = []
    for name in ("a", "b"):
        command = f"sh -c 'echo $$ > {name}.tmp && mv {name}.tmp {name}; exec sleep 300' & wait"
        await run(registry, session, "bash", {"command": command, "background": True})
        pids.append(await pid_in(Path(session.path(name))))
    assert [job.number for job in session.jobs.jobs] == [1, 2]
    ledger = session.jobs.ledger
    assert ledger is not None and ledger.path.exists()
    recorded = json.loads(ledger.path.read_text())
    assert [job["number"] for job in recorded["jobs"]] == [1, 2]
    await session.jobs.close()
    assert not any(alive(pid) for pid in pids)
    assert not ledger.path.exists()
    # A call kept after the close is stopped at once: nothing outlives the session.
    late = "sleep 300 & echo $! > late.pid"
    result = await run(registry, session, "bash", {"command": late, "background": True})
    daemon = int(Path(session.path("late.pid")).read_text())
    assert "[Still running as job 3" in text(result)
    assert not alive(daemon) and session.jobs.jobs == []


async def test_kill_answers_for_bad_numbers_and_ended_jobs(
    session: SessionWorkspace, registry: ToolRegistry
) -> None:
    usage = "Usage: `/kill N`, N being a job's number (`/jobs` lists them)."
    assert await kill_command("", session.jobs) == usage
    assert await kill_command("one", session.jobs) == usage
    assert await kill_command("-1", session.jobs) == usage
    assert await kill_command("7", session.jobs) == "There is no job 7 (`/jobs` lists them)."
    assert (await jobs_command("all", session.jobs)).startswith("`/jobs` takes no argument")
    command = "sh -c 'echo $$ > d.pid; exec sleep 300' & wait"
    await run(registry, session, "bash", {"command": command, "background": True})
    [job] = session.jobs.jobs
    os.kill(await pid_in(Path(session.path("d.pid"))), signal.SIGKILL)
    await until(lambda: job.running.process.returncode is not None, "the job's shell exited")
    listing = await jobs_command("", session.jobs)
    assert listing.splitlines()[1].startswith(f"1. pid {job.running.pid}, ended (exit code 0)")
    assert await kill_command("1", session.jobs) == (
        f"Job 1 (`{' '.join(command.split())}`) had already ended; it is forgotten."
    )


async def test_a_crashed_sidecars_jobs_are_stopped_at_the_next_start(
    session: SessionWorkspace, registry: ToolRegistry, tmp_path: Path
) -> None:
    records = tmp_path / "records"
    # The sidecar that "crashed": the same pid as this process, another start time.
    crashed_ledger = JobLedger(records, owner=(os.getpid(), 0))
    crashed = JobTable("s1", crashed_ledger)
    crashed_workspace = SessionWorkspace(cwd=session.cwd, jobs=crashed)
    await run(registry, crashed_workspace, "bash", {"command": DAEMON, "background": True})
    daemon = await pid_in(Path(session.path("d.pid")))
    # A recorded pid that is now another process (its start time differs): never touched.
    bystander = await asyncio.create_subprocess_exec(
        "sleep", "300", env=child_environment(), start_new_session=True
    )
    # A live sidecar's records (this process's own, with its true start time) are left.
    live = JobLedger(records)
    try:
        body = json.loads(crashed_ledger.path.read_text())
        body["jobs"][0]["processes"].append([bystander.pid, 1])
        crashed_ledger.path.write_text(json.dumps(body))
        other = CallProcesses()
        spared = await asyncio.create_subprocess_exec(
            "sleep", "300", env=other.environment(child_environment()), start_new_session=True
        )
        info = read_process(spared.pid)
        assert info is not None
        live.put(JobRecord("s2", 1, other.token, ((spared.pid, info.started),)))

        assert recover_jobs(records, grace=0.5) >= 1
        assert not alive(daemon)
        assert alive(bystander.pid) and alive(spared.pid)
        assert not crashed_ledger.path.exists()
        assert live.path.exists()
        spared.kill()
        await spared.wait()
    finally:
        for job in crashed.jobs:
            job.running.release()
        bystander.kill()
        await bystander.wait()


def test_recovering_from_a_store_where_no_job_was_ever_kept_stops_nothing(
    tmp_path: Path,
) -> None:
    assert recover_jobs(tmp_path / "never-made") == 0
    assert not (tmp_path / "never-made").exists()
    (tmp_path / "file").write_text("")  # a file where the directory would be
    assert recover_jobs(tmp_path / "file") == 0


def test_recovering_from_a_store_the_process_may_not_look_into_stops_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = tmp_path / "unsearchable"
    refuse_stats_under(monkeypatch, refused)
    assert recover_jobs(refused / "store" / ".jobs") == 0
