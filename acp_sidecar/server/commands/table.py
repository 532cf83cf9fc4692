"""The session's commands: adding one is one entry in :data:`SESSION_COMMANDS`."""

from __future__ import annotations

from typing import Final

from acp_sidecar.protocol.updates import AvailableCommand
from acp_sidecar.server.commands.base import SessionCommand
from acp_sidecar.server.commands.budget import budget
from acp_sidecar.server.commands.export import export
from acp_sidecar.server.commands.jobs import jobs, keep, kill
from acp_sidecar.server.commands.permissions import permissions
from acp_sidecar.server.commands.undo import redo, rewind, undo

SESSION_COMMANDS: Final[tuple[SessionCommand, ...]] = (
    SessionCommand(
        name="export",
        description="Write this session's transcript beside its log (HTML; `md`: Markdown).",
        hint="md for Markdown (default: HTML)",
        handler=export,
    ),
    SessionCommand(
        name="jobs",
        description="List the commands this session keeps running, with their last output.",
        hint=None,
        handler=jobs,
        immediate=True,
    ),
    SessionCommand(
        name="kill",
        description="Stop one of the session's jobs (its processes) and forget it.",
        hint="the job's number, as /jobs lists it",
        handler=kill,
        immediate=True,
    ),
    SessionCommand(
        name="keep",
        description="Let the running shell command go on as a job; the tool call returns now.",
        hint=None,
        handler=keep,
        immediate=True,
    ),
    SessionCommand(
        name="undo",
        description="Take back the last turn's file changes (N: the last N turns).",
        hint="N turns (default 1), then --force FILE… to take changed files anyway",
        handler=undo,
    ),
    SessionCommand(
        name="redo",
        description="Give back what the last undo took.",
        hint=None,
        handler=redo,
    ),
    SessionCommand(
        name="rewind",
        description="List the turns; N: go back to just after turn N.",
        hint="the turn to go back to, as /rewind lists them",
        handler=rewind,
    ),
    SessionCommand(
        name="permissions",
        description="The permission rules in force; add, remove, trust.",
        hint="add|remove [project|user] RULE, trust, untrust",
        handler=permissions,
    ),
    SessionCommand(
        name="budget",
        description="Show or set the session's model budget (cost, tokens, time).",
        hint="cost 2.50 | tokens 200000 | time 10m | off",
        handler=budget,
    ),
)
"""Every session command, in the order the editor lists them (after a console's tools)."""

ADVERTISED: Final[tuple[AvailableCommand, ...]] = tuple(c.advertised() for c in SESSION_COMMANDS)
"""The session commands as ``available_commands_update`` lists them (made once: every turn
hands them to its driver)."""
