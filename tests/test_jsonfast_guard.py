"""The checks :func:`~acp_sidecar.jsonfast.stdlib_bytes` trusts orjson's bytes by answer what
their slow forms answer: the dash-by-dash look for a short exponent is the regular expression's
search, and a dict kind known from an earlier walk is walked as it was the first time."""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_sidecar import jsonfast
from acp_sidecar.tools.json_values import FrozenDict

EXPONENT_ALPHABET = st.sampled_from(["0", "1", "7", "9", "e", "-", "e-", "1e-", '"', ",", "x"])
"""Pieces of which texts are made dense in near misses (``1e-`` ``1e-10`` ``e-7`` ``-1e-7``)."""


@settings(max_examples=600, deadline=None)
@given(pieces=st.lists(EXPONENT_ALPHABET, max_size=60))
def test_a_short_exponent_is_found_where_the_pattern_finds_one(pieces: list[str]) -> None:
    data = "".join(pieces).encode()
    expected = jsonfast._SHORT_EXPONENT.search(data) is not None
    assert jsonfast._short_exponent(data) == expected


@given(dashes=st.integers(min_value=0, max_value=40), where=st.integers(min_value=0, max_value=40))
def test_a_short_exponent_among_any_number_of_dashes_is_found(dashes: int, where: int) -> None:
    # Before, at and after the last dash looked at one by one, and behind every near miss.
    before, after = "x-" * min(where, dashes), "e-x1e-" * max(dashes - where, 0)
    for exponent, found in (("1e-7", True), ("1e-07", False), ("1e-70", False), ("e-7", False)):
        data = f"{before}{exponent},{after}".encode()
        assert jsonfast._short_exponent(data) is found
        assert (jsonfast._SHORT_EXPONENT.search(data) is not None) is found


class Reordered(dict[str, Any]):
    """A dict whose ``items`` the stdlib follows and orjson does not."""

    def items(self) -> Any:
        return reversed(list(super().items()))


class Snapshot(dict[str, Any]):
    """A dict subclass that both encoders read as the dict it is (it overrides nothing)."""

    __slots__ = ()


def test_a_dict_kind_is_walked_alike_before_and_after_it_is_known() -> None:
    for kind, walked in ((Reordered, False), (Snapshot, True), (FrozenDict, True)):
        jsonfast._DICT_KINDS.pop(kind, None)
        value = {"outer": [kind({"a": "b", "c": 1})]}
        first = jsonfast._walked(value, 64)
        assert (first >= 0) is walked
        assert kind in jsonfast._DICT_KINDS  # now known at a look-up
        assert jsonfast._walked(value, 64) == first
        assert jsonfast._walked(kind({"a": 1.5}), 64) == -1  # a float in a known kind: found


scalars = st.text(max_size=8) | st.integers() | st.booleans() | st.none() | st.floats()
leaves = scalars | st.dictionaries(
    st.text(max_size=4), st.text(max_size=8) | st.integers(max_value=2**63) | st.booleans()
).map(FrozenDict)
"""FrozenDict takes JSON values only: one of finite leaves stands for a tool's frozen input."""


@settings(max_examples=300, deadline=None)
@given(
    value=st.recursive(
        leaves,
        lambda children: (
            st.lists(children, max_size=5)
            | st.dictionaries(st.text(max_size=4), children, max_size=5)
            | st.dictionaries(st.text(max_size=4), children, max_size=5).map(Snapshot)
        ),
        max_leaves=40,
    ),
    padding=st.sampled_from(["", "p" * 1100]),
)
def test_what_the_walk_lets_through_is_the_stdlibs_text(value: Any, padding: str) -> None:
    # The padding makes a text long enough to be walked rather than searched.
    wrapped = {"value": value, "padding": padding}
    written = jsonfast.stdlib_bytes(wrapped)
    try:
        text = json.dumps(wrapped, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        expected = text.encode()
    except ValueError:  # NaN or Infinity refused; a lone surrogate UTF-8 cannot carry
        assert written is None
        return
    assert written is None or written == expected
    try:
        orjson.dumps(wrapped)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits
        return
    if jsonfast._walked(wrapped, jsonfast._NODES_WALKED) >= 0 and padding:
        assert written == expected  # walked: never left to the stdlib for a text it holds
