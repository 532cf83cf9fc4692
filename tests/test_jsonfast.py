"""The fast JSON codec reads and writes exactly what the stdlib reads and writes: the stdlib with
``allow_nan=False`` and compact separators on the way out, NaN and Infinity refused on the way
in, is the reference every case here is checked against."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_sidecar import jsonfast
from acp_sidecar.tools.json_values import FrozenDict, freeze_json


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def std_loads(data: bytes | str) -> Any:
    text = data.decode("utf-8") if isinstance(data, bytes) else data
    return json.loads(text, parse_constant=_refuse)


def std_dumps(value: object, *, ascii: bool) -> bytes:
    text = json.dumps(value, ensure_ascii=ascii, allow_nan=False, separators=(",", ":"))
    return text.encode("ascii" if ascii else "utf-8")


def same(a: object, b: object) -> bool:
    """Equal as JSON values are: exact types (``1`` is not ``1.0`` nor ``True``), the sign of a
    zero, the order of an object's keys."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        assert isinstance(b, list | tuple)
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        assert isinstance(b, float)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def outcome(function: Any, *args: Any, **kwargs: Any) -> tuple[str, Any]:
    try:
        return "value", function(*args, **kwargs)
    except RecursionError:
        return "error", RecursionError
    except (ValueError, TypeError) as exc:  # UnicodeDecodeError and JSONDecodeError among them
        return "error", ValueError if isinstance(exc, ValueError) else TypeError


def assert_reads_as_stdlib(data: bytes | str) -> None:
    ours, theirs = outcome(jsonfast.loads, data), outcome(std_loads, data)
    assert ours[0] == theirs[0], (data[:80], ours, theirs)
    if ours[0] == "value":
        assert same(ours[1], theirs[1]), (data[:80], ours, theirs)
    else:
        assert ours[1] is theirs[1], (data[:80], ours, theirs)


READ_CASES = [
    b'"\\ud800"',  # a lone high surrogate
    b'"\\udce9 bytes"',  # a lone low surrogate, as surrogateescape makes them
    b'"\\ude00\\ud83d"',  # a pair in the wrong order: two lone ones
    b'"\\ud83d\\ude00"',  # a pair: one character
    b'"\\ud83d"',
    b'"\xed\xa0\x80"',  # a surrogate encoded as UTF-8: not UTF-8
    b'"\xff"',
    b"\xef\xbb\xbf{}",  # a byte order mark
    b"18446744073709551615",  # the largest unsigned 64-bit integer
    b"18446744073709551616",  # one more
    b"-9223372036854775808",
    b"-9223372036854775809",
    b"123456789012345678901234567890123456789",
    b"1" * 4300,  # the longest integer Python converts by default
    b"1" * 4301,
    b"-0",
    b"-0.0",
    b"0.0",
    b"-1e-400",  # underflows to -0.0
    b"1e400",  # overflows: the stdlib reads it as infinity
    b"1" * 400 + b".5",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b'{"x":NaN}',
    b"[1e22,1e-7,5e-324,1.7976931348623157e308,0.1,100.0,1E2,1e+2]",
    b'"a\x01b"',  # a raw control character
    b'"tab\there"',
    b'"\\u0000\\u001f\\u007f\\u2028"',
    b'"\\x"',
    b'"\\u00"',
    b'{"a":1,"b":2,"a":3}',  # the last of a repeated key wins, in the first one's place
    b'  {"a" : [ 1 , 2 ] }\r\n',
    b'{"a":1}\n\n',
    b'{"a":1} x',
    b'{"a":1}{"b":2}',
    b"01",
    b"1.",
    b".5",
    b"[1,]",
    b"",
    b"\n",
    b"\xc2\xa01",  # a non-breaking space is not JSON whitespace
    b"[" * 100_000 + b"]" * 100_000,
    b"[" * 100_000,
    b'{"v":1,"type":"mode_change","mode":"m","x":' + b"[" * 5000 + b"\n",
    '"é \\u00e9 \ud800"',  # text, not bytes, lone surrogate and all
]


@pytest.mark.parametrize("data", READ_CASES, ids=lambda d: repr(d[:24]))
def test_edge_cases_read_as_the_stdlib_reads_them(data: bytes | str) -> None:
    assert_reads_as_stdlib(data)


def test_nan_and_infinity_are_refused_with_their_name() -> None:
    for name in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(ValueError, match=name.lstrip("-")):
            jsonfast.loads(b'{"x":' + name.encode() + b"}")


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63 - 4, max_value=2**64 + 4)
    | st.integers(min_value=-(2**64) - 4, max_value=-(2**63) + 4)
    | st.integers(min_value=-(10**80), max_value=10**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, -0.0, 1e-7, 1e22, 5e-324])
    | st.text()  # lone surrogates included
    | st.text(alphabet=st.characters(max_codepoint=0x7F))
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=6), children, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(value=json_values, ascii=st.booleans())
def test_what_the_stdlib_writes_reads_back_as_the_stdlib_reads_it(value: Any, ascii: bool) -> None:
    line = std_dumps(value, ascii=ascii) if ascii or _utf8(value) else std_dumps(value, ascii=True)
    assert_reads_as_stdlib(line)
    assert same(jsonfast.loads(line), value)


def _utf8(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


JSON_ALPHABET = st.sampled_from(
    [
        *'{}[],:"\\ \t\n\r0123456789.eE+-tfnrulsaNIyxu',
        "\\u",
        "d800",
        "dc00",
        "00e9",
        "é",
        "\x01",
        "\u2028",
        "true",
        "null",
        "NaN",
    ]
)


@settings(max_examples=1500, deadline=None)
@given(pieces=st.lists(JSON_ALPHABET, max_size=40))
def test_any_text_reads_as_the_stdlib_reads_it(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert_reads_as_stdlib(text.encode("utf-8", "surrogatepass"))
    assert_reads_as_stdlib(text)


@settings(max_examples=400, deadline=None)
@given(value=json_values, ascii=st.booleans())
def test_what_is_written_reads_back_as_the_value(value: Any, ascii: bool) -> None:
    written = jsonfast.dumps(value, ascii=ascii)
    assert isinstance(written, bytes)
    assert b"\n" not in written  # one line, whatever the strings hold
    if ascii:
        assert written.isascii()
    text = written.decode("utf-8")  # valid UTF-8 either way
    assert same(json.loads(text), value)
    assert same(std_loads(std_dumps(value, ascii=True)), json.loads(text))


no_floats = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1) | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=6), children, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(value=no_floats, ascii=st.booleans())
def test_without_floats_the_bytes_are_the_stdlibs(value: Any, ascii: bool) -> None:
    # Floats are the one place the text may differ (``1e-07`` or ``1e-7``): the same number.
    if not ascii and not _utf8(value):
        expected = std_dumps(value, ascii=True)  # the stdlib's text cannot be UTF-8
    else:
        expected = std_dumps(value, ascii=ascii)
    assert jsonfast.dumps(value, ascii=ascii) == expected


@pytest.mark.parametrize(
    "value",
    [
        "\ud800",
        {"text": "fails on \udce9 bytes", "é": "\u2028"},
        2**64,
        -(2**63) - 1,
        10**100,
        -0.0,
        [0.0, -0.0, 1e-7, 1e22, 5e-324, 1.7976931348623157e308],
        {2: "a", True: "b", None: "c", 2.5: "d"},  # keys the stdlib writes as strings
        FrozenDict({"a": (1, 2, {"b": None})}),
        freeze_json({"nested": [{"deep": [1, "x", None]}]}),
        ("a", ("b",)),
        "",
        {},
        [],
    ],
    ids=repr,
)
@pytest.mark.parametrize("ascii", [True, False])
def test_edge_values_are_written_as_the_stdlib_writes_them(value: object, ascii: bool) -> None:
    written = jsonfast.dumps(value, ascii=ascii)
    if ascii:
        assert written.isascii()
    assert same(json.loads(written.decode("utf-8")), std_loads(std_dumps(value, ascii=True)))


@dataclasses.dataclass
class Point:
    x: int


class Plain:
    pass


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        (-float("inf"), ValueError),
        ({"deep": [1, {"x": float("nan")}]}, ValueError),
        ({"a": "null", "b": float("nan")}, ValueError),
        ({1, 2}, TypeError),
        (b"bytes", TypeError),
        (datetime(2025, 1, 2, tzinfo=UTC), TypeError),
        (Point(1), TypeError),
        (Plain(), TypeError),
        ({(1, 2): "a tuple key"}, TypeError),
        (10**4300, ValueError),  # more digits than Python converts
    ],
    ids=lambda value: type(value).__name__,
)
@pytest.mark.parametrize("ascii", [True, False])
def test_what_is_not_json_is_refused_as_the_stdlib_refuses_it(
    value: object, error: type[Exception], ascii: bool
) -> None:
    with pytest.raises(error):
        std_dumps(value, ascii=ascii)
    with pytest.raises(error):
        jsonfast.dumps(value, ascii=ascii)


def test_a_nested_cycle_is_refused() -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises((ValueError, RecursionError)):
        jsonfast.dumps(loop)


class Colour(enum.Enum):
    RED = "red"


def test_enum_members_and_uuids_are_written_as_their_values() -> None:
    # The one difference from the stdlib, which refuses them: orjson writes them natively.
    # Neither the store nor the wire carries one (their values are checked JSON).
    assert jsonfast.dumps([Colour.RED]) == b'["red"]'
    ident = uuid.UUID(int=1)
    assert jsonfast.dumps(ident) == b'"00000000-0000-0000-0000-000000000001"'


def std_utf8(value: object) -> bytes | None:
    """The stdlib's compact UTF-8 text of ``value``, or ``None`` where it has none."""
    try:
        return std_dumps(value, ascii=False)
    except (ValueError, TypeError, RecursionError):  # UnicodeEncodeError: a lone surrogate
        return None


small_floats = st.floats(min_value=1e-10, max_value=2e-4) | st.floats(
    min_value=-2e-4, max_value=-1e-10
)
"""Where orjson's float text is not the stdlib's (``1e-7``, ``0.00001``)."""


@settings(max_examples=600, deadline=None)
@given(value=json_values | st.lists(small_floats | json_scalars, max_size=4))
def test_stdlib_bytes_are_the_stdlibs_or_none(value: Any) -> None:
    written = jsonfast.stdlib_bytes(value)
    if written is not None:
        assert written == std_utf8(value)


@pytest.mark.parametrize(
    "value",
    [1e-5, 3.865571047614699e-05, 1e-7, -6.485064180992564e-06, 7.1850441006303285e-09],
    ids=repr,
)
def test_the_floats_orjson_writes_otherwise_are_left_to_the_stdlib(value: float) -> None:
    assert json.dumps(value) != orjson_text(value)  # the case this guards is real
    assert jsonfast.stdlib_bytes({"x": [value]}) is None


@pytest.mark.parametrize("dashes", [0, 1, 7, 8, 9, 40])
def test_a_short_exponent_is_found_behind_any_number_of_dashes(dashes: int) -> None:
    # The first few '-' are looked at one by one, the rest searched: both must find it.
    value = {"id": "call-" * dashes, "x": [1e-7]}
    assert json.dumps(value, separators=(",", ":")) != orjson_text(value)  # a real case
    assert jsonfast.stdlib_bytes(value) is None
    plain = {"id": "call-" * dashes, "x": [1e-4], "t": "e-9x re-run 1e-"}
    assert jsonfast.stdlib_bytes(plain) == std_utf8(plain)


def orjson_text(value: object) -> str:
    import orjson

    return orjson.dumps(value).decode()


@pytest.mark.parametrize(
    "value",
    [
        float("nan"),
        {"a": [1, float("inf")]},
        {"a": None},
        2**64,
        "a\ud800b",
        {2: "a"},
        Point(1),
        datetime(2025, 1, 2, tzinfo=UTC),
    ],
    ids=repr,
)
def test_what_orjson_might_write_otherwise_or_refuses_is_left_to_the_stdlib(value: object) -> None:
    assert jsonfast.stdlib_bytes(value) is None


@pytest.mark.parametrize(
    "value",
    [
        {"text": 'héllo ✓ \u2028 \x7f \x00\x1f\b\f\n\r\t"\\ re-run e-9x'},
        [0.0, -0.0, 1e-4, 0.5, 1e16, 1e22, 5e-324, 1e-10, 1.7976931348623157e308, 12345.678],
        FrozenDict({"a": (1, 2, {"b": "c"})}),
        [2**63 - 1, -(2**63), True, False, "", {}, []],
    ],
    ids=repr,
)
def test_common_values_are_written_by_orjson_as_the_stdlib_writes_them(value: object) -> None:
    assert jsonfast.stdlib_bytes(value) == std_utf8(value)


plain_values = st.recursive(
    st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1) | st.text(),
    lambda children: (
        st.lists(children, max_size=6)
        | st.lists(children, max_size=6).map(tuple)
        | st.dictionaries(st.text(max_size=6), children, max_size=6)
        | st.dictionaries(st.text(max_size=6), children, max_size=6).map(FrozenDict)
    ),
    max_leaves=80,
)
"""No float and no null: a value whose members stdlib_bytes may look at instead of its text."""


@settings(max_examples=400, deadline=None)
@given(value=plain_values)
def test_a_value_without_floats_or_nulls_is_written_as_the_stdlib_writes_it(value: Any) -> None:
    written = jsonfast.stdlib_bytes(value)
    expected = std_utf8(value)
    if expected is None:  # a lone surrogate: refused by orjson, left to the stdlib
        assert written is None
    elif members(value) <= jsonfast._NODES_WALKED and len(expected) >= jsonfast._WALKED_FROM:
        assert written == expected  # looked at: its text never searched
    else:  # left to the search of its text, which may find a "null" in a string
        assert written in (None, expected)


def members(value: Any) -> int:
    if isinstance(value, dict):
        return len(value) + sum(members(v) for v in value.values())
    if isinstance(value, list | tuple):
        return len(value) + sum(members(v) for v in value)
    return 0


class Reordered(dict[str, Any]):
    """A dict whose ``items`` the stdlib follows and orjson does not."""

    def items(self) -> Any:
        return reversed(list(super().items()))


@pytest.mark.parametrize(
    "value",
    [
        {"a": [1, {"b": None}]},
        {"a": (1, [2, [3, 1e-7]])},
        {"deep": [[[[{"x": 0.00001}]]]]},
        [True, "null", Colour.RED],
        {"many": [*range(100), None]},  # past the members looked at: its text searched
    ],
    ids=repr,
)
def test_a_float_or_a_null_anywhere_is_still_found(value: object) -> None:
    written = jsonfast.stdlib_bytes(value)
    assert written is None or written == std_utf8(value)
    if "null" in json.dumps(value, default=lambda o: o.value) or "e-" in repr(value):
        assert written is None


def test_a_dict_that_the_encoders_read_apart_is_left_to_the_text_search() -> None:
    value = {"outer": Reordered(a=1, b=2)}
    assert json.dumps(value, separators=(",", ":")) != orjson_text(value)  # a real case
    assert jsonfast._walked(value, 64) == -1
    assert jsonfast._walked({"outer": FrozenDict(a=1, b=2)}, 64) >= 0  # a frozen snapshot


class Shadowed(dict[str, Any]):
    """Overrides no read on the class; an instance may still shadow ``items``, which the stdlib
    calls as found on the instance and orjson never calls."""


class Intercepted(dict[str, Any]):
    """Answers ``items`` from ``__getattribute__``: the stdlib asks it, orjson does not."""

    def __getattribute__(self, name: str) -> Any:
        if name == "items":
            return lambda: [("a", 1)]
        return super().__getattribute__(name)


def test_a_dict_read_apart_through_its_instance_is_not_taken_as_a_dict() -> None:
    shadowed = Shadowed(a="null")
    shadowed.items = lambda: [("a", 1)]  # type: ignore[method-assign]
    for value in (shadowed, Intercepted(a="null")):
        assert std_utf8(value) == b'{"a":1}'  # what the stdlib reads: not orjson's storage
        assert jsonfast._walked(value, 64) == -1
        assert jsonfast.stdlib_bytes(value) in (None, std_utf8(value))


def test_a_long_text_of_few_members_is_walked_and_a_short_one_searched() -> None:
    long = {"text": "null " * (jsonfast._WALKED_FROM // 5 + 1), "n": 1}
    short = {"text": "null", "n": 1}
    assert jsonfast.stdlib_bytes(long) == std_utf8(long)  # no float, no null: not searched
    assert jsonfast.stdlib_bytes(short) is None  # its text searched: a "null" left to the stdlib


MEMBER_KEYS = st.sampled_from(['"v"', '"\\u0076"', '"\\u0056"', '"x"', '"v "'])
MEMBER_VALUES = st.one_of(
    st.sampled_from(["1", "2.0", "-0", "1e400", "NaN", "18446744073709551616", '"\\ud800"', "[]"]),
    JSON_ALPHABET,
    json_values.map(lambda value: json.dumps(value, ensure_ascii=False)),
)


@settings(max_examples=600, deadline=None)
@given(
    members=st.lists(st.tuples(MEMBER_KEYS, MEMBER_VALUES, st.sampled_from(["", " "])), max_size=5),
    shape=st.sampled_from(["{%s}", " {%s}\n", "[{%s}]", "{%s}{}", "\ufeff{%s}"]),
)
def test_a_member_read_alone_is_the_member_of_the_object_read_whole(
    members: list[tuple[str, str, str]], shape: str
) -> None:
    text = shape % ",".join(f"{key}{space}:{space}{value}" for key, value, space in members)
    data = text.encode("utf-8", "surrogatepass")
    try:
        member = jsonfast.member_reader("v")(memoryview(data))
    except ValueError:
        return  # left to loads
    try:
        whole = jsonfast.loads(data)
    except ValueError:
        return  # a text loads refuses may hold a member the reader found: damage either way
    assert type(whole) is dict
    assert same(whole["v"], member)


@pytest.mark.parametrize(
    ("data", "member"),
    [
        (b'{"v":1,"x":"v","v":3}', 3),
        (b'{"\\u0076":2}', 2),
        (b'{"v":{"v":5}}', {"v": 5}),
        (b' {"x":[1,{"v":4}],"v":true} ', True),
    ],
)
def test_a_member_is_the_one_a_whole_read_keeps(data: bytes, member: object) -> None:
    assert jsonfast.member_reader("v")(data) == member == jsonfast.loads(data)["v"]


@pytest.mark.parametrize("data", [b'{"x":1}', b"[1]", b'{"v":1} x', b"", b'{"v":1e400}'])
def test_a_text_without_the_member_is_refused_as_not_json(data: bytes) -> None:
    with pytest.raises(ValueError):
        jsonfast.member_reader("v")(data)
