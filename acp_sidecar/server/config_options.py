"""A session's config options: ``mode`` and ``permission_rules`` always; ``model``,
``reasoning_effort`` and the budget (:mod:`~acp_sidecar.server.budget_options`) with a driver
that has a model catalog; the boolean
``allow_outside_workspace`` only for clients that set ``session.configOptions.boolean`` (never a
boolean to others: the schema's rule, acp-tck's CONFIG-003). What setting one does, and who is told.

Invariants:
- Modes and the ``mode`` option are two views of one state: a change through one is announced
  in the other; the model list arriving, or the driver replaced, sends ``config_option_update``
  to the sessions whose options changed; nothing is announced when nothing changed, and an
  announcement goes out after the answer of the request that caused it.
- ``session/new`` never waits for ``GET /models`` (the listing starts in the background).
- A model, effort or workspace change is recorded and restored on load or resume (the
  workspace one only for a client that sees the option); an unknown option or value is
  ``-32602`` and changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from acp_sidecar.agent.model.budget import KINDS
from acp_sidecar.bridge.modes import MODE_IDS, MODES, ModeId
from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.protocol.initialize import ClientCapabilities
from acp_sidecar.protocol.session import (
    ConfigOption,
    SessionConfigBooleanOption,
    SessionConfigOption,
    SessionConfigSelectOption,
)
from acp_sidecar.protocol.updates import ConfigOptionUpdate, CurrentModeUpdate, SessionUpdate
from acp_sidecar.server.budget_options import (
    PREFIX,
    budget_options,
    set_budget_option,
    start_budget,
)
from acp_sidecar.server.session import Session

if TYPE_CHECKING:
    from acp_sidecar.agent.model.catalog import ModelCatalog
    from acp_sidecar.server.connection import Connection
    from acp_sidecar.store import Record

logger = logging.getLogger(__name__)

MODE: Final = "mode"
"""The id of the mode option."""
MODEL: Final = "model"
"""The id of the model option."""
REASONING_EFFORT: Final = "reasoning_effort"
"""The id of the reasoning-effort option (named after the request field it sets)."""
OUTSIDE_WORKSPACE: Final = "allow_outside_workspace"
"""The id of the boolean option (named after the setting whose value is its default)."""
ON, OFF = "true", "false"
"""How the log records the boolean option's values."""
RULES: Final = "permission_rules"
"""The id of the option choosing the permission rules' sources (its values name the set)."""
DEFAULT_EFFORT: Final = "default"
"""The effort value that sends no ``reasoning_effort``."""

EFFORTS: Final = (
    SessionConfigSelectOption(
        value=DEFAULT_EFFORT,
        name="Default",
        description="Send no reasoning effort: the endpoint's own default applies.",
    ),
    SessionConfigSelectOption(value="low", name="Low", description="Reason briefly."),
    SessionConfigSelectOption(value="medium", name="Medium"),
    SessionConfigSelectOption(value="high", name="High", description="Reason at length."),
)
EFFORT_VALUES: Final = tuple(option.value for option in EFFORTS)
SHOWN_VALUES: Final = 12
"""How many of an option's values an error message lists."""


def catalog_of(server: Connection) -> ModelCatalog | None:
    """The models the server's driver offers (``None``: it offers no choice)."""
    return server.driver.catalog


def takes_booleans(capabilities: ClientCapabilities) -> bool:
    """Whether the client set ``session.configOptions.boolean`` (``null`` at any level, or
    anything but an object, is no opt-in)."""
    extensions = None if capabilities.session is None else capabilities.session.config_options
    return isinstance(extensions, dict) and isinstance(extensions.get("boolean"), dict)


def config_options(server: Connection, session: Session) -> list[ConfigOption]:
    """Every config option of ``session`` with its current value (see the module docstring).

    With a model driver, the first call also starts listing the endpoint's models, in the
    background; the sessions are told when the list changes what is offered."""
    options: list[ConfigOption] = [mode_option(session.policy.mode), rules_option(server, session)]
    catalog = catalog_of(server)
    if catalog is not None:
        start_listing(server, catalog)
        model = session.model or catalog.default
        options.append(model_option(catalog, model))
        if catalog.profile(model).reasoning_effort:
            options.append(effort_option(session.reasoning_effort))
        options.extend(budget_options(server, session))
    if takes_booleans(server.client_capabilities):
        options.append(outside_option(outside_workspace(server, session)))
    return options


def outside_workspace(server: Connection, session: Session) -> bool:
    """Whether ``session``'s tools may work outside its directories now."""
    chosen = session.allow_outside_workspace
    return server.allow_outside_workspace if chosen is None else chosen


def outside_option(allowed: bool) -> SessionConfigBooleanOption:
    """The boolean ``allow_outside_workspace`` option, on when ``allowed``."""
    return SessionConfigBooleanOption(
        id=OUTSIDE_WORKSPACE,
        name="Work outside the workspace",
        description="Let tools read and write paths outside the session's directories "
        "(default: the allow_outside_workspace setting). Asking in the ask mode still applies.",
        current_value=allowed,
    )


def mode_option(mode: ModeId) -> SessionConfigOption:
    """The ``mode`` option, ``mode`` selected."""
    return SessionConfigOption(
        id=MODE,
        name="Mode",
        description="When tool calls that may change things are asked about, run or refused.",
        category="mode",
        current_value=mode,
        options=[
            SessionConfigSelectOption(value=m.id, name=m.name, description=m.description)
            for m in MODES
        ],
    )


def rules_option(server: Connection, session: Session) -> SessionConfigOption:
    """The ``permission_rules`` option: which sources the session's rules come from, each
    value named by the set it makes (``session + project + user (5 rules)``)."""
    from acp_sidecar.server.rule_book import SELECTIONS

    book = server.rules_of(session)
    if book.changed is None:
        session_id = session.session_id
        book.changed = lambda: announce_rules(server, session_id)
    return SessionConfigOption(
        id=RULES,
        name="Permission rules",
        description="Where the rules that allow, ask about or refuse tool calls come from "
        "(/permissions lists them); the mode still caps them.",
        current_value=book.selection,
        options=[
            SessionConfigSelectOption(value=selection, name=book.rule_set(selection).name)
            for selection in SELECTIONS
        ],
    )


def model_option(catalog: ModelCatalog, model: str) -> SessionConfigOption:
    """The ``model`` option, ``model`` selected."""
    return SessionConfigOption(
        id=MODEL,
        name="Model",
        description="The model that answers; a change applies from the next prompt.",
        category="model",
        current_value=model,
        options=[
            SessionConfigSelectOption(value=name, name=name) for name in _names(catalog, model)
        ],
    )


def _names(catalog: ModelCatalog, model: str) -> list[str]:
    """The models offered, with ``model`` among them (the schema wants the current value
    listed)."""
    names = list(catalog.names())
    if model not in names:
        names.insert(0, model)
    return names


def effort_option(effort: str | None) -> SessionConfigOption:
    """The ``reasoning_effort`` option, ``effort`` selected (``None``: the default)."""
    return SessionConfigOption(
        id=REASONING_EFFORT,
        name="Reasoning effort",
        description="How much the model reasons before it answers.",
        category="thought_level",
        current_value=effort or DEFAULT_EFFORT,
        options=list(EFFORTS),
    )


async def set_config_option(
    server: Connection, session: Session, config_id: str, value: str | bool, kind: str | None
) -> None:
    """Set one option of ``session`` (``session/set_config_option``; ``kind``: the request's
    ``type``), announcing and recording it as the module docstring says; ``-32602`` for an
    unknown option or value, or a value of the wrong shape."""
    if config_id == OUTSIDE_WORKSPACE and takes_booleans(server.client_capabilities):
        if kind != "boolean" or not isinstance(value, bool):
            raise AcpError.invalid_params(
                f"Invalid params: value: config option {config_id!r} is a boolean: send "
                '`"type": "boolean"` with `true` or `false`'
            )
        choose_outside(server, session, value)
        return
    if isinstance(value, bool) or kind == "boolean":
        raise AcpError.invalid_params(
            f"Invalid params: value: config option {config_id!r} takes a value id (a string), "
            "not a boolean"
        )
    catalog = catalog_of(server)
    if config_id == MODE:
        mode = next((m for m in MODE_IDS if m == value), None)
        if mode is None:
            raise _unknown_value(config_id, value, MODE_IDS)
        if change_mode(session, mode):
            announce(server, session.session_id, lambda: CurrentModeUpdate(current_mode_id=mode))
        return
    if config_id == RULES:
        from acp_sidecar.server.rule_book import SELECTIONS

        selection = next((known for known in SELECTIONS if known == value), None)
        if selection is None:
            raise _unknown_value(config_id, value, SELECTIONS)
        if server.rules_of(session).choose(selection):
            _record(session, RULES, selection)
        return
    if catalog is not None and config_id == MODEL:
        if value not in catalog.names() and not catalog.listing_done:
            start_listing(server, catalog)
            await catalog.list_models()  # the list may name it (bounded by its timeout)
        if value not in _names(catalog, session.model or catalog.default):
            raise _unknown_value(config_id, value, catalog.names())
        choose_model(session, catalog, value)
        return
    budgeted = next((k for k in KINDS if config_id == PREFIX + k), None)
    if catalog is not None and budgeted is not None:
        set_budget_option(server, session, budgeted, value)
        return
    offers_effort = catalog is not None and catalog.profile(session.model).reasoning_effort
    if config_id == REASONING_EFFORT and offers_effort:
        if value not in EFFORT_VALUES:
            raise _unknown_value(config_id, value, EFFORT_VALUES)
        choose_effort(session, value)
        return
    known = ", ".join(option.id for option in config_options(server, session))
    raise AcpError.invalid_params(
        f"Invalid params: configId: unknown config option {config_id!r} (options: {known})"
    )


def _unknown_value(config_id: str, value: str, values: Sequence[str]) -> AcpError:
    shown = ", ".join(values[:SHOWN_VALUES])
    if len(values) > SHOWN_VALUES:
        shown += f", … ({len(values)} in all)"
    return AcpError.invalid_params(
        f"Invalid params: value: {value!r} is not a value of config option {config_id!r} "
        f"(values: {shown})"
    )


def change_mode(session: Session, mode: ModeId) -> bool:
    """Switch the session's mode and record it; whether it changed."""
    if session.policy.mode == mode:
        return False
    session.policy.mode = mode
    if session.recorder is not None:
        session.recorder.mode_change(mode)
    return True


def choose_model(session: Session, catalog: ModelCatalog, model: str) -> None:
    """Make ``model`` the session's model from its next turn, and record it. An effort the new
    model does not accept goes back to the default, recorded too (so a replay, which applies
    the records in order, ends where the session is)."""
    if model == (session.model or catalog.default):
        return
    session.model = model
    _record(session, MODEL, model)
    if session.reasoning_effort is not None and not catalog.profile(model).reasoning_effort:
        choose_effort(session, DEFAULT_EFFORT)


def choose_effort(session: Session, effort: str) -> None:
    """Make ``effort`` the session's reasoning effort from its next turn, and record it."""
    chosen = None if effort == DEFAULT_EFFORT else effort
    if chosen == session.reasoning_effort:
        return
    session.reasoning_effort = chosen
    _record(session, REASONING_EFFORT, effort)


def choose_outside(server: Connection, session: Session, allowed: bool) -> None:
    """Let ``session``'s tools work outside its directories (or not) from its next call, and
    record it (a value equal to the setting's is kept too: the setting may change)."""
    if session.allow_outside_workspace == allowed:
        return
    session.allow_outside_workspace = allowed
    _record(session, OUTSIDE_WORKSPACE, ON if allowed else OFF)


def _record(session: Session, config_id: str, value: str) -> None:
    if session.recorder is not None:
        session.recorder.config_change(config_id, value)


def announce_rules(server: Connection, session_id: str) -> None:
    """Send the session its config options now (its rules changed: the option counts them)."""
    session = server.sessions.get(session_id)
    if session is None:
        return
    update = ConfigOptionUpdate(config_options=config_options(server, session))
    server.spawn(server.send_update(session_id, update))


def announce_options(server: Connection, session_id: str) -> None:
    """Send the session its config options (``config_option_update``) after the current
    answer: ``session/set_mode`` changed the mode behind the config-option view's back."""

    def update() -> SessionUpdate | None:
        session = server.sessions.get(session_id)
        if session is None:
            return None
        return ConfigOptionUpdate(config_options=config_options(server, session))

    announce(server, session_id, update)


def announce(
    server: Connection, session_id: str, update: Callable[[], SessionUpdate | None]
) -> None:
    """Send ``update()`` to the session after the answer; ``None``: nothing."""

    async def send() -> None:
        made = update()
        if made is not None:
            await server.send_update(session_id, made)

    server.after_answer(send())


def announce_changed_options(server: Connection, before: Mapping[str, list[ConfigOption]]) -> None:
    """Send each open session of ``before`` (its options then) its options now where they
    differ, after the answer being written; the options sent are read when sent."""
    for session_id, options in before.items():
        session = server.sessions.get(session_id)
        if session is not None and config_options(server, session) != options:
            announce_options(server, session_id)


def start_listing(server: Connection, catalog: ModelCatalog) -> None:
    """Ask the endpoint for its models (once); when the answer changes the models offered,
    every open session is sent its options."""
    if catalog.listing_started:
        return
    before = catalog.names()
    listing = catalog.list_models()

    async def announce_listed() -> None:
        await listing
        if catalog.names() == before:
            return
        for session_id, session in list(server.sessions.items()):
            update = ConfigOptionUpdate(config_options=config_options(server, session))
            await server.send_update(session_id, update)

    server.spawn(announce_listed())


def remember_choices(records: Iterable[Record], choices: dict[str, str]) -> Iterator[Record]:
    """``records``, passed through as they are read, keeping in ``choices`` the last value of
    each config option recorded (for :func:`restore_choices` after a load's replay)."""
    from acp_sidecar.store import ConfigChangeRecord

    for record in records:
        if isinstance(record, ConfigChangeRecord):
            choices[record.config_id] = record.value
        yield record


def stored_choices(records: Iterable[Record]) -> dict[str, str]:
    """The last value of each config option recorded in ``records`` (read whole)."""
    choices: dict[str, str] = {}
    for _record in remember_choices(records, choices):
        pass
    return choices


async def restore_choices(server: Connection, session: Session, choices: Mapping[str, str]) -> None:
    """Give a loaded (or resumed) session the model and effort its log recorded.

    A model that is not among those configured waits for the endpoint's list (bounded); one
    no longer offered at all falls back to the default, with a warning in the log. An effort
    is restored only for a model that accepts one; the workspace choice only for a client
    that sees its option (others get the setting's). Nothing is recorded: the log has it."""
    from acp_sidecar.server.rule_book import SELECTIONS

    selection = next((known for known in SELECTIONS if known == choices.get(RULES)), None)
    if selection is not None:
        server.rules_of(session).choose(selection)
    outside = choices.get(OUTSIDE_WORKSPACE)
    if outside in (ON, OFF) and takes_booleans(server.client_capabilities):
        session.allow_outside_workspace = outside == ON
    else:
        session.allow_outside_workspace = None
    catalog = catalog_of(server)
    if catalog is None:
        return
    model = choices.get(MODEL)
    if model is not None:
        if model not in catalog.names():
            start_listing(server, catalog)
            await catalog.list_models()
        if model in catalog.names():
            session.model = model
        else:
            logger.warning(
                "session %s: its model %r is no longer offered; it uses %r",
                session.session_id,
                model,
                catalog.default,
            )
            session.model = None
    effort = choices.get(REASONING_EFFORT)
    supported = catalog.profile(session.model).reasoning_effort
    if effort in EFFORT_VALUES and effort != DEFAULT_EFFORT and supported:
        session.reasoning_effort = effort
    else:
        session.reasoning_effort = None
    start_budget(server, session, choices)  # after the model: a cost limit needs its prices
