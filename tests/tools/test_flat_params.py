"""A parameters class of strings, integers, booleans and string literals is built from its
validated arguments as keywords: the instance cattrs' own structuring gives, every time."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import attrs
import pytest
from cattrs.gen import make_dict_structure_fn
from hypothesis import given
from hypothesis import strategies as st

from acp_sidecar.tools.builtin.bash import BashArgs
from acp_sidecar.tools.builtin.edit import EditArgs
from acp_sidecar.tools.builtin.glob import GlobArgs
from acp_sidecar.tools.builtin.grep import GrepArgs
from acp_sidecar.tools.builtin.read import ReadArgs
from acp_sidecar.tools.builtin.write import WriteArgs
from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.params import _converter, _is_flat, attrs_args_narrower


@attrs.frozen
class Flat:
    name: Annotated[str, "a name"]
    left_out: str | None  # no default: None when omitted
    mode: Literal["a", "b"] = "a"
    count: int | None = None
    loud: bool = False
    note: str | None = attrs.field(default=None, kw_only=True)


@attrs.frozen
class WithFloat:
    ratio: float


@attrs.frozen
class Checked:
    count: int = attrs.field(validator=attrs.validators.ge(0))


def slow(cls: type, value: Any) -> Any:
    """cattrs' own hook, with the omitted ``X | None`` filled as the module fills them."""
    from acp_sidecar.tools.params import _class_info

    fill = {n: None for n in _class_info(cls, ()).none_fill if n not in value}
    return make_dict_structure_fn(cls, _converter)({**value, **fill}, cls)


@pytest.mark.parametrize(
    "cls", [Flat, BashArgs, EditArgs, GlobArgs, GrepArgs, ReadArgs, WriteArgs, Checked]
)
def test_these_classes_are_flat(cls: type) -> None:
    assert _is_flat(cls)


def test_a_float_field_is_left_to_cattrs() -> None:
    assert not _is_flat(WithFloat)
    assert attrs_args_narrower(WithFloat)({"ratio": 3}) == WithFloat(3.0)  # cattrs: float(3)
    assert type(attrs_args_narrower(WithFloat)({"ratio": 3}).ratio) is float


arguments = st.fixed_dictionaries(
    {"name": st.text(max_size=8)},
    optional={
        "mode": st.sampled_from(["a", "b"]),
        "count": st.integers(-(2**70), 2**70) | st.floats(-1e6, 1e6).map(float.__floor__),
        "loud": st.booleans(),
        "note": st.text(max_size=8),
        "left_out": st.text(max_size=8),
    },
)


@given(arguments)
def test_flat_arguments_build_what_cattrs_builds(value: dict[str, Any]) -> None:
    from acp_sidecar.tools.params import _class_info

    validated = _class_info(Flat, ()).compiled.validate(value)
    built = attrs_args_narrower(Flat)(value)
    assert built == slow(Flat, validated)
    assert all(type(getattr(built, f)) is type(getattr(slow(Flat, validated), f)) for f in value)


def test_the_class_own_validators_still_run() -> None:
    with pytest.raises(ToolArgsError) as caught:
        attrs_args_narrower(Checked)({"count": -1})
    assert caught.value.violations[0].startswith("/: ")


paths = st.text(max_size=8) | st.sampled_from(["src/ü.py", "/abs/путь", "../x", ""])
edit_arguments = st.fixed_dictionaries(
    {"path": paths, "old_string": st.text(max_size=8), "new_string": st.text(max_size=8)},
    optional={"replace_all": st.booleans()},
)
grep_arguments = st.fixed_dictionaries(
    {"pattern": st.text(max_size=8)},
    optional={
        "path": paths,
        "glob": st.text(max_size=4),
        "case_insensitive": st.booleans(),
        "max_results": st.integers(-5, 5000),
    },
)


@given(st.tuples(st.just(EditArgs), edit_arguments) | st.tuples(st.just(GrepArgs), grep_arguments))
def test_a_class_with_nothing_to_fill_builds_what_cattrs_builds(
    case: tuple[type, dict[str, Any]],
) -> None:
    from acp_sidecar.tools.params import _class_info

    cls, value = case
    assert not _class_info(cls, ()).none_fill
    validated = _class_info(cls, ()).compiled.validate(value)
    built = attrs_args_narrower(cls)(value)
    assert built == slow(cls, validated)
    assert all(type(getattr(built, f)) is type(getattr(slow(cls, validated), f)) for f in value)
