"""Card views: required tags, forgiving but safe construction, immutability."""

from __future__ import annotations

import json
from typing import Any, assert_never

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_sidecar.tools.content import ImageContent, TextContent
from acp_sidecar.tools.json_values import FrozenDict
from acp_sidecar.tools.presentation import (
    TOOL_CALL_KINDS,
    DiffCallView,
    DiffResultView,
    FileDiff,
    FileLocation,
    GenericCallView,
    GenericResultView,
    PlanItem,
    PlanResultView,
    TerminalCallView,
    TerminalResultView,
    ToolCallView,
    ToolResult,
    ToolResultView,
    is_call_view,
    is_result_view,
)

CALL_CLASSES = (GenericCallView, TerminalCallView, DiffCallView)
RESULT_CLASSES = (GenericResultView, TerminalResultView, DiffResultView, PlanResultView)
TAGS = {
    GenericCallView: "generic",
    TerminalCallView: "terminal",
    DiffCallView: "diff",
    GenericResultView: "generic",
    TerminalResultView: "terminal",
    DiffResultView: "diff",
    PlanResultView: "plan",
}
REQUIRED: dict[type, dict[str, Any]] = {
    GenericCallView: {"title": "t"},
    TerminalCallView: {"title": "t"},
    DiffCallView: {"title": "t", "diffs": ()},
    GenericResultView: {},
    TerminalResultView: {},
    DiffResultView: {"diffs": ()},
    PlanResultView: {"entries": ()},
}


def minimal(cls: type) -> Any:
    return cls(card=TAGS[cls], **REQUIRED[cls])


# --- construction -------------------------------------------------------------------------------


def test_the_kinds_are_the_spec_kinds() -> None:
    assert TOOL_CALL_KINDS == (
        "read",
        "edit",
        "delete",
        "move",
        "search",
        "execute",
        "fetch",
        "other",
    )


def test_defaults() -> None:
    assert minimal(GenericCallView) == GenericCallView(
        card="generic", title="t", kind=None, raw_input=None, content=(), locations=()
    )
    assert minimal(TerminalCallView) == TerminalCallView(
        card="terminal", title="t", description=None, cwd=None, command=None
    )
    assert minimal(DiffCallView) == DiffCallView(card="diff", title="t", diffs=(), locations=())
    assert minimal(GenericResultView) == GenericResultView(card="generic", title=None, content=None)
    assert minimal(TerminalResultView) == TerminalResultView(
        card="terminal", title=None, output=None, exit_code=None, signal=None
    )
    assert minimal(DiffResultView) == DiffResultView(card="diff", title=None, diffs=())
    assert FileLocation("/a") == FileLocation(path="/a", line=None)
    assert ToolResult((), False) == ToolResult(content=(), is_error=False, meta=None)


@pytest.mark.parametrize("cls", CALL_CLASSES + RESULT_CLASSES)
def test_the_card_tag_defaults_to_the_class_tag(cls: type) -> None:
    assert cls(**REQUIRED[cls]).card == TAGS[cls]
    assert cls(**REQUIRED[cls]) == minimal(cls)


@pytest.mark.parametrize("cls", CALL_CLASSES + RESULT_CLASSES)
@pytest.mark.parametrize("tag", ["generic", "terminal", "diff", "Generic", "", None, 1])
def test_a_wrong_card_tag_is_rejected(cls: type, tag: object) -> None:
    if tag == TAGS[cls]:
        assert minimal(cls).card == tag
        return
    with pytest.raises(ValueError) as caught:
        cls(card=tag, **REQUIRED[cls])
    assert str(caught.value) == f"{cls.__name__}.card must be {TAGS[cls]!r}, got {tag!r}"


def test_views_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        GenericCallView("generic", "t")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (
            lambda: GenericCallView(card="generic", title=1),
            TypeError,
            "GenericCallView.title must be a str, got int",
        ),
        (
            lambda: GenericCallView(card="generic", title=None),
            TypeError,
            "GenericCallView.title must be a str, got NoneType",
        ),
        (
            lambda: GenericCallView(card="generic", title="t", kind="write"),
            ValueError,
            "GenericCallView.kind must be one of 'read', 'edit', 'delete', 'move', 'search',"
            " 'execute', 'fetch', 'other' or None, got 'write'",
        ),
        (
            lambda: GenericCallView(card="generic", title="t", kind=["read"]),
            ValueError,
            "GenericCallView.kind must be one of 'read', 'edit', 'delete', 'move', 'search',"
            " 'execute', 'fetch', 'other' or None, got ['read']",
        ),
        (
            lambda: GenericCallView(card="generic", title="t", content="text"),
            TypeError,
            "GenericCallView.content must be a tuple of content blocks, got str",
        ),
        (
            lambda: GenericCallView(
                card="generic", title="t", content=[TextContent("a"), {"x": 1}]
            ),
            TypeError,
            "GenericCallView.content[1] must be a content block, got dict",
        ),
        (
            lambda: GenericCallView(card="generic", title="t", locations=["/a"]),
            TypeError,
            "GenericCallView.locations[0] must be a FileLocation, got str",
        ),
        (
            lambda: GenericCallView(card="generic", title="t", raw_input={"a": {1}}),
            ValueError,
            "GenericCallView.raw_input must be lossless JSON: /a: set is not JSON",
        ),
        (
            lambda: GenericCallView(card="generic", title="t", raw_input=float("nan")),
            ValueError,
            "GenericCallView.raw_input must be lossless JSON: /: nan is not a JSON number",
        ),
        (
            lambda: TerminalCallView(card="terminal", title="t", cwd=b"/"),
            TypeError,
            "TerminalCallView.cwd must be a str or None, got bytes",
        ),
        (
            lambda: TerminalCallView(card="terminal", title="t", description=0),
            TypeError,
            "TerminalCallView.description must be a str or None, got int",
        ),
        (
            lambda: DiffCallView(card="diff", title="t", diffs=None),
            TypeError,
            "DiffCallView.diffs must be a tuple of FileDiffs, got NoneType",
        ),
        (
            lambda: DiffCallView(card="diff", title="t", diffs=[FileLocation("/a")]),
            TypeError,
            "DiffCallView.diffs[0] must be a FileDiff, got FileLocation",
        ),
        (
            lambda: GenericResultView(card="generic", content="x"),
            TypeError,
            "GenericResultView.content must be a tuple of content blocks or None, got str",
        ),
        (
            lambda: TerminalResultView(card="terminal", exit_code=True),
            TypeError,
            "TerminalResultView.exit_code must be an int or None, got bool",
        ),
        (
            lambda: TerminalResultView(card="terminal", exit_code=1.0),
            TypeError,
            "TerminalResultView.exit_code must be an int or None, got float",
        ),
        (
            lambda: TerminalResultView(card="terminal", signal=9),
            TypeError,
            "TerminalResultView.signal must be a str or None, got int",
        ),
        (
            lambda: TerminalResultView(card="terminal", output=["a"]),
            TypeError,
            "TerminalResultView.output must be a str or None, got list",
        ),
        (
            lambda: DiffResultView(card="diff", title=3, diffs=()),
            TypeError,
            "DiffResultView.title must be a str or None, got int",
        ),
        (lambda: FileLocation(1), TypeError, "FileLocation.path must be a str, got int"),
        (
            lambda: FileLocation("/a", True),
            TypeError,
            "FileLocation.line must be an int or None, got bool",
        ),
        (
            lambda: FileLocation("/a", "3"),
            TypeError,
            "FileLocation.line must be an int or None, got str",
        ),
        (
            lambda: FileLocation("/a", -1),
            ValueError,
            "FileLocation.line must not be negative, got -1",
        ),
        (
            lambda: FileDiff("/a", 0, "x"),
            TypeError,
            "FileDiff.old_text must be a str or None, got int",
        ),
        (
            lambda: FileDiff("/a", None, None),
            TypeError,
            "FileDiff.new_text must be a str, got NoneType",
        ),
        (lambda: ToolResult((), 0), TypeError, "ToolResult.is_error must be a bool, got int"),
        (
            lambda: ToolResult("text", False),
            TypeError,
            "ToolResult.content must be a tuple of content blocks, got str",
        ),
        (
            lambda: ToolResult((), False, meta={1: "x"}),
            ValueError,
            "ToolResult.meta must be lossless JSON: /: key 1 is not a string",
        ),
    ],
)
def test_bad_fields_are_rejected(build: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as caught:
        build()
    assert str(caught.value) == message


def test_lists_become_tuples() -> None:
    location = FileLocation("/a", 0)
    diff = FileDiff("/a", None, "new")
    call = GenericCallView(
        card="generic", title="t", content=[TextContent("x")], locations=[location]
    )
    assert call.content == (TextContent("x"),)
    assert call.locations == (location,)
    assert DiffCallView(card="diff", title="t", diffs=[diff], locations=[location]).diffs == (diff,)
    assert DiffResultView(card="diff", diffs=[diff]).diffs == (diff,)
    assert GenericResultView(card="generic", content=[]).content == ()
    assert ToolResult([ImageContent("AA==", "image/png")], True).content == (
        ImageContent("AA==", "image/png"),
    )


def test_json_fields_are_detached_frozen_copies() -> None:
    args: dict[str, Any] = {"path": "/a", "lines": [1, 2]}
    view = GenericCallView(card="generic", title="t", raw_input=args)
    args["lines"].append(3)
    args["path"] = "/b"
    assert view.raw_input == {"path": "/a", "lines": (1, 2)}
    assert isinstance(view.raw_input, FrozenDict)
    with pytest.raises(TypeError):
        view.raw_input["path"] = "/c"
    meta: list[Any] = [{"k": "v"}]
    result = ToolResult((), False, meta=meta)
    meta[0]["k"] = "w"
    assert result.meta == ({"k": "v"},)


def test_empty_content_and_absent_content_differ() -> None:
    assert GenericResultView(card="generic", content=()) != GenericResultView(card="generic")


@pytest.mark.parametrize(
    "cls", CALL_CLASSES + RESULT_CLASSES + (FileLocation, FileDiff, ToolResult)
)
def test_every_class_is_frozen_and_hashable(cls: type) -> None:
    if cls is FileLocation:
        value: Any = FileLocation("/a", 1)
    elif cls is FileDiff:
        value = FileDiff("/a", "old", "new")
    elif cls is ToolResult:
        value = ToolResult((TextContent("x"),), False, meta={"a": [1]})
    else:
        value = minimal(cls)
    for field in attrs.fields(cls):
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            setattr(value, field.name, getattr(value, field.name))
    assert hash(value) == hash(attrs.evolve(value))


@pytest.mark.parametrize("cls", CALL_CLASSES)
def test_call_views_are_recognised(cls: type) -> None:
    assert is_call_view(minimal(cls))
    assert not is_result_view(minimal(cls))


@pytest.mark.parametrize("cls", RESULT_CLASSES)
def test_result_views_are_recognised(cls: type) -> None:
    assert is_result_view(minimal(cls))
    assert not is_call_view(minimal(cls))


@pytest.mark.parametrize(
    "other",
    [None, {"card": "generic", "title": "t"}, "generic", FileLocation("/a"), ToolResult((), False)],
)
def test_other_values_are_not_views(other: object) -> None:
    assert not is_call_view(other)
    assert not is_result_view(other)


def test_a_subclass_is_not_a_view() -> None:
    @attrs.frozen(kw_only=True)
    class Sneaky(GenericCallView):  # type: ignore[misc]
        extra: list[int] = attrs.field(factory=list)

    assert not is_call_view(Sneaky(card="generic", title="t"))


def describe(view: ToolCallView | ToolResultView) -> str:
    """An exhaustive consumer, as the bridge writes one: it must type-check."""
    match view:
        case GenericCallView() | GenericResultView():
            return "generic"
        case TerminalCallView() | TerminalResultView():
            return "terminal"
        case DiffCallView() | DiffResultView():
            return "diff"
        case PlanResultView():
            return "plan"
        case _:
            assert_never(view)


@pytest.mark.parametrize("cls", CALL_CLASSES + RESULT_CLASSES)
def test_an_exhaustive_match_covers_every_view(cls: type) -> None:
    assert describe(minimal(cls)) == TAGS[cls]


# --- properties ---------------------------------------------------------------------------------

TEXT = st.text(max_size=8)
OPTIONAL_TEXT = st.none() | TEXT
JSON_DATA: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
BLOCKS = st.lists(st.builds(TextContent, TEXT) | st.builds(ImageContent, TEXT, TEXT), max_size=3)
LOCATIONS = st.lists(
    st.builds(FileLocation, TEXT, st.none() | st.integers(0, 2**32 - 1)), max_size=3
)
DIFFS = st.lists(st.builds(FileDiff, TEXT, OPTIONAL_TEXT, TEXT), max_size=3)
SIGNALS = st.none() | st.sampled_from(["SIGTERM", "SIGKILL"])

call_views: st.SearchStrategy[ToolCallView] = st.one_of(
    st.builds(
        GenericCallView,
        card=st.just("generic"),
        title=TEXT,
        kind=st.none() | st.sampled_from(TOOL_CALL_KINDS),
        raw_input=JSON_DATA,
        content=BLOCKS,
        locations=LOCATIONS,
    ),
    st.builds(
        TerminalCallView,
        card=st.just("terminal"),
        title=TEXT,
        description=OPTIONAL_TEXT,
        cwd=OPTIONAL_TEXT,
    ),
    st.builds(DiffCallView, card=st.just("diff"), title=TEXT, diffs=DIFFS, locations=LOCATIONS),
)
result_views: st.SearchStrategy[ToolResultView] = st.one_of(
    st.builds(
        GenericResultView, card=st.just("generic"), title=OPTIONAL_TEXT, content=st.none() | BLOCKS
    ),
    st.builds(
        TerminalResultView,
        card=st.just("terminal"),
        title=OPTIONAL_TEXT,
        output=OPTIONAL_TEXT,
        exit_code=st.none() | st.integers(-255, 255),
        signal=SIGNALS,
    ),
    st.builds(DiffResultView, card=st.just("diff"), title=OPTIONAL_TEXT, diffs=DIFFS),
)
views = call_views | result_views

FAST = settings(max_examples=80, deadline=None)


def same_json(left: object, right: object) -> bool:
    """Equality that also tells ``True`` from ``1`` and ``1`` from ``1.0``."""
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


@FAST
@given(views, st.data())
def test_views_cannot_be_mutated(view: ToolCallView | ToolResultView, data: st.DataObject) -> None:
    field = data.draw(st.sampled_from(attrs.fields(type(view))))
    before = repr(view)  # tells True from 1 and 1 from 1.0, like the JSON did
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(view, field.name, None)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        delattr(view, field.name)
    assert repr(view) == before


@FAST
@given(views)
def test_views_are_recognised_by_phase(view: ToolCallView | ToolResultView) -> None:
    assert is_call_view(view) == (type(view) in CALL_CLASSES)
    assert is_result_view(view) != is_call_view(view)


@FAST
@given(st.lists(st.builds(TextContent, TEXT), max_size=3), st.booleans(), JSON_DATA)
def test_a_tool_result_keeps_what_it_was_given(
    content: list[TextContent], is_error: bool, meta: Any
) -> None:
    result = ToolResult(content, is_error, meta)
    assert result.content == tuple(content)
    assert result.is_error is is_error
    assert same_json(result.meta, meta)


def test_a_plan_view_holds_checked_items() -> None:
    item = PlanItem("Fix it", "high", "in_progress")
    assert PlanResultView(entries=[item]).entries == (item,)
    with pytest.raises(ValueError, match=r"PlanItem\.priority must be one of 'high', 'medium'"):
        PlanItem("Fix it", "urgent", "pending")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"PlanItem\.status must be one of 'pending'"):
        PlanItem("Fix it", "low", "done")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"PlanResultView.entries\[0\] must be a PlanItem"):
        PlanResultView(entries=[{"content": "x"}])  # type: ignore[list-item]
    assert is_result_view(PlanResultView(entries=()))
