"""What the job table tells a listener (v2's background list is built on it): a job kept
from a ``bash`` call knows the call; the listener hears it kept before any output after the
call returned, that output as a follower (the job's tail gets it too), and the shell's exit
once, after the last of it — its exit code, or the signal's (negative) when killed."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from acp_sidecar.tools import ToolRegistry
from acp_sidecar.tools.builtin.shell.jobs import Job, JobTable

from .helpers import run
from .test_jobs import BOUND, SessionWorkspace, until

WAITS = "while [ ! -e {0} ]; do sleep 0.02; done"
"""Ends once the test creates file ``{0}`` (no clock in the test)."""


class Heard:
    """A listener keeping what it heard, in order."""

    def __init__(self, jobs: JobTable) -> None:
        self.events: list[tuple[str, object]] = []
        self.exited = asyncio.Event()
        jobs.listen(self.kept, self.ended)

    def kept(self, job: Job) -> None:
        self.events.append(("kept", job.call_id))

        async def follow(text: str) -> None:
            self.events.append(("output", text))

        job.running.follow(follow)

    def ended(self, job: Job, returncode: int | None) -> None:
        self.events.append(("exited", returncode))
        self.exited.set()

    def output(self) -> str:
        return "".join(str(text) for kind, text in self.events if kind == "output")


@pytest.fixture
async def session(tmp_path: Path) -> AsyncIterator[SessionWorkspace]:
    root = tmp_path / "ws"
    root.mkdir()
    workspace = SessionWorkspace(cwd=os.path.realpath(root))
    try:
        yield workspace
    finally:
        await workspace.jobs.close(0.0)


async def test_a_listener_hears_the_job_its_later_output_and_its_exit_in_order(
    session: SessionWorkspace, registry: ToolRegistry
) -> None:
    heard = Heard(session.jobs)
    command = f"echo before; {WAITS.format('go')}; echo after; exit 4"
    result = await run(registry, session, "bash", {"command": command, "background": True})
    assert result.meta is not None and result.meta["job"] == 1
    [job] = session.jobs.jobs
    assert job.call_id == "c1"  # the call it was kept from
    assert heard.events == [("kept", "c1")]  # "before" went to the call, not the follower
    Path(session.path("go")).touch()
    await asyncio.wait_for(heard.exited.wait(), BOUND)
    assert heard.output() == "after\n"
    assert heard.events[-1] == ("exited", 4)  # after the last output
    assert job.running.tail.lines(2) == ["before", "after"]  # the tail kept it too


async def test_a_killed_job_is_heard_exiting_by_its_signal(
    session: SessionWorkspace, registry: ToolRegistry
) -> None:
    heard = Heard(session.jobs)
    await run(registry, session, "bash", {"command": "exec sleep 300", "background": True})
    [job] = session.jobs.jobs
    await session.jobs.kill(job.number)
    await asyncio.wait_for(heard.exited.wait(), BOUND)
    assert heard.events == [("kept", "c1"), ("exited", -15)]  # SIGTERM


async def test_a_stopped_follower_and_listener_hear_nothing_more(
    session: SessionWorkspace, registry: ToolRegistry
) -> None:
    events: list[str] = []
    stop = session.jobs.listen(lambda job: events.append("kept"), lambda *_: events.append("x"))
    stop()
    heard = Heard(session.jobs)
    await run(
        registry,
        session,
        "bash",
        {"command": f"{WAITS.format('go')}; echo late", "background": True},
    )
    [job] = session.jobs.jobs
    followed: list[str] = []

    async def follower(text: str) -> None:
        followed.append(text)

    job.running.follow(follower)()  # stopped at once
    Path(session.path("go")).touch()
    await asyncio.wait_for(heard.exited.wait(), BOUND)
    await until(lambda: heard.output() == "late\n", "the listener's follower got the output")
    assert events == [] and followed == []
