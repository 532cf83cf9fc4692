"""A file name holding bidi or control characters is drawn with them as visible signs in the
HTML and Markdown exports and the terminal transcript, as in the editor's cards (issue 25 §6:
a U+202E file name reached cards and exports as it is, so ``evil\\u202etxt.exe`` read as
``evilexe.txt``)."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console

from acp_sidecar.bridge.cards import call_start
from acp_sidecar.bridge.context import CardContext
from acp_sidecar.export.cards import card_html
from acp_sidecar.export.gfm_cards import card_markdown
from acp_sidecar.protocol.converter import to_wire
from acp_sidecar.render.draw import draw_card
from acp_sidecar.render.fold import CardState, apply_tool_update
from acp_sidecar.tools.presentation import DiffCallView, FileDiff, FileLocation

CWD = "/work/project"
ACTING = ("\u202e", "\u2066", "\u200f", "\x1b", "\r", "\x9b")


def card(name: str) -> CardState:
    path = f"{CWD}/{name}"
    view = DiffCallView(
        title=f"Write {path}",
        diffs=[FileDiff(path, None, "hello\n")],
        locations=[FileLocation(path, line=1)],
    )
    update: dict[str, Any] = to_wire(call_start("c1", view, CardContext(CWD)))
    folded = CardState("c1")
    apply_tool_update(folded, update)
    return folded


def drawn(state: CardState) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(draw_card(state, CWD))
    return console.export_text()


@pytest.mark.parametrize("draw", [card_html, card_markdown, lambda c, _cwd: drawn(c)])
@pytest.mark.parametrize("char", ACTING)
def test_a_file_name_is_drawn_with_its_acting_characters_as_signs(draw: Any, char: str) -> None:
    out = draw(card(f"evil{char}txt.exe"), CWD)
    assert [c for c in out if c in ACTING] == [], out
    assert out.count("evil") >= 2  # the title and the diff's own heading
