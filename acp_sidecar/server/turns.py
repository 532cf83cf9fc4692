"""Running a prompt turn on a connection: what ``session/prompt`` and a turn a steer
started share (the driver, the client, what the user is told while it runs and, about the
jobs still running, when it ends). A prompt that runs one of the session's own commands
(:mod:`acp_sidecar.server.commands`) is that command's turn, whatever the driver: no driver
sees it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from acp_sidecar.bridge.notices import UserMessage, shows_notices
from acp_sidecar.protocol.content import (
    AudioContentBlock,
    ContentBlock,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
)
from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.protocol.initialize import PromptCapabilities
from acp_sidecar.protocol.session import StopReason

if TYPE_CHECKING:
    from acp_sidecar.agent.delegation import Delegate
    from acp_sidecar.agent.driver import Driver, Turn
    from acp_sidecar.server.commands.base import SessionCommand
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.session import Session

    DelegateFor = Callable[
        [Connection, Session, Driver, Callable[[], Turn], dict[str, str]], Delegate | None
    ]


class _Commands:
    """What a turn uses of the session commands: imported with the first prompt, not at start
    (a first ``session/new`` needs neither them nor the undo, export and jobs modules they
    run), then kept, since an import statement run each turn costs it as much as a rules
    check."""

    def __init__(self) -> None:
        from acp_sidecar.server.commands.base import CommandDriver, find_command, run_beside
        from acp_sidecar.server.commands.table import ADVERTISED, SESSION_COMMANDS

        self.driver = CommandDriver
        self.find = find_command
        self.run_beside = run_beside
        self.table = SESSION_COMMANDS
        self.advertised = ADVERTISED


_commands: list[_Commands] = []
"""The one :class:`_Commands`, once a prompt came."""

_delegate_for: list[DelegateFor] = []
""":func:`~acp_sidecar.server.subagents.delegate_for`, once a turn could delegate (it loads
the store: not at start)."""


def _loaded_commands() -> _Commands:
    if not _commands:
        _commands.append(_Commands())
    return _commands[0]


async def run_prompt_turn(
    server: Connection,
    session: Session,
    prompt: list[ContentBlock],
    *,
    started: Callable[[], None] | None = None,
    accepted: Callable[[str], None] | None = None,
) -> StopReason:
    """Run one turn of ``session`` on ``prompt`` through the server's driver, or the session
    command it names; ``started`` is called once the turn runs (the session refuses a second
    one from then on), ``accepted`` with the prompt's message id once it is echoed."""
    session_id = session.session_id

    def waiting(text: str, first: bool) -> None:  # a line, not a line every tick, as text
        if first or shows_notices(server.client_capabilities):
            server.tell(session_id, UserMessage("info", text))

    model_driver = server.driver

    def delegating(turn: Callable[[], Turn], links: dict[str, str]) -> Delegate | None:
        if not _delegate_for:
            from acp_sidecar.server.subagents import delegate_for

            _delegate_for.append(delegate_for)
        return _delegate_for[0](server, session, model_driver, turn, links)

    commands = _commands[0] if _commands else _loaded_commands()
    found = commands.find(prompt, commands.table)
    if found is not None and runs_beside(found[0], session):
        await commands.run_beside(found[0], found[1], prompt, session, server)
        return "end_turn"
    driver: Driver = model_driver
    if found is not None:
        command, argument = found
        driver = commands.driver(command, argument, session, server)
    if session.running is None:  # told as the turn starts, whether or not it calls a tool
        server.tell_rule_problems(session)
    stop_reason = await session.run_turn(
        driver,
        prompt,
        server.send_update,
        server.client,
        server.call_scope,
        grace=server.cancel_grace,
        inform=lambda text: server.tell(session_id, UserMessage("info", text)),
        waiting=waiting,
        started=started,
        accepted=accepted,
        command=None if found is None else found[0].name,
        commands=commands.advertised,
        delegating=None if found is not None else delegating,
    )
    await tell_running_jobs(server, session)
    return stop_reason


async def tell_running_jobs(server: Connection, session: Session) -> None:
    """At the end of a turn, tell the user which of the session's jobs still run (not
    recorded: on a replay they would describe processes long gone)."""
    jobs = session.jobs
    if jobs is None or not jobs.jobs:
        return
    from acp_sidecar.tools.builtin.shell.job_commands import still_running_notice

    text = still_running_notice(await jobs.views())
    if text is not None:
        server.tell(session.session_id, UserMessage("info", text))


def runs_command(prompt: list[ContentBlock]) -> bool:
    """Whether ``prompt`` runs a session command (a steer of one is never injected into a
    running turn: it waits and runs as a turn of its own)."""
    commands = _loaded_commands()
    return commands.find(prompt, commands.table) is not None


async def run_beside_turn(server: Connection, session: Session, prompt: list[ContentBlock]) -> bool:
    """Run the immediate session command ``prompt`` names beside the turn ``session`` runs;
    whether it did (no turn runs, or the prompt is no such command: it did not)."""
    commands = _loaded_commands()
    found = commands.find(prompt, commands.table)
    if found is None or not runs_beside(found[0], session):
        return False
    command, argument = found
    await commands.run_beside(command, argument, prompt, session, server)
    return True


def check_prompt_content(prompt: list[ContentBlock], accepted: PromptCapabilities) -> None:
    """Refuse content the agent did not advertise (``-32602`` naming the block)."""
    for index, block in enumerate(prompt):
        match block:
            case ImageContentBlock() if not accepted.image:
                kind = "image"
            case AudioContentBlock() if not accepted.audio:
                kind = "audio"
            case EmbeddedResourceContentBlock() if not accepted.embedded_context:
                kind = "resource"
            case _:
                continue
        raise AcpError.invalid_params(
            f"Invalid params: prompt/{index}: {kind} content is not supported by this agent"
        )


def runs_beside(command: SessionCommand, session: Session) -> bool:
    """Whether ``command`` runs beside the turn ``session`` runs (none runs: it is a turn)."""
    return command.immediate and session.running is not None
