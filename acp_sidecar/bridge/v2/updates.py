"""The v2 encoder of the session updates the core sends (:func:`encode_update`), and the v1 →
v2 forms of the values session set-up answers with (config options, commands).

The core speaks v1 update values; this is the one place a v2 connection turns them into v2
wire. The match over the v1 union is exhaustive: a new v1 kind breaks the type check here.
"""

from __future__ import annotations

from typing import Any, TypeAlias, assert_never

from acp_sidecar import protocol as v1
from acp_sidecar.bridge.v2.cards import card_opened, card_patched
from acp_sidecar.bridge.v2.plans import plan_of
from acp_sidecar.bridge.v2.subagents import child_update
from acp_sidecar.protocol.encoding import to_wire
from acp_sidecar.protocol.session import ConfigOption as V1ConfigOption
from acp_sidecar.protocol.session import SessionConfigBooleanOption, SessionConfigOption
from acp_sidecar.protocol.v2 import options, updates

Encoded: TypeAlias = dict[str, Any] | tuple[dict[str, Any], ...] | None
"""One update's wire form: one dict, several in order, or none."""


class NotServedOverV2(TypeError):
    """A v1 update the core never sends a v2 client (the legacy ``plan``, a chunk without its
    id): raised rather than sent in a form the v2 schema does not know."""


def encode_update(update: v1.SessionUpdate) -> Encoded:
    """The v2 wire form of one core update: one dict, several in order (a card and its
    terminal), or ``None``: it has no v2 form and is not sent."""
    match update:  # the streamed chunks first: they are the hot path
        case v1.UserMessageChunk() | v1.AgentMessageChunk() | v1.AgentThoughtChunk():
            if update.message_id is None:
                raise NotServedOverV2(f"{update.session_update} without a messageId")
            return to_wire(update)  # v2 requires the id the core always stamps
        case v1.AvailableCommandsUpdate():
            commands = [command_of(c) for c in update.available_commands]
            return to_wire(
                updates.AvailableCommandsUpdate(available_commands=commands, meta=update.meta)
            )
        case v1.ConfigOptionUpdate():
            listed = [option_of(o) for o in update.config_options]
            return to_wire(updates.ConfigOptionUpdate(config_options=listed, meta=update.meta))
        case v1.CurrentModeUpdate():
            # v2 has no modes: the mode is the ``mode`` config option, which the answer of the
            # request that changed it (or a ``config_option_update``) already carries.
            return None
        case (
            v1.NoticeUpdate()
            | v1.SessionInfoUpdate()
            | v1.UsageUpdate()
            | v1.CompactionUpdate()
            | v1.CompactionSummaryChunk()
        ):
            return to_wire(update)  # the same shape in v2
        case v1.ToolCallStart():
            return card_opened(update)
        case v1.ToolCallProgress():
            return card_patched(update)
        case v1.PlanUpdate() | v1.PlanRemoved():
            return plan_of(update)
        case v1.SubagentUpdate() | v1.SessionMessage() | v1.SessionMessageChunk():
            return child_update(update)
        case v1.Plan():
            # Never on v2: the core gives a v2 client plan operations.
            raise NotServedOverV2(f"{update.session_update} is not served over ACP v2")
        case _:
            assert_never(update)


def option_of(option: V1ConfigOption) -> options.ConfigOption:
    """A config option in its v2 form (``id`` → ``configId``)."""
    match option:
        case SessionConfigOption():
            return options.SessionConfigSelect(
                config_id=option.id,
                name=option.name,
                current_value=option.current_value,
                options=list(option.options),
                description=option.description,
                category=option.category,
                meta=option.meta,
            )
        case SessionConfigBooleanOption():
            return options.SessionConfigBoolean(
                config_id=option.id,
                name=option.name,
                current_value=option.current_value,
                description=option.description,
                category=option.category,
                meta=option.meta,
            )
        case _:
            assert_never(option)


def command_of(command: v1.AvailableCommand) -> options.Command:
    """A command in its v2 form (tagged ``command``, its input tagged ``text``)."""
    given = command.input
    hint = None if given is None else options.TextCommandInput(hint=given.hint, meta=given.meta)
    return options.Command(
        name=command.name, description=command.description, input=hint, meta=command.meta
    )
