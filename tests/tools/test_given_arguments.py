"""``given_arguments``, the raw input of the built-in tools' generic cards, is what
``attrs.asdict`` (fields that are not ``None``) gives, frozen by the view as before."""

from __future__ import annotations

import enum
from typing import Any

import attrs
from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.tools.builtin.glob import GlobArgs
from acp_sidecar.tools.builtin.grep import GrepArgs
from acp_sidecar.tools.builtin.read import ReadArgs
from acp_sidecar.tools.json_values import FrozenDict, freeze_json
from acp_sidecar.tools.presentation import GenericCallView, given_arguments

text = st.text(max_size=20)
maybe_text = st.none() | text
maybe_int = st.none() | st.integers(-(2**70), 2**70)


def via_asdict(args: Any) -> Any:
    return freeze_json(attrs.asdict(args, filter=lambda _a, v: v is not None))


@given(st.builds(GrepArgs, text, maybe_text, maybe_text, st.booleans(), maybe_int))
def test_grep_arguments(args: GrepArgs) -> None:
    shown = given_arguments(args)
    assert type(shown) is FrozenDict
    assert list(shown.items()) == list(via_asdict(args).items())  # same keys, same order


@given(st.builds(GlobArgs, text, maybe_text))
def test_glob_arguments(args: GlobArgs) -> None:
    assert list(given_arguments(args).items()) == list(via_asdict(args).items())  # type: ignore[union-attr]


@given(st.builds(ReadArgs, text, maybe_int, maybe_int))
def test_read_arguments(args: ReadArgs) -> None:
    assert list(given_arguments(args).items()) == list(via_asdict(args).items())  # type: ignore[union-attr]


@attrs.frozen
class Nested:
    inner: ReadArgs
    names: list[str]


class Level(enum.IntEnum):
    LOW = 1


@attrs.frozen
class WithEnum:
    level: Level


def test_other_parameters_are_what_asdict_gives() -> None:
    nested = Nested(ReadArgs("a.py", None, 3), ["x"])
    assert given_arguments(nested) == {"inner": {"path": "a.py", "limit": 3}, "names": ["x"]}
    assert GenericCallView(title="t", raw_input=given_arguments(nested)).raw_input == via_asdict(
        nested
    )
    # Not lossless JSON (an IntEnum would not round-trip): refused by the view, as before.
    assert given_arguments(WithEnum(Level.LOW)) == {"level": Level.LOW}
    try:
        GenericCallView(title="t", raw_input=given_arguments(WithEnum(Level.LOW)))
    except ValueError as exc:
        assert "lossless JSON" in str(exc)
    else:
        raise AssertionError("an IntEnum was taken as JSON")
