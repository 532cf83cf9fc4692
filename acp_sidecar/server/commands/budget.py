"""``/budget``: the session's budget, shown (spent/limit of each kind) or changed. A cost
limit is refused for a model whose prices are unknown; the console has no model spend."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from acp_sidecar.agent.model.budget import KINDS, Kind, parse_limit, shown
from acp_sidecar.protocol.updates import ConfigOptionUpdate
from acp_sidecar.server.budget_options import set_limit
from acp_sidecar.server.commands.base import CommandAnswer, CommandContext
from acp_sidecar.server.config_options import config_options

if TYPE_CHECKING:
    from acp_sidecar.agent.model.config import Prices

USAGE = (
    "Say `/budget`, `/budget cost 2.50`, `/budget tokens 200000`, `/budget time 10m` "
    "or `/budget off`."
)


async def budget(context: CommandContext) -> CommandAnswer:
    """Show or change the session's budget."""
    from acp_sidecar.agent.model.driver import ModelDriver  # off the cold start

    driver = context.connection.driver
    if not isinstance(driver, ModelDriver):
        return CommandAnswer(
            "Budgets apply to model work, and this session runs the console (no model): "
            "nothing here is spent, so there is no budget to show or set."
        )
    prices = driver.profile(context.session.model).prices
    words = context.argument.split()
    if not words:
        return CommandAnswer(report(context, prices))
    if len(words) == 1 and words[0].lower() in ("off", "none"):
        for kind in KINDS:
            set_limit(context.session, kind, None)
        await show_options(context)
        return CommandAnswer("The session's budget is cleared.\n\n" + report(context, prices))
    if len(words) != 2 or words[0].lower() not in KINDS:
        return CommandAnswer(f"`/budget {context.argument}` is not understood. {USAGE}")
    kind = cast(Kind, words[0].lower())
    try:
        value = parse_limit(kind, words[1])
    except ValueError as error:
        return CommandAnswer(f"The {kind} budget is not changed: {error}.")
    if kind == "cost" and value is not None and prices is None:
        return CommandAnswer(
            "A cost budget cannot be set: the prices of the model "
            f"`{driver.profile(context.session.model).name}` are unknown, so its spending "
            "cannot be counted. Configure its prices, or set a token budget instead."
        )
    set_limit(context.session, kind, value)
    await show_options(context)
    return CommandAnswer(report(context, prices))


async def show_options(context: CommandContext) -> None:
    """Send the session its config options: the budget's show the new limits."""
    options = config_options(context.connection, context.session)
    await context.connection.send_update(
        context.session.session_id, ConfigOptionUpdate(config_options=options)
    )


def report(context: CommandContext, prices: Prices | None) -> str:
    """Spent against the limit, for each kind."""
    gate = context.session.budget
    currency = gate.currency or (None if prices is None else prices.currency)
    lines = [
        f"- {kind}: {shown(kind, gate.spent.of(kind), currency)} of "
        f"{shown(kind, gate.limits.of(kind), currency)}"
        for kind in KINDS
    ]
    return "The session's budget (spent of limit):\n" + "\n".join(lines)
