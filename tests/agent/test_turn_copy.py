"""``with_delegate`` against ``attrs.evolve``: the same turn, field for field, for turns whose
fields are all set, all left at their defaults, or anything between."""

from __future__ import annotations

from typing import Any

import attrs
from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.agent.driver import Turn, with_delegate
from acp_sidecar.tools.cancel import CancelSignal

FIELDS = attrs.fields(Turn)
REQUIRED = [field for field in FIELDS if field.default is attrs.NOTHING]
OPTIONAL = [field for field in FIELDS if field.default is not attrs.NOTHING]


def values() -> st.SearchStrategy[object]:
    # Distinct objects, so a value copied into the wrong field is seen.
    return st.builds(object) | st.none() | st.text(max_size=3) | st.tuples(st.integers())


@st.composite
def turns(draw: st.DrawFn) -> Turn:
    given_fields: dict[str, Any] = {field.alias: draw(values()) for field in REQUIRED}
    given_fields["signal"] = CancelSignal()
    for field in OPTIONAL:
        if draw(st.booleans()):
            given_fields[field.alias] = draw(values())
    return Turn(**given_fields)


def fields_of(turn: Turn) -> list[object]:
    return [getattr(turn, field.name) for field in FIELDS]


def assert_same(made: Turn, expected: Turn) -> None:
    assert type(made) is type(expected)
    for field, got, wanted in zip(FIELDS, fields_of(made), fields_of(expected), strict=True):
        assert got is wanted, field.name


@given(turns(), values())
def test_with_delegate_is_evolve(turn: Turn, delegate: Any) -> None:
    before = fields_of(turn)
    made = with_delegate(turn, delegate)
    assert made is not turn
    assert_same(made, attrs.evolve(turn, delegate=delegate))
    assert all(now is then for now, then in zip(fields_of(turn), before, strict=True))


def test_turn_has_no_check_the_copy_would_skip() -> None:
    # with_delegate sets the slots directly: a converter or validator would not run.
    assert [field.name for field in FIELDS if field.converter or field.validator] == []
    assert not hasattr(Turn, "__attrs_post_init__")
    assert not hasattr(Turn, "__attrs_pre_init__")
