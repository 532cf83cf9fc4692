"""``freeze_parsed``, the store's freezing of a fresh parse, makes exactly what ``freeze_json``
makes of the same value: the same containers (``FrozenDict``, tuples) at every depth."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.store.decoders import freeze_parsed
from acp_sidecar.tools.json_values import FrozenDict, freeze_json

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)


def shape(value: Any) -> Any:
    """``value`` with each container's exact type beside it (equality alone would take a
    dict for a FrozenDict, a list for a tuple)."""
    if isinstance(value, dict):
        return (type(value), [(k, shape(v)) for k, v in value.items()])
    if isinstance(value, list | tuple):
        return (type(value), [shape(v) for v in value])
    return (type(value), value)


@given(values)
def test_a_parse_is_frozen_as_freeze_json_freezes_it(value: Any) -> None:
    parsed = json.loads(json.dumps(value))
    assert shape(freeze_parsed(parsed)) == shape(freeze_json(parsed))


def test_a_list_of_objects_of_scalars_and_of_nested_ones() -> None:
    parsed = json.loads('[{"a": 1, "b": "x"}, {"c": [1, {"d": null}]}, [{}], 3]')
    frozen = freeze_parsed(parsed)
    assert shape(frozen) == shape(freeze_json(parsed))
    assert type(frozen) is tuple and type(frozen[0]) is FrozenDict
    assert type(frozen[1]["c"]) is tuple and type(frozen[1]["c"][1]) is FrozenDict


objects_of_scalars = st.dictionaries(st.text(max_size=4), scalars, max_size=4)


@given(
    st.lists(objects_of_scalars, max_size=30),
    st.integers(0, 30),
    st.sampled_from([[1], {"a": []}, [], {}, "x", None, 3]),
)
def test_a_long_list_of_objects_is_frozen_as_freeze_json_freezes_it(
    objects: list[dict[str, Any]], at: int, odd: Any
) -> None:
    """The lists copied in C loops (objects of scalars alone, at least four), and those that
    one nested member or one non-object item sends through the general loop."""
    for value in (objects, [*objects[:at], odd, *objects[at:]]):
        parsed = json.loads(json.dumps(value))
        assert shape(freeze_parsed(parsed)) == shape(freeze_json(parsed))
    if objects:
        nested = [dict(item) for item in objects]
        nested[at % len(nested)]["n"] = odd
        parsed = json.loads(json.dumps(nested))
        assert shape(freeze_parsed(parsed)) == shape(freeze_json(parsed))
