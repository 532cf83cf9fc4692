"""Lossless JSON checking and deep-frozen snapshots."""

from __future__ import annotations

import copy
import json
import math
from collections import OrderedDict
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.tools.json_values import (
    FrozenDict,
    JsonValueError,
    freeze_json,
    json_violations,
    thaw,
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


class Colour(IntEnum):
    RED = 1


@given(json_values)
def test_freezing_round_trips_through_json(value: Any) -> None:
    frozen = freeze_json(value)
    assert json.loads(json.dumps(frozen)) == json.loads(json.dumps(value))
    assert thaw(frozen) == value
    assert json_violations(frozen) == []


@given(json_values.filter(lambda v: isinstance(v, dict | list) and len(v) > 0))
def test_frozen_containers_refuse_mutation(value: Any) -> None:
    frozen = freeze_json(value)
    if isinstance(frozen, FrozenDict):
        key = next(iter(frozen))
        for mutate in (
            lambda: frozen.__setitem__(key, 1),
            lambda: frozen.__delitem__(key),
            frozen.clear,
            lambda: frozen.pop(key),
            frozen.popitem,
            lambda: frozen.setdefault("new", 1),
            lambda: frozen.update({"new": 1}),
        ):
            with pytest.raises(TypeError):
                mutate()
    else:
        assert isinstance(frozen, tuple)
        with pytest.raises(TypeError):
            frozen[0] = 1  # type: ignore[index]


@pytest.mark.parametrize(
    ("value", "violations"),
    [
        (math.nan, ["/: nan is not a JSON number"]),
        ({"a": [1, -math.inf]}, ["/a/1: -inf is not a JSON number"]),
        ({"a/b~c": {1}}, ["/a~1b~0c: set is not JSON"]),
        ({2: 1}, ["/: key 2 is not a string"]),
        (b"x", ["/: bytes is not JSON"]),
        (Colour.RED, ["/: Colour is not JSON"]),
        (OrderedDict(a=1), ["/: OrderedDict is not JSON"]),
        ({"a": 1, "b": object()}, ["/b: object is not JSON"]),
    ],
)
def test_every_violation_is_named_with_its_path(value: Any, violations: list[str]) -> None:
    assert json_violations(value) == violations
    with pytest.raises(JsonValueError) as info:
        freeze_json(value)
    assert list(info.value.violations) == violations


def test_shared_but_acyclic_references_are_fine_and_cycles_are_not() -> None:
    shared = [1]
    assert json_violations({"a": shared, "b": shared}) == []
    loop: list[Any] = []
    loop.append(loop)
    assert json_violations(loop) == ["/0: cycle"]


def test_frozen_snapshots_are_detached() -> None:
    source: dict[str, Any] = {"a": [1, 2]}
    frozen = freeze_json(source)
    source["a"].append(3)
    assert frozen == {"a": (1, 2)}


def test_frozen_dicts_copy_as_themselves() -> None:
    frozen = freeze_json({"a": {"b": 1}})
    assert copy.deepcopy(frozen) is frozen
    assert copy.copy(frozen) is frozen
    assert hash(freeze_json({"x": 1, "y": 2})) == hash(freeze_json({"y": 2, "x": 1}))
