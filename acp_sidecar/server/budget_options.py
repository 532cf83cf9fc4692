"""A session's budget as config options (``budget_cost``, ``budget_tokens``, ``budget_time``,
offered with a model), where it starts (the configured defaults), and how it is recorded and
restored.

Invariants:
- An option's values always include its current limit, whatever set it (a preset, ``/budget``,
  the config file): the schema wants the current value listed.
- A cost limit applies only where the session's model has known prices: a default one is left
  out (and the user told why), one asked for is refused.
- ``/budget`` and the options record under the same ids; a load restores the recorded limits,
  and the configured default for a kind the log never set.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from acp_sidecar.agent.model.budget import KINDS, Kind, Limits
from acp_sidecar.bridge.notices import UserMessage
from acp_sidecar.protocol.errors import AcpError
from acp_sidecar.protocol.session import SessionConfigOption, SessionConfigSelectOption
from acp_sidecar.server.session import Session

if TYPE_CHECKING:
    from acp_sidecar.agent.model.config import Prices
    from acp_sidecar.server.connection import Connection

logger = logging.getLogger(__name__)

PREFIX: Final = "budget_"
"""Before a kind: the option's id, and the id its changes are recorded under."""
OFF: Final = "off"
"""The value of no limit."""
CATEGORY: Final = "_budget"
"""The options' category (the schema leaves names starting with ``_`` to agents)."""
PRESETS: Final[dict[Kind, tuple[float, ...]]] = {
    "cost": (0.5, 1.0, 2.0, 5.0, 10.0, 20.0),
    "tokens": (100_000, 200_000, 500_000, 1_000_000, 2_000_000),
    "time": (300.0, 600.0, 1800.0, 3600.0),
}
_NAMES: Final[dict[Kind, str]] = {
    "cost": "Cost budget",
    "tokens": "Token budget",
    "time": "Time budget",
}
_ABOUT: Final[dict[Kind, str]] = {
    "cost": "The most the session's model work may cost; a turn that reaches it ends.",
    "tokens": "The most tokens the session's model work may use; a turn that reaches it ends.",
    "time": "The most time the session's model requests may take; a turn that reaches it ends.",
}


def value_id(kind: Kind, limit: float | None) -> str:
    """The option value (and the recorded value) of ``limit``."""
    if limit is None:
        return OFF
    return repr(int(limit) if kind == "tokens" else float(limit))


def parse_value(kind: Kind, value: str) -> float | None:
    """The limit of a recorded value (``ValueError`` for one no version wrote)."""
    if value == OFF:
        return None
    number = float(value)
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{value!r} is no limit")
    return int(number) if kind == "tokens" else number


def prices_of(server: Connection, session: Session) -> Prices | None:
    """The prices of the session's model (``None``: unknown, or no model)."""
    catalog = server.driver.catalog
    return None if catalog is None else catalog.profile(session.model).prices


def budget_options(server: Connection, session: Session) -> list[SessionConfigOption]:
    """The budget options of a session with a model (the cost one with known prices, or
    while a cost limit is set: it stays visible, and clearable, after a switch of model)."""
    prices = prices_of(server, session)
    currency = session.budget.currency or (None if prices is None else prices.currency)
    priced = prices is not None or session.budget.limits.cost is not None
    kinds = [kind for kind in KINDS if kind != "cost" or priced]
    return [_option(kind, session.budget.limits.of(kind), currency) for kind in kinds]


def _option(kind: Kind, limit: float | None, currency: str | None) -> SessionConfigOption:
    limits = sorted({*PRESETS[kind], *(() if limit is None else (limit,))})
    values = [SessionConfigSelectOption(value=OFF, name="No limit")]
    values += [
        SessionConfigSelectOption(value=value_id(kind, v), name=_named(kind, v, currency))
        for v in limits
    ]
    return SessionConfigOption(
        id=PREFIX + kind,
        name=_NAMES[kind],
        description=_ABOUT[kind] + " /budget shows what is spent.",
        category=CATEGORY,
        current_value=value_id(kind, limit),
        options=values,
    )


def _named(kind: Kind, limit: float, currency: str | None) -> str:
    if kind == "time":
        minutes = limit / 60
        return f"{minutes:g} min" if minutes < 60 else f"{minutes / 60:g} h"
    if kind == "tokens":
        return f"{int(limit):,} tokens"
    return f"{limit:.2f} {currency or ''}".rstrip()


def set_budget_option(server: Connection, session: Session, kind: Kind, value: str) -> None:
    """Set ``kind``'s limit from an option value and record it; ``-32602`` for a value the
    option does not offer."""
    offered = {o.id: o for o in budget_options(server, session)}.get(PREFIX + kind)
    values = [] if offered is None else [v.value for v in offered.options]
    if offered is None:
        raise AcpError.invalid_params(f"Invalid params: configId: {unpriced(server, session)}")
    if value not in values:
        listed = ", ".join(values)
        raise AcpError.invalid_params(
            f"Invalid params: value: {value!r} is not a value of config option "
            f"{PREFIX + kind!r} (values: {listed})"
        )
    set_limit(session, kind, parse_value(kind, value))


def set_limit(session: Session, kind: Kind, limit: float | None) -> None:
    """Set ``kind``'s limit (``None``: none) and record it."""
    session.budget.set(kind, limit)
    if session.recorder is not None:
        session.recorder.config_change(PREFIX + kind, value_id(kind, limit))


def start_budget(server: Connection, session: Session, recorded: Mapping[str, str]) -> None:
    """Give ``session`` its limits: those its log ``recorded``, else the configured defaults
    (which :func:`record_start` then records); with no model, none. A limit already in force
    is left as it is (a second load of an open session re-arms no notice)."""
    if server.driver.catalog is None:
        return
    defaults: Limits = server.budget
    for kind in KINDS:
        stored = recorded.get(PREFIX + kind)
        if stored is None:
            limit = defaults.of(kind)
        else:
            try:
                limit = parse_value(kind, stored)
            except ValueError:
                logger.warning("the log's %s budget %r is no limit; left unset", kind, stored)
                continue
        if kind == "cost" and limit is not None and prices_of(server, session) is None:
            what = "configured" if stored is None else "session's"
            _tell(server, session, f"The {what} cost budget ({limit:g}) does not apply: ")
            continue
        if session.budget.limits.of(kind) != limit:
            session.budget.set(kind, limit)


def record_start(session: Session) -> None:
    """Record the limits a new session starts with (the configured defaults), so a load keeps
    them whatever the config file says by then."""
    for kind in KINDS:
        limit = session.budget.limits.of(kind)
        if limit is not None and session.recorder is not None:
            session.recorder.config_change(PREFIX + kind, value_id(kind, limit))


def unpriced(server: Connection, session: Session) -> str:
    """Why a cost budget cannot apply to ``session``'s model, and what the user can do."""
    catalog = server.driver.catalog
    name = "" if catalog is None else f" `{catalog.profile(session.model).name}`"
    return (
        f"the prices of the model{name} are unknown, so its spending cannot be counted. "
        "Configure its prices (model_info in the config file, or --model-info), or set a "
        "token budget."
    )


def _tell(server: Connection, session: Session, said: str) -> None:
    message = UserMessage("warning", said + unpriced(server, session))
    session_id = session.session_id

    async def tell() -> None:
        server.tell(session_id, message)

    server.after_answer(tell())
