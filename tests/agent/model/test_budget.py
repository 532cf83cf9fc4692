"""The budget's values: parsing what `/budget` is given, and the verdict at 80 % and 100 %."""

from __future__ import annotations

import pytest

from acp_sidecar.agent.model.budget import (
    BudgetGate,
    Limits,
    Spent,
    parse_limit,
    reached_message,
    verdict,
    with_limit,
)


def test_durations_and_numbers_parse() -> None:
    assert parse_limit("time", "10m") == 600.0
    assert parse_limit("time", "90") == 90.0
    assert parse_limit("time", "1.5h") == 5400.0
    assert parse_limit("tokens", "200000") == 200_000
    assert parse_limit("tokens", "200_000") == 200_000
    assert parse_limit("cost", "2.50") == 2.5
    assert parse_limit("cost", "off") is None
    assert parse_limit("tokens", "None") is None


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("time", "soon"),
        ("time", "0s"),
        ("time", "9" * 400),
        ("tokens", "1.5"),
        ("tokens", "inf"),
        ("cost", "-1"),
        ("cost", "lots"),
        ("cost", "nan"),
    ],
)
def test_bad_limits_are_refused_with_a_reason(kind: str, text: str) -> None:
    with pytest.raises(ValueError, match=r"\S"):
        parse_limit(kind, text)  # type: ignore[arg-type]


def test_the_verdict_warns_at_80_percent_then_reaches() -> None:
    limits = with_limit(with_limit(Limits(), "tokens", 1000), "time", 10.0)
    assert verdict(limits, Spent(tokens=799)).warned == ()
    assert verdict(limits, Spent(tokens=800)).warned == ("tokens",)
    assert verdict(limits, Spent(tokens=800)).reached == ()
    done = verdict(limits, Spent(tokens=1000, time=10.0))
    assert done.reached == ("tokens", "time")
    assert done.warned == ()


def test_no_limit_never_reaches() -> None:
    assert verdict(Limits(), Spent(cost=1e9, tokens=10**9, time=1e9)).reached == ()


def test_the_message_names_the_limit_and_how_to_go_on() -> None:
    text = reached_message(("cost",), Limits(cost=2.5), "EUR")
    assert "2.5000 EUR" in text
    assert "/budget cost" in text


def test_a_childs_gate_charges_and_stops_with_the_sessions_but_gives_no_notice() -> None:
    session = BudgetGate(with_limit(Limits(), "tokens", 100))
    child = session.for_child()
    child.charge(tokens=85, cost=0.0, seconds=1.0, currency=None)
    assert session.spent == Spent(tokens=85, time=1.0)
    assert child.warn() is None  # left to the parent's next step
    assert session.warn() == "80 % of the session's budget is spent: tokens 85 of 100."
    child.charge(tokens=20, cost=0.0, seconds=0.0, currency=None)
    assert child.stop() == session.stop() is not None
