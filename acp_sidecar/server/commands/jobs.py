"""``/jobs``, ``/kill N`` and ``/keep``: the session's job table, as its commands. All three
are immediate: a job is stopped, listed or kept while the turn that started it runs."""

from __future__ import annotations

from acp_sidecar.server.commands.base import CommandAnswer, CommandContext


async def jobs(context: CommandContext) -> CommandAnswer:
    """List the session's jobs with their last output lines."""
    from acp_sidecar.tools.builtin.shell.job_commands import jobs_command  # off the cold start

    table = context.connection.jobs_of(context.session)
    return CommandAnswer(await jobs_command(context.argument, table))


async def kill(context: CommandContext) -> CommandAnswer:
    """Stop one job (its process group) and forget it."""
    from acp_sidecar.tools.builtin.shell.job_commands import kill_command

    table = context.connection.jobs_of(context.session)
    return CommandAnswer(await kill_command(context.argument, table))


async def keep(context: CommandContext) -> CommandAnswer:
    """Let the running ``bash`` call return now, its processes kept as a job."""
    from acp_sidecar.tools.builtin.shell.job_commands import keep_command

    table = context.connection.jobs_of(context.session)
    return CommandAnswer(keep_command(context.argument, table))
