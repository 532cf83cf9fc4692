"""The card mapping's short cuts draw what its general formulas draw: a generic card with no
file or pending content, a title naming one file, a text block of a result."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from acp_sidecar.bridge.cards import _content, _locations, call_start, wire_block
from acp_sidecar.bridge.context import CardContext, absolute, relative_title, shown_path
from acp_sidecar.protocol import ToolCallContentBlock, ToolCallStart
from acp_sidecar.protocol.converter import to_wire
from acp_sidecar.text import visible_line
from acp_sidecar.tools.content import ImageContent, TextContent
from acp_sidecar.tools.json_values import FrozenDict, freeze_json
from acp_sidecar.tools.presentation import TOOL_CALL_KINDS, FileLocation, GenericCallView


class Text(TextContent):
    """A text block's subclass: drawn as wire_block draws it."""


segments = st.sampled_from(["src", "ü", "..", ".", "", "a b", "путь", "x.py", "/", "//", "~"])
paths = st.lists(segments, min_size=1, max_size=4).map("/".join) | st.sampled_from(
    ["/work/project", "/work/project/", "/work/projects/a", "/etc/hosts", "a.py", "./a.py"]
)
cwds = st.sampled_from(["/work/project", "/work/project/", "/", "/a/ü", "rel", ""])


def general_relative_title(title: str, named: list[str], cwd: str) -> str:
    """``relative_title`` as written for any number of paths."""
    for path in sorted({absolute(p, cwd) for p in named}, key=len, reverse=True):
        if path not in title:
            continue
        shown = shown_path(path, cwd)
        if shown != path:
            title = title.replace(path, shown)
    return title


@settings(max_examples=500)
@given(st.lists(paths, max_size=3), cwds, st.text(max_size=8), st.text(max_size=8))
def test_relative_title_of_one_path_is_the_general_one(
    named: list[str], cwd: str, head: str, tail: str
) -> None:
    # Titles that hold the paths (absolute and as given) and titles that do not.
    for title in (
        head + " ".join(absolute(p, cwd) for p in named) + tail,
        head + " ".join(named) + tail,
        head,
    ):
        assert relative_title(title, named, cwd) == general_relative_title(title, named, cwd)


blocks = st.sampled_from(
    [
        TextContent("x"),
        TextContent(""),
        TextContent("ü\n\u202e"),
        Text("sub"),
        ImageContent(data="aGk=", mime_type="image/png"),
    ]
)


@given(st.lists(blocks, max_size=4))
def test_content_draws_each_block_as_wire_block_does(shown: list[Any]) -> None:
    general = [ToolCallContentBlock(content=wire_block(block)) for block in shown]
    assert [to_wire(c) for c in _content(tuple(shown))] == [to_wire(c) for c in general]


def general_call_start(
    call_id: str, view: GenericCallView, ctx: CardContext, arguments: Any, name: str | None
) -> ToolCallStart:
    """The generic card as drawn with every formula, whatever the view holds."""
    named = [loc.path for loc in view.locations]
    return ToolCallStart(
        tool_call_id=call_id,
        name=name,
        title=visible_line(relative_title(view.title, named, ctx.cwd)),
        kind=view.kind or "other",
        status="pending",
        content=_content(view.content) or None,
        locations=_locations(view.locations, ctx) or None,
        raw_input=arguments if view.raw_input is None else view.raw_input,
    )


locations = st.builds(FileLocation, paths, st.none() | st.integers(0, 99))
raw = st.none() | st.dictionaries(st.text(max_size=3), st.integers() | st.text(max_size=3)).map(
    freeze_json
)
views = st.builds(
    GenericCallView,
    title=st.text(max_size=12) | paths.map(lambda p: f"Read {p}"),
    kind=st.none() | st.sampled_from(TOOL_CALL_KINDS),
    raw_input=raw,
    content=st.lists(blocks.filter(lambda b: type(b) is not Text), max_size=2),
    locations=st.lists(locations, max_size=3),
)


@settings(max_examples=400)
@given(views, cwds, raw, st.none() | st.sampled_from(["read", "mcp__x__y"]))
def test_generic_card_is_the_general_one(
    view: GenericCallView, cwd: str, arguments: Any, name: str | None
) -> None:
    ctx = CardContext(cwd=cwd)
    arguments = FrozenDict({"a": 1}) if arguments is None else arguments
    drawn = to_wire(call_start("c1", view, ctx, arguments, name=name))
    assert drawn == to_wire(general_call_start("c1", view, ctx, arguments, name))
