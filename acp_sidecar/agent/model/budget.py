"""A session's budget: its limits, what it has spent, and the verdict between the two.

Pure values: the driver adds to :class:`Spent` after each response; :func:`verdict` says
whether the next step may run. A limit that is ``None`` does not apply.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from time import monotonic
from typing import Final, Literal

import attrs

from acp_sidecar.protocol.updates import UsageUpdate
from acp_sidecar.values import State, Value

Kind = Literal["cost", "tokens", "time"]
KINDS: Final[tuple[Kind, ...]] = ("cost", "tokens", "time")
BUDGET_META: Final = "acp-sidecar/budget"
"""The key of a ``usage_update``'s ``_meta`` that carries :meth:`BudgetGate.figures`."""
WARN_AT: Final = 0.8
"""The fraction of a limit at which one notice is given."""

_DURATION: Final = re.compile(r"(\d+(?:\.\d+)?)\s*(s|m|h)?")
_SECONDS: Final = {"s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}


@attrs.frozen(repr=False, eq=False)
class Limits(Value):
    """The session's limits (``None``: none of that kind)."""

    cost: float | None = None
    """In the profile's currency."""
    tokens: int | None = None
    """Prompt and completion tokens of every response, summed."""
    time: float | None = None
    """Seconds spent in model requests (streaming included), not idle time."""

    def of(self, kind: Kind) -> float | None:
        """The limit of ``kind``."""
        return {"cost": self.cost, "tokens": self.tokens, "time": self.time}[kind]


NO_LIMITS: Final = Limits()


@attrs.frozen(repr=False, eq=False)
class Spent(Value):
    """What the session's model work has used so far."""

    cost: float = 0.0
    tokens: int = 0
    time: float = 0.0

    def of(self, kind: Kind) -> float:
        """The amount of ``kind`` spent."""
        return {"cost": self.cost, "tokens": self.tokens, "time": self.time}[kind]

    def add(self, *, cost: float = 0.0, tokens: int = 0, time: float = 0.0) -> Spent:
        """The amounts after one more response."""
        return Spent(self.cost + cost, self.tokens + tokens, self.time + time)


@attrs.frozen(repr=False, eq=False)
class Verdict(Value):
    """Between limits and spending: the kinds reached, and those past the warning mark."""

    reached: tuple[Kind, ...]
    warned: tuple[Kind, ...]


def verdict(limits: Limits, spent: Spent) -> Verdict:
    """Which limits ``spent`` has reached, and which it has passed 80 % of (not reached)."""
    reached: list[Kind] = []
    warned: list[Kind] = []
    for kind in KINDS:
        limit = limits.of(kind)
        if limit is None:
            continue
        if spent.of(kind) >= limit:
            reached.append(kind)
        elif spent.of(kind) >= WARN_AT * limit:
            warned.append(kind)
    return Verdict(tuple(reached), tuple(warned))


def parse_duration(text: str) -> float:
    """Seconds in ``90``, ``90s``, ``10m`` or ``1.5h``; ``ValueError`` otherwise."""
    match = _DURATION.fullmatch(text.strip().lower())
    if match is None:
        raise ValueError(f"`{text}` is no duration (say 90s, 10m or 1.5h)")
    amount, unit = match.groups()
    seconds = float(amount) * _SECONDS[unit]
    if not math.isfinite(seconds):
        raise ValueError(f"`{text}` is too long a duration")
    if seconds <= 0:
        raise ValueError("a time budget must be more than nothing")
    return seconds


def parse_limit(kind: Kind, text: str) -> float | None:
    """The limit ``text`` sets for ``kind`` (``off``/``none``: ``None``); ``ValueError``
    saying why when it is no valid limit."""
    if text.strip().lower() in ("off", "none"):
        return None
    if kind == "time":
        return parse_duration(text)
    try:
        value = float(text.strip().replace("_", ""))
    except ValueError:
        raise ValueError(f"`{text}` is no number") from None
    if not math.isfinite(value):
        raise ValueError(f"`{text}` is no finite number")
    if value <= 0:
        raise ValueError(f"a {kind} budget must be more than 0")
    if kind == "tokens":
        if value != int(value):
            raise ValueError("a token budget is a whole number")
        return int(value)
    return value


def with_limit(limits: Limits, kind: Kind, value: float | None) -> Limits:
    """``limits`` with ``kind`` set to ``value``."""
    if kind == "tokens":
        return attrs.evolve(limits, tokens=None if value is None else int(value))
    if kind == "cost":
        return attrs.evolve(limits, cost=value)
    return attrs.evolve(limits, time=value)


def shown(kind: Kind, amount: float | None, currency: str | None = None) -> str:
    """One amount as the user reads it (``None``: no limit)."""
    if amount is None:
        return "none"
    if kind == "cost":
        return f"{amount:.4f} {currency or ''}".rstrip()
    if kind == "tokens":
        return f"{int(amount):,}"
    return f"{amount:.1f}s"


def reached_message(kinds: tuple[Kind, ...], limits: Limits, currency: str | None) -> str:
    """What the user is told when ``kinds`` are reached: which, and how to go on."""
    named = ", ".join(f"{kind} ({shown(kind, limits.of(kind), currency)})" for kind in kinds)
    return (
        f"The session's budget is reached: {named}. Raise it with `/budget {kinds[0]} …` "
        f"or clear it with `/budget {kinds[0]} off` to go on."
    )


@attrs.define(repr=False, eq=False)
class _Ledger(State):
    """A session's budget state, shared by its turns' gates (a child's included)."""

    limits: Limits = NO_LIMITS
    spent: Spent = attrs.field(factory=Spent)
    currency: str | None = None
    warned: set[Kind] = attrs.field(factory=set)
    """The kinds whose 80 % notice was given (since their limit was last set)."""


class BudgetGate:
    """A session's budget as its turns use it: the limits (changed by ``/budget``), what was
    spent, and whether the 80 % notice was given (once per limit set)."""

    def __init__(
        self,
        limits: Limits = NO_LIMITS,
        clock: Callable[[], float] = monotonic,
        *,
        ledger: _Ledger | None = None,
        warns: bool = True,
    ) -> None:
        self._ledger = ledger or _Ledger(limits)
        self.clock = clock
        """Measures model work (a test's own, in tests)."""
        self._warns = warns

    def for_child(self) -> BudgetGate:
        """This gate as a child conversation (a ``task``) uses it: its work is charged here
        and it stops here, but it gives no 80 % notice (the child's would reach only the
        parent model): the parent's next step gives it, where the user reads it."""
        return BudgetGate(clock=self.clock, ledger=self._ledger, warns=False)

    @property
    def limits(self) -> Limits:
        return self._ledger.limits

    @property
    def spent(self) -> Spent:
        return self._ledger.spent

    @property
    def currency(self) -> str | None:
        return self._ledger.currency

    def set(self, kind: Kind, value: float | None) -> None:
        """Set one limit (its 80 % notice may be given again)."""
        self._ledger.limits = with_limit(self._ledger.limits, kind, value)
        self._ledger.warned.discard(kind)

    def restore(self, spent: Spent, currency: str | None = None) -> None:
        """Start from what a stored session's log says it spent."""
        self._ledger.spent = spent
        self._ledger.currency = currency or self._ledger.currency

    def charge(self, *, tokens: int, cost: float, seconds: float, currency: str | None) -> None:
        """Count one response's work."""
        self._ledger.spent = self._ledger.spent.add(cost=cost, tokens=tokens, time=seconds)
        if currency is not None:
            self._ledger.currency = currency

    def figures(self) -> dict[str, dict[str, float | str | None]] | None:
        """Spent and limit of each kind, as a ``usage_update``'s ``_meta`` carries them;
        ``None`` while no limit is set."""
        if all(self.limits.of(kind) is None for kind in KINDS):
            return None
        figures: dict[str, dict[str, float | str | None]] = {
            kind: {"spent": self.spent.of(kind), "limit": self.limits.of(kind)} for kind in KINDS
        }
        figures["cost"]["currency"] = self.currency
        return figures

    def reached(self) -> tuple[Kind, ...]:
        """The limits reached."""
        return verdict(self.limits, self.spent).reached

    def warn(self) -> str | None:
        """The 80 % notice, the first time a limit passes the mark; ``None`` otherwise (and
        always from a child's gate)."""
        warned = self._ledger.warned
        fresh = [k for k in verdict(self.limits, self.spent).warned if k not in warned]
        if not fresh or not self._warns:
            return None
        warned.update(fresh)
        parts = ", ".join(
            f"{k} {shown(k, self.spent.of(k), self.currency)} of "
            f"{shown(k, self.limits.of(k), self.currency)}"
            for k in fresh
        )
        return f"80 % of the session's budget is spent: {parts}."

    def stop(self) -> tuple[str, Literal["max_tokens", "end_turn"]] | None:
        """The message and stop reason of a reached budget; ``None``: work may go on."""
        kinds = self.reached()
        if not kinds:
            return None
        reason: Literal["max_tokens", "end_turn"] = (
            "max_tokens" if "tokens" in kinds else "end_turn"
        )
        return reached_message(kinds, self.limits, self.currency), reason


def metered(update: UsageUpdate, gate: BudgetGate | None) -> UsageUpdate:
    """``update`` with ``gate``'s figures in its ``_meta`` (as it is while no limit is set)."""
    figures = None if gate is None else gate.figures()
    return update if figures is None else attrs.evolve(update, meta={BUDGET_META: figures})
