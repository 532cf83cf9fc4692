"""``acp_sidecar.values``: a class inheriting ``Value``/``State`` has the repr, equality and
hash attrs would have compiled for it."""

from __future__ import annotations

import math
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.values import State, Value


def pair_fields() -> dict[str, Any]:
    """The fields of the class both ways make: every flag a field may carry."""
    return {
        "name": attrs.field(),
        "count": attrs.field(default=0),
        "secret": attrs.field(default="", repr=False),
        "shown": attrs.field(default=0, repr=lambda v: f"<{v}>"),
        "folded": attrs.field(default="", eq=str.lower),
        "loose": attrs.field(default=None, eq=False),
        "unhashed": attrs.field(default=0, hash=False),
    }


def made_by_attrs(frozen: bool) -> Any:
    return attrs.make_class("Pair", pair_fields(), frozen=frozen, slots=True, order=False)


def made_with_values(frozen: bool) -> Any:
    base = Value if frozen else State
    return attrs.make_class(
        "Pair", pair_fields(), (base,), frozen=frozen, slots=True, repr=False, eq=False
    )


scalars = st.one_of(st.integers(-3, 3), st.text(max_size=3), st.none(), st.floats())
fields = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["a", "b"]),
        "count": scalars,
        "secret": st.sampled_from(["", "k"]),
        "shown": scalars,
        "folded": st.sampled_from(["x", "X", "y"]),
        "loose": scalars,
        "unhashed": st.integers(0, 2),
    }
)


@pytest.mark.parametrize("frozen", [True, False])
@given(first=fields, second=fields)
def test_repr_and_equality_are_attrs_own(
    frozen: bool, first: dict[str, Any], second: dict[str, Any]
) -> None:
    compiled, shared = made_by_attrs(frozen), made_with_values(frozen)
    assert repr(shared(**first)) == repr(compiled(**first))
    assert (shared(**first) == shared(**second)) == (compiled(**first) == compiled(**second))
    assert (shared(**first) != shared(**second)) == (compiled(**first) != compiled(**second))
    if frozen and compiled(**first) == compiled(**second):
        assert hash(shared(**first)) == hash(shared(**second))


def test_a_field_is_compared_as_attrs_compares_it_not_by_identity() -> None:
    nan = math.nan
    for frozen in (True, False):
        assert (made_with_values(frozen)("a", nan) == made_with_values(frozen)("a", nan)) is (
            made_by_attrs(frozen)("a", nan) == made_by_attrs(frozen)("a", nan)
        )


def test_another_class_is_not_equal_and_a_mutable_one_is_unhashable() -> None:
    assert made_with_values(True)("a") != made_with_values(True)("a")  # two classes
    assert made_with_values(True)("a").__eq__(1) is NotImplemented
    with pytest.raises(TypeError):
        hash(made_with_values(False)("a"))
    with pytest.raises(TypeError):
        hash(made_by_attrs(False)("a"))


def test_a_value_that_holds_itself_shows_three_dots_as_attrs_does() -> None:
    compiled, shared = made_by_attrs(False)("a"), made_with_values(False)("a")
    compiled.count, shared.count = compiled, shared
    shown = "Pair(name='a', count=..., shown=<0>, folded='', loose=None, unhashed=0)"
    assert repr(shared) == repr(compiled) == shown


def test_a_field_with_an_eq_key_is_compared_and_hashed_by_its_key() -> None:
    for frozen in (True, False):
        compiled, shared = made_by_attrs(frozen), made_with_values(frozen)
        assert shared("a", folded="x") == shared("a", folded="X")
        assert compiled("a", folded="x") == compiled("a", folded="X")
    frozen_pair = made_with_values(True)
    assert hash(frozen_pair("a", folded="x")) == hash(frozen_pair("a", folded="X"))
