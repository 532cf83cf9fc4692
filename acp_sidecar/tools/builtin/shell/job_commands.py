"""The user's commands on a session's jobs, as text in, text out: ``/jobs``, ``/kill N`` and
``/keep``. The session's command table calls them; nothing here knows the wire."""

from __future__ import annotations

from acp_sidecar.text import shorten
from acp_sidecar.tools.builtin.shell.jobs import JobTable, JobView

COMMAND_SHOWN = 80
"""The longest command a listing shows, in characters."""


def _state(view: JobView) -> str:
    if view.running:
        return "running"
    if view.exit_code is None:
        return "ended"
    if view.exit_code < 0:
        return f"ended (signal {-view.exit_code})"
    return f"ended (exit code {view.exit_code})"


def describe_job(view: JobView) -> str:
    """One job's line: number, pid, state, start, command."""
    command = shorten(" ".join(view.command.split()), COMMAND_SHOWN)
    return f"{view.number}. pid {view.pid}, {_state(view)}, started {view.started}: `{command}`"


async def jobs_command(argument: str, jobs: JobTable) -> str:
    """``/jobs``: every job of the session, with its last output lines."""
    if argument.strip():
        return "`/jobs` takes no argument: it lists the session's jobs."
    views = await jobs.views()
    if not views:
        return "No jobs: nothing this session started is kept running."
    lines = ["Jobs of this session:"]
    for view in views:
        lines.append(describe_job(view))
        lines.extend(f"    {line}" for line in view.tail)
    return "\n".join(lines)


async def kill_command(argument: str, jobs: JobTable) -> str:
    """``/kill N``: stop job N (its processes, SIGTERM then SIGKILL) and forget it."""
    text = argument.strip()
    if not text.isdigit():
        return "Usage: `/kill N`, N being a job's number (`/jobs` lists them)."
    number = int(text)
    job = jobs.get(number)
    if job is None:
        return f"There is no job {number} (`/jobs` lists them)."
    was_running = await job.running.alive()
    await jobs.kill(number)
    command = shorten(" ".join(job.command.split()), COMMAND_SHOWN)
    if not was_running:
        return f"Job {number} (`{command}`) had already ended; it is forgotten."
    return f"Stopped job {number} (`{command}`)."


def keep_command(argument: str, jobs: JobTable) -> str:
    """``/keep``: the latest running ``bash`` call of the session returns now, and its
    processes keep running as a job."""
    if argument.strip():
        return "`/keep` takes no argument: it keeps the running command as a job."
    request = jobs.keep_running()
    if request is None:
        return "No command is running that could be kept."
    command = shorten(" ".join(request.command.split()), COMMAND_SHOWN)
    return f"`{command}` keeps running as a job of this session (`/jobs` lists it)."


def still_running_notice(views: list[JobView]) -> str | None:
    """What the end of a turn tells the user about jobs still running; None: none are."""
    running = [view for view in views if view.running]
    if not running:
        return None
    count = len(running)
    head = f"{count} job{'s' if count > 1 else ''} still running:"
    lines = [head, *(describe_job(view) for view in running)]
    lines.append("`/jobs` shows their output; `/kill N` stops one.")
    return "\n".join(lines)
