"""What a session command is, how a prompt is found to run one, and its turn's driver.

Invariants:
- A prompt runs a command when its first block is text that starts (after blanks) with
  ``/NAME`` for a NAME in the table, followed by a blank or the end; anything else, another
  ``/word`` included, goes to the driver unchanged.
- A command's turn is an ordinary turn (echoed, logged, replayed), logged as the command's
  so that no model's history holds it; its answer is agent text in one message (a notice),
  with the answer's links after the text.
- A handler's failure is the turn's answer (logged), never a failed ``session/prompt``.
- An ``immediate`` command sent while a turn runs runs beside it, at once: its answer is a
  notice in the running turn, and its prompt is not logged as one (that would end the running
  turn's history for the model).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Final

import attrs

from acp_sidecar.agent.driver import DriverBase, Turn, send_notice
from acp_sidecar.protocol.content import (
    ContentBlock,
    ResourceLinkContentBlock,
    TextContentBlock,
)
from acp_sidecar.protocol.initialize import PromptCapabilities
from acp_sidecar.protocol.session import StopReason
from acp_sidecar.protocol.updates import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
)

if TYPE_CHECKING:
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.server.session import Session

logger = logging.getLogger(__name__)

_TYPED: Final = re.compile(r"\s*/(\S+)(.*)", re.DOTALL)
"""``/NAME`` and what follows it, at the start of a prompt's first text."""


@attrs.frozen
class CommandAnswer:
    """What a command answers its turn with: ``text`` (Markdown), then ``links`` (files
    written for the user, as ``resource_link`` blocks) in the same agent message."""

    text: str
    links: tuple[ResourceLinkContentBlock, ...] = ()


@attrs.frozen
class CommandContext:
    """What a command's handler is given."""

    session: Session
    """The session the command runs in (its recorder, policy, roots, …)."""
    connection: Connection
    """The connection serving it (its store, tools, client, settings)."""
    turn: Turn | None
    """The turn the command runs as: ``send`` and ``notice`` answer in it (recorded like
    any turn's updates), ``signal`` is its cancellation, ``scope`` runs tool calls.
    ``None``: an immediate command running beside another turn."""
    argument: str
    """The text after the command's name (blanks around it removed; the text of later text
    blocks joined to it); ``""`` when none."""
    prompt: tuple[ContentBlock, ...]
    """The whole prompt, for a command that takes mentions (``resource_link`` blocks)."""


CommandHandler = Callable[[CommandContext], Awaitable[CommandAnswer]]
"""Runs one command to its answer."""


@attrs.frozen
class SessionCommand:
    """One session command: how it is advertised, and its handler."""

    name: str
    """Typed as ``/NAME`` (no slash here)."""
    description: str
    """What the editor's command menu says of it (one short sentence)."""
    hint: str | None
    """What the editor shows while its input is empty; ``None``: it takes none."""
    handler: CommandHandler = attrs.field(eq=False)
    """Runs it (see :class:`CommandContext`)."""
    immediate: bool = attrs.field(default=False, kw_only=True)
    """Whether it also runs while a turn runs, beside it (see the module invariants): for
    commands on what the running turn does (``/keep`` its command)."""

    def advertised(self) -> AvailableCommand:
        """The command as ``available_commands_update`` lists it."""
        hint = None if self.hint is None else AvailableCommandInput(hint=self.hint)
        return AvailableCommand(name=self.name, description=self.description, input=hint)


def find_command(
    prompt: Sequence[ContentBlock], commands: Sequence[SessionCommand]
) -> tuple[SessionCommand, str] | None:
    """The command ``prompt`` runs and its argument text (see the module invariants)."""
    if not prompt or not isinstance(first := prompt[0], TextContentBlock):
        return None
    typed = _TYPED.match(first.text)
    if typed is None:
        return None
    name, rest = typed.groups()
    for command in commands:
        if command.name == name:
            tail = "".join(b.text for b in prompt[1:] if isinstance(b, TextContentBlock))
            return command, (rest + tail).strip()
    return None


def advertised(
    commands: Sequence[SessionCommand], driver: AvailableCommandsUpdate | None
) -> AvailableCommandsUpdate:
    """The session's commands as advertised: the driver's (a console's tools), then the
    session's own; a driver's command named like a session command is left out, because
    the session's runs (such a prompt never reaches the driver)."""
    taken = {command.name for command in commands}
    listed = [] if driver is None else driver.available_commands
    kept = [command for command in listed if command.name not in taken]
    own = [command.advertised() for command in commands]
    return AvailableCommandsUpdate(available_commands=[*kept, *own])


class CommandDriver(DriverBase):
    """Runs one command as its turn's driver (see the module invariants)."""

    prompt_capabilities = PromptCapabilities()

    def __init__(
        self, command: SessionCommand, argument: str, session: Session, connection: Connection
    ) -> None:
        self.command = command
        self.argument = argument
        self.session = session
        self.connection = connection

    async def run_turn(self, turn: Turn) -> StopReason:
        context = CommandContext(
            session=self.session,
            connection=self.connection,
            turn=turn,
            argument=self.argument,
            prompt=turn.prompt,
        )
        answer = await answer_of(self.command, context)
        if turn.notice is not None:
            await turn.notice(answer.text, answer.links)
        else:
            await send_notice(turn, answer.text)
        return "end_turn"


async def answer_of(command: SessionCommand, context: CommandContext) -> CommandAnswer:
    """What ``command`` answers; its failure, logged, is the answer."""
    try:
        return await command.handler(context)
    except Exception as exc:
        logger.exception("the session command /%s failed", command.name)
        return CommandAnswer(f"`/{command.name}` failed: {exc}")


async def run_beside(
    command: SessionCommand,
    argument: str,
    prompt: Sequence[ContentBlock],
    session: Session,
    connection: Connection,
) -> None:
    """Run immediate ``command`` beside the turn ``session`` runs (see the module
    invariants); its answer names it, since no prompt of it is shown on a replay."""
    assert command.immediate
    context = CommandContext(
        session=session,
        connection=connection,
        turn=None,
        argument=argument,
        prompt=tuple(prompt),
    )
    answer = await answer_of(command, context)
    text = f"`/{command.name}`: {answer.text}"
    await session.notice(connection.send_update, text, answer.links)
