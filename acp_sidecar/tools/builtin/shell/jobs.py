"""A session's kept jobs: ``bash`` calls whose processes outlive the call because they were
asked to (``background: true``, or ``/keep`` while the call ran).

Invariants:
- A job owns its :class:`~acp_sidecar.tools.builtin.shell.process.RunningCommand` (the
  reaper's bookkeeping of the call moved here): only :meth:`JobTable.kill` and
  :meth:`JobTable.close` end its processes, through the same pidfd-checked signals.
- Every job still held is in the ledger (when there is one), so a crash leaves a record the
  next start can act on; a job leaves the ledger when it is stopped.
- A listener hears of a job before any of its output after its call returned, and of its
  shell's exit once, after the last of that output (:meth:`JobTable.listen`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import attrs

from acp_sidecar.tools.builtin.shell.reaper import ProcessInfo
from acp_sidecar.tools.listeners import Listeners, hear

if TYPE_CHECKING:
    from acp_sidecar.tools.builtin.shell.job_records import JobLedger
    from acp_sidecar.tools.builtin.shell.process import RunningCommand

logger = logging.getLogger(__name__)

KILL_GRACE_S = 1.0
"""Between SIGTERM and SIGKILL when a job is killed or its session closes."""
SHUTDOWN_GRACE_S = 0.5
"""The same at shutdown, when the whole process must be gone within 2 s."""
TAIL_LINES = 5
"""The output lines a listing shows of each job."""


@attrs.frozen
class JobView:
    """One job as a listing shows it."""

    number: int
    pid: int
    """The job's shell: the number of its session and process group."""
    command: str
    started: str
    """When it started (local time, ``HH:MM:SS``)."""
    running: bool
    """Whether any of its processes still runs."""
    exit_code: int | None
    """The shell's exit status, once it exited (its daemons may still run)."""
    tail: tuple[str, ...]
    """Its last output lines."""


class Job:
    """One kept job."""

    def __init__(
        self, number: int, command: str, running: RunningCommand, call_id: str | None = None
    ) -> None:
        self.number = number
        self.command = command
        self.running = running
        self.call_id = call_id
        """The ``bash`` call it was kept from (its card's terminal), when known."""
        self.started = time.strftime("%H:%M:%S")

    async def view(self) -> JobView:
        returncode = self.running.process.returncode
        return JobView(
            number=self.number,
            pid=self.running.pid,
            command=self.command,
            started=self.started,
            running=await self.running.alive(),
            exit_code=returncode,
            tail=tuple(self.running.tail.lines(TAIL_LINES)),
        )


class KeepRequest:
    """One running ``bash`` call that the table may take as a job (see
    :class:`~acp_sidecar.tools.builtin.shell.process.Keeper`)."""

    def __init__(
        self,
        table: JobTable,
        command: str,
        *,
        background: bool,
        window: float,
        call_id: str | None = None,
    ) -> None:
        self._table = table
        self.command = command
        self.call_id = call_id
        self.background = background
        self._window = window
        self._now = asyncio.Event()
        self.number: int | None = None

    def keep_now(self) -> None:
        """Take the call as a job at once (``/keep``)."""
        self._now.set()

    async def wanted(self) -> None:
        if not self.background:
            await self._now.wait()
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._now.wait(), self._window)

    async def take(self, running: RunningCommand) -> int:
        self.number = (await self._table.adopt(running, self.command, self.call_id)).number
        return self.number


class JobTable:
    """The jobs of one session, numbered from 1 in the order they were kept."""

    def __init__(self, session_id: str = "", ledger: JobLedger | None = None) -> None:
        self.session_id = session_id
        self.ledger = ledger
        self._jobs: dict[int, Job] = {}
        self._next = 1
        self._calls: list[KeepRequest] = []
        self._listeners: Listeners[tuple[OnKept, OnExited]] = Listeners()
        self._watching: set[asyncio.Task[None]] = set()
        self.closed = False

    @property
    def jobs(self) -> list[Job]:
        """Every job held, in number order (ended ones too, until killed or closed)."""
        return list(self._jobs.values())

    def get(self, number: int) -> Job | None:
        return self._jobs.get(number)

    @contextlib.contextmanager
    def call(
        self, command: str, *, background: bool, window: float = 0.0, call_id: str | None = None
    ) -> Iterator[KeepRequest]:
        """A ``bash`` call running: ``/keep`` may take it (the latest call first)."""
        request = KeepRequest(self, command, background=background, window=window, call_id=call_id)
        self._calls.append(request)
        try:
            yield request
        finally:
            self._calls.remove(request)

    def keep_running(self) -> KeepRequest | None:
        """Ask the latest running foreground call to become a job; it, or None."""
        for request in reversed(self._calls):
            if not request.background and request.number is None:
                request.keep_now()
                return request
        return None

    def listen(self, on_kept: OnKept, on_exited: OnExited) -> Callable[[], None]:
        """Hear of each job kept from now on, and of its shell's exit (its return code;
        ``None``: not known); returns what stops it."""
        return self._listeners.add((on_kept, on_exited))

    async def adopt(self, running: RunningCommand, command: str, call_id: str | None = None) -> Job:
        """Hold ``running`` as the next job (a closed table stops it instead, at once)."""
        job = Job(self._next, command, running, call_id)
        self._next += 1
        self._jobs[job.number] = job
        # Before the first await: the output after the call returned may flow from then on.
        for on_kept, _ in self._listeners:
            hear(on_kept, job, what="a job listener")
        if self._listeners:
            watching = asyncio.ensure_future(self._watch(job))
            self._watching.add(watching)
            watching.add_done_callback(self._watching.discard)
        members = await asyncio.to_thread(running.call.members)
        self.record(job, members or [])
        if self.closed:  # the session closed while the call ran: nothing may outlive it
            await self.kill(job.number, 0.0)
        return job

    async def _watch(self, job: Job) -> None:
        returncode = await job.running.finished()
        for _, on_exited in self._listeners:
            hear(on_exited, job, returncode, what="a job listener")

    def record(self, job: Job, members: Sequence[ProcessInfo]) -> None:
        """Bring ``job``'s record up to date with its processes now."""
        if self.ledger is None:
            return
        from acp_sidecar.tools.builtin.shell.job_records import JobRecord

        processes = tuple((info.pid, info.started) for info in members if not info.dead)
        self.ledger.put(JobRecord(self.session_id, job.number, job.running.call.token, processes))

    async def views(self) -> list[JobView]:
        """Every job as a listing shows it; the records refreshed on the way."""
        views = []
        for job in self.jobs:
            members = await asyncio.to_thread(job.running.call.members)
            self.record(job, members or [])
            views.append(await job.view())
        return views

    async def still_running(self) -> list[JobView]:
        """The jobs with a process still running."""
        return [view for view in await self.views() if view.running]

    async def kill(self, number: int, grace: float = KILL_GRACE_S) -> Job | None:
        """Stop job ``number`` (its processes SIGTERMed, SIGKILLed after ``grace``, reaped)
        and forget it; the job, or None when there is no such job."""
        job = self._jobs.pop(number, None)
        if job is None:
            return None
        try:
            await job.running.stop(grace)
        finally:
            if self.ledger is not None:
                self.ledger.drop(self.session_id, number)
        return job

    async def close(self, grace: float = KILL_GRACE_S) -> None:
        """Stop every job (the session closes); a call kept later is stopped at once."""
        self.closed = True
        outcomes = await asyncio.gather(
            *(self.kill(number, grace) for number in list(self._jobs)), return_exceptions=True
        )
        for outcome in outcomes:
            if isinstance(outcome, Exception):
                logger.error("stopping a job failed", exc_info=outcome)


OnKept = Callable[[Job], None]
"""Hears a job just kept."""
OnExited = Callable[[Job, int | None], None]
"""Hears that a job's shell exited, with its return code (negative: the signal's number)."""


def jobs_of(context: object) -> JobTable | None:
    """The job table a call's context carries; None outside a session."""
    jobs = getattr(context, "jobs", None)
    return jobs if isinstance(jobs, JobTable) else None
