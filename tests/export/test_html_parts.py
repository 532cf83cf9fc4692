"""The HTML export's fragments: structure per the DOM contract, and hostile input kept inert.

Fast and browser-free: every fragment is parsed with ``html.parser`` (tests/export/fragment_dom)
and checked as a tree, so escaping that failed shows up as a broken structure or a stray
element, not only as a missing substring.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_sidecar.export import escape
from acp_sidecar.export.ansi import ansi_html
from acp_sidecar.export.cards import (
    KINDS,
    card_html,
    icon_sprites,
    message_html,
    plan_html,
    thought_html,
)
from acp_sidecar.export.clip import (
    COLLAPSE_LINES,
    HEAD_LINES,
    LINE_CHARS,
    TAIL_LINES,
    Clipped,
    clip_lines,
    line_count,
)
from acp_sidecar.export.highlight import diff_html, highlight_budget, lexer_for_path, pygments_css
from acp_sidecar.export.markup import markdown_html
from acp_sidecar.export.style import page_css
from acp_sidecar.render.fold import CardState, apply_tool_update
from tests.export.fragment_dom import Node, assert_inert, parse

GOLDEN = sorted((Path(__file__).parent.parent / "bridge" / "golden").glob("*.json"))
CWD = "/work/project"

HOSTILE = (
    "<script>alert(1)</script></details></pre></section><img src=x onerror=alert(2)>"
    " \"quoted\" 'single' &amp; \x1b[31mred\x1b[0m \x00\x07\x08\x1b]0;title\x07 \ufffd end"
)


def folded(updates: list[dict[str, Any]]) -> CardState:
    card = CardState(updates[0]["toolCallId"])
    for update in updates:
        apply_tool_update(card, update)
    return card


def no_controls(markup: str) -> None:
    bad = [c for c in markup if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
    assert not bad, bad


# -- clip ----------------------------------------------------------------------------------


def test_line_count_ignores_one_trailing_newline() -> None:
    assert [line_count(t) for t in ("", "a", "a\n", "a\nb", "a\n\n")] == [0, 1, 1, 2, 2]


def test_clip_keeps_a_text_that_fits() -> None:
    text = "\n".join(f"l{n}" for n in range(HEAD_LINES + TAIL_LINES)) + "\n"
    assert clip_lines(text, head=HEAD_LINES, tail=TAIL_LINES) == Clipped(text[:-1], "", 0)


def test_clip_keeps_head_and_tail_and_counts_the_rest() -> None:
    lines = [f"l{n}" for n in range(1000)]
    clipped = clip_lines("\n".join(lines), head=HEAD_LINES, tail=TAIL_LINES)
    assert clipped.head.split("\n") == lines[:HEAD_LINES]
    assert clipped.tail.split("\n") == lines[-TAIL_LINES:]
    assert clipped.omitted == 1000 - HEAD_LINES - TAIL_LINES


def test_clip_bounds_one_absurd_line_by_characters() -> None:
    clipped = clip_lines("x" * (LINE_CHARS + 500) + "\nshort", head=3, tail=1)
    first, second = clipped.head.split("\n")
    assert first == "x" * LINE_CHARS + " … (500 characters left out)"
    assert second == "short"
    assert clipped.omitted == 0


# -- escaping ------------------------------------------------------------------------------


def test_escape_shows_control_bytes_and_replaces_lone_surrogates() -> None:
    assert escape.text("<a>&\x1b\x00\x7f\x9b\ud800\ufffd\t\n") == (
        '&lt;a&gt;&amp;<span class="ctl">^[</span><span class="ctl">^@</span>'
        '<span class="ctl">^?</span><span class="ctl">\\x9b</span>\ufffd\ufffd\t\n'
    )
    assert escape.attr('"\x1b') == "&quot;^["


# -- ANSI ----------------------------------------------------------------------------------


def test_ansi_standard_colours_are_classes_and_others_inline() -> None:
    root = parse(
        ansi_html(
            "\x1b[31mred\x1b[0m \x1b[1;94;42mhi\x1b[0m \x1b[38;5;208mo\x1b[0m"
            " \x1b[48;2;1;2;3mt\x1b[0m"
        )
    )
    spans = root.all("span")
    assert [(s.text(), s.classes, s.attrs.get("style")) for s in spans] == [
        ("red", ["a-f1"], None),
        ("hi", ["a-f12", "a-g2", "a-b"], None),
        ("o", [], "color:#ff8700"),
        ("t", [], "background:#010203"),
    ]


def test_ansi_styles_and_reverse() -> None:
    root = parse(ansi_html("\x1b[2;3;4mx\x1b[0m\x1b[7my\x1b[0m\x1b[7;31mz\x1b[0m"))
    assert [s.classes for s in root.all("span")] == [
        ["a-d", "a-i", "a-u"],
        ["a-rf", "a-rg"],
        ["a-rf", "a-g1"],
    ]


def test_ansi_rewinds_and_never_lets_raw_escapes_through() -> None:
    markup = ansi_html("10%\r50%\r100%\n\x1b[31m<b>\x1b[0m \x1b[99 \x00 \x07bell\n")
    no_controls(markup)
    root = parse(markup)
    assert root.text().startswith("100%\n<b>")
    assert "^[" in root.text()  # an escape rich did not take stays visible
    assert not root.all("b")


def test_ansi_plain_output_is_only_escaped() -> None:
    assert ansi_html("a < b\n\n") == "a &lt; b"


# -- diffs ---------------------------------------------------------------------------------


def rows(node: Node) -> list[tuple[str, str, str, str]]:
    return [
        (
            tr.classes[0],
            tr.one("td.ln-old").text(),
            tr.one("td.ln-new").text(),
            tr.one("td.code").text(),
        )
        for tr in node.all("tr")
    ]


def test_diff_rows_have_old_and_new_line_numbers() -> None:
    old = "".join(f"line {n}\n" for n in range(1, 11))
    new = old.replace("line 5\n", "line five\nline 5.5\n")
    root = parse(
        diff_html({"type": "diff", "path": f"{CWD}/src/a.txt", "oldText": old, "newText": new}, CWD)
    )
    assert root.one("div.diff-path").text() == "src/a.txt"
    assert rows(root.one("table.diff-lines")) == [
        ("hunk", "", "", "@@ -2,7 +2,8 @@"),
        ("ctx", "2", "2", "line 2"), ("ctx", "3", "3", "line 3"), ("ctx", "4", "4", "line 4"),
        ("del", "5", "", "line 5"),
        ("add", "", "5", "line five"), ("add", "", "6", "line 5.5"),
        ("ctx", "6", "7", "line 6"), ("ctx", "7", "8", "line 7"), ("ctx", "8", "9", "line 8"),
    ]  # fmt: skip


def test_diff_of_a_new_file_is_all_added_with_a_badge() -> None:
    root = parse(
        diff_html({"path": "/elsewhere/n.py", "oldText": None, "newText": "x = 1\ny = 2\n"}, CWD)
    )
    assert root.one("div.diff-path").text() == "/elsewhere/n.py new file"
    assert root.one("span.badge-new").text() == "new file"
    assert rows(root) == [
        ("hunk", "", "", "@@ -0,0 +1,2 @@"),
        ("add", "", "1", "x = 1"),
        ("add", "", "2", "y = 2"),
    ]


def test_diff_is_highlighted_with_classes_by_file_name() -> None:
    root = parse(
        diff_html({"path": "a.py", "oldText": "", "newText": 'def f():\n    return "s"\n'}, None)
    )
    code = root.all("td.code")[1]
    assert [(s.text(), s.classes) for s in code.all("span")] == [
        ("def", ["k"]),
        ("f", ["nf"]),
        ("():", ["p"]),
    ]
    assert all("style" not in n.attrs for n in root.walk())
    plain = parse(
        diff_html({"path": "notes.unknownext", "oldText": "", "newText": "def f():\n"}, None)
    )
    assert plain.all("td.code")[1].children == ["def f():"]


def test_lexers_are_looked_up_once_per_extension() -> None:
    assert lexer_for_path("/a/b.py") is lexer_for_path("c/d.PY")
    assert lexer_for_path("x.unknownext") is None


def test_unchanged_diff_says_so() -> None:
    root = parse(diff_html({"path": "a", "oldText": "same\n", "newText": "same\n"}, None))
    assert root.one("div.note").text() == "(no changes)"
    assert not root.all("table")


def test_long_diff_is_collapsed_and_clipped() -> None:
    new = "".join(f"v{n} = {n}\n" for n in range(500))
    root = parse(diff_html({"path": "big.py", "oldText": None, "newText": new}, None))
    more = root.one("details.more")
    assert more.one("summary").text() == "show all (501 lines)"
    head, tail = more.all("table.diff-lines")
    assert len(head.all("tr")) == HEAD_LINES and len(tail.all("tr")) == TAIL_LINES
    assert more.one("div.clipped").text() == f"… {501 - HEAD_LINES - TAIL_LINES} lines left out …"
    assert rows(tail)[-1] == ("add", "", "500", "v499 = 499")


def test_short_diff_is_not_collapsed() -> None:
    new = "".join(f"{n}\n" for n in range(COLLAPSE_LINES - 1))
    root = parse(diff_html({"path": "a", "oldText": None, "newText": new}, None))
    assert not root.all("details")


def test_hostile_diff_stays_in_its_cells() -> None:
    item = {"path": f"{CWD}/<script>.html", "oldText": HOSTILE, "newText": HOSTILE + "\n" + HOSTILE}
    markup = diff_html(item, CWD)
    no_controls(markup)
    root = parse(markup)
    assert_inert(root)
    assert root.one("div.diff-path").text() == "<script>.html"
    assert len(root.all("tr")) == 3 and "<script>alert(1)</script>" in root.all("td.code")[2].text()


def test_pygments_css_has_light_and_dark_scoped_rules() -> None:
    css = pygments_css()
    assert "@media not screen and (prefers-color-scheme: dark)" in css
    assert "@media screen and (prefers-color-scheme: dark)" in css
    rules = [line for line in css.splitlines() if "{" in line and not line.startswith("@media")]
    assert rules and all(line.startswith(".diff-lines ") for line in rules)


# -- Markdown ------------------------------------------------------------------------------


def test_markdown_escapes_raw_html() -> None:
    root = parse(
        markdown_html("hi <script>alert(1)</script> <img src=x onerror=alert(1)>\n\n</details>")
    )
    assert_inert(root)
    assert [n.tag for n in root.walk()][1:] == ["p", "p"]
    assert "<img src=x onerror=alert(1)>" in root.text()


@pytest.mark.parametrize(
    "source",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "<javascript:alert(1)>",
        "[x](vbscript:msgbox)",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "[x](file:///etc/passwd)",
    ],
)
def test_markdown_drops_links_with_unsafe_schemes(source: str) -> None:
    root = parse(markdown_html(source))
    assert not root.all("a")
    assert_inert(root)


def test_markdown_keeps_safe_links_with_rel() -> None:
    root = parse(
        markdown_html('[a](https://x.org/?q="1") [b](mailto:me@x.org) [c](docs/r.md) [d](#top)')
    )
    assert [(a.attrs["href"], a.attrs["rel"]) for a in root.all("a")] == [
        ("https://x.org/?q=%221%22", "nofollow noopener noreferrer"),
        ("mailto:me@x.org", "nofollow noopener noreferrer"),
        ("docs/r.md", "nofollow noopener noreferrer"),
        ("#top", "nofollow noopener noreferrer"),
    ]


def test_markdown_images_become_links_never_loads() -> None:
    root = parse(
        markdown_html(
            '![a <b> "chart"](https://x.org/c.png) ![e]() ![t](javascript:alert(1)) ![d](data:image/png;base64,AA)'
        )
    )
    assert not root.all("img")
    link = root.one("a.image-link")
    assert (link.attrs["href"], link.text()) == ("https://x.org/c.png", '[image: a <b> "chart"]')
    assert root.one("span.image-alt").text() == "[image: e]"
    assert root.text().endswith(" ![t](javascript:alert(1)) ![d](data:image/png;base64,AA)\n")
    assert_inert(root)


def test_markdown_tables_and_strikethrough() -> None:
    root = parse(markdown_html("| a | b |\n|---|---|\n| 1 | ~~2~~ |\n"))
    assert [th.text() for th in root.all("th")] == ["a", "b"]
    assert root.one("s").text() == "2"


def test_markdown_fences_are_highlighted_when_the_language_is_known() -> None:
    root = parse(
        markdown_html('```python\nx = "</pre></details>"\n```\n\n```nosuchlang\n<b>\n```\n')
    )
    known, unknown = root.all("pre")
    assert known.classes == ["hl"]
    assert [s.classes for s in known.all("span")] == [["n"], ["o"], ["s2"]]
    assert known.text() == 'x = "</pre></details>"'
    assert unknown.one("code").text() == "<b>\n" and not unknown.all("span")


def test_markdown_shows_control_bytes() -> None:
    markup = markdown_html("a \x1b[31m b \x07 \x9b c \ufffd")
    no_controls(markup)
    assert "\ufffd" in markup


# -- cards ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden_card(path: Path) -> None:
    updates = json.loads(path.read_text())
    card = folded(updates)
    markup = card_html(card, CWD)
    root = parse(markup)
    assert_inert(root)
    section = root.one("section.card")
    assert root.children == [section]
    kind = card.kind if card.kind in KINDS else "other"
    assert section.attrs["data-status"] == card.status
    assert section.attrs["data-kind"] == kind
    assert section.attrs["data-call-id"] == card.tool_call_id
    head = section.children[0]
    assert isinstance(head, Node) and head.tag == "header" and head.classes == ["card-head"]
    assert head.one("use").attrs["href"] == f"#k-{kind}"
    assert head.one("span.card-title").text() == card.title  # as the editor showed it
    status = head.one("span.status")
    assert status.classes == ["status", f"status-{card.status}"]
    assert status.text() == {"completed": "completed", "failed": "failed"}[card.status]
    shown = [
        (loc["path"].removeprefix(CWD + "/")) + (f":{loc['line']}" if "line" in loc else "")
        for loc in card.locations
    ]
    assert [li.text() for li in section.all("li")] == shown
    items = [
        n for n in section.children[1:] if isinstance(n, Node) and "locations" not in n.classes
    ]
    expected = {"diff": "diff", "terminal": "terminal", "content": "tool-text"}
    assert [i.classes[0] for i in items] == [expected[c["type"]] for c in card.content]
    for item, content in zip(items, card.content, strict=True):
        if content["type"] == "terminal":
            terminal = card.terminals[content["terminalId"]]
            assert item.one("div.term-command").text() == card.title
            pill = item.one("span.exit-pill")
            if terminal.signal is not None:
                assert (pill.classes[1], pill.text()) == ("exit-signal", terminal.signal)
            elif terminal.exit_code is None:  # the card finished, its terminal never said
                assert (pill.classes[1], pill.text()) == ("exit-running", "no exit status")
            else:
                code = terminal.exit_code
                assert pill.classes[1] == ("exit-ok" if code == 0 else "exit-fail")
                assert pill.text() == f"exit {code}"
            assert item.one("pre.term-output").text() == terminal.output.rstrip("\n")
            if terminal.cwd is not None:
                assert item.one("div.term-cwd").text() == terminal.cwd
        elif content["type"] == "diff":
            assert (
                item.one("div.diff-path").text().startswith(content["path"].removeprefix(CWD + "/"))
            )
            assert item.all("tr.add")


def test_golden_new_file_diff_before_its_final_update() -> None:
    updates = json.loads(
        (GOLDEN[0].parent / "diff_new_file__diff__capable__completed.json").read_text()
    )
    root = parse(card_html(folded(updates[:1]), CWD))
    assert root.one("section.card").attrs["data-status"] == "pending"
    assert root.one("span.status").text() == "pending"
    assert root.one("div.diff-path").text() == "new.txt new file"
    assert rows(root) == [("hunk", "", "", "@@ -0,0 +1 @@"), ("add", "", "1", "hello")]


def hostile_card() -> CardState:
    card = CardState(
        'id" onclick="alert(1)',
        title=HOSTILE,
        kind='"><script>alert(1)</script>',
        status="in_progress",
        locations=[{"path": "<img src=x onerror=alert(1)>", "line": 3}, {"line": "no path"}],
        content=[
            {"type": "content", "content": {"type": "text", "text": HOSTILE}},
            {
                "type": "content",
                "content": {
                    "type": "text",
                    "text": "```html\n" + HOSTILE + "\n```\n[x](javascript:alert(1))",
                },
            },
            {"type": "terminal", "terminalId": "t"},
            {"type": "diff", "path": HOSTILE, "oldText": HOSTILE, "newText": "x"},
            {"type": "<b>odd</b>"},
        ],
    )
    card.terminal("t").chunks.append(HOSTILE + "\n\x1b[32m</pre>ok\x1b[0m\n")
    card.terminal("t").cwd = HOSTILE
    return card


def test_hostile_card_stays_inert_and_whole() -> None:
    markup = card_html(hostile_card(), CWD)
    no_controls(markup)
    root = parse(markup)
    assert_inert(root)
    section = root.one("section.card")
    assert root.children == [section]
    assert section.attrs["data-call-id"] == 'id" onclick="alert(1)'
    assert section.attrs["data-kind"] == "other"
    assert "<script>alert(1)</script>" in section.one("span.card-title").text()
    assert section.one("span.status").text() == "running"
    assert [li.text() for li in section.all("li")] == ["<img src=x onerror=alert(1)>:3"]
    assert len(section.all("div.tool-text")) == 2 and len(section.all("div.diff")) == 1
    terminal = section.one("div.terminal")
    assert "</pre>ok" in terminal.one("pre.term-output").text()
    assert terminal.one("span.exit-pill").classes == ["exit-pill", "exit-running"]
    assert section.all("div.note")[-1].text() == "[<b>odd</b> item]"


@pytest.mark.parametrize(
    ("exit_code", "signal", "status", "pill", "text"),
    [
        (0, None, "completed", "exit-ok", "exit 0"),
        (2, None, "failed", "exit-fail", "exit 2"),
        (None, "SIGKILL", "failed", "exit-signal", "SIGKILL"),
        (None, None, "in_progress", "exit-running", "running"),
    ],
)
def test_terminal_exit_pill(
    exit_code: int | None, signal: str | None, status: str, pill: str, text: str
) -> None:
    card = CardState(
        "c",
        title="",
        kind="execute",
        status=status,
        raw_input={"command": "make"},
        content=[{"type": "terminal", "terminalId": "t"}],
    )
    terminal = card.terminal("t")
    terminal.exit_code, terminal.signal = exit_code, signal
    root = parse(card_html(card, None))
    assert root.one("div.term-command").text() == "make"
    assert root.one("span.exit-pill").classes == ["exit-pill", pill]
    assert root.one("span.exit-pill").text() == text
    assert root.one("div.note").text() == "(no output)"
    assert not root.all("div.term-cwd")


def test_terminal_that_never_started() -> None:
    card = CardState(
        "c", title="ls", status="completed", content=[{"type": "terminal", "terminalId": "gone"}]
    )
    root = parse(card_html(card, None))
    assert root.one("div.note").text() == "(terminal not started)"
    assert root.one("span.exit-pill").text() == "no exit status"


def terminal_with(lines: int) -> Node:
    card = CardState(
        "c", title="seq", status="completed", content=[{"type": "terminal", "terminalId": "t"}]
    )
    card.terminal("t").chunks.extend(f"\x1b[33m{n}\x1b[0m\r\n" for n in range(lines))
    return parse(card_html(card, None))


def test_terminal_output_is_collapsed_past_the_limit() -> None:
    assert not terminal_with(COLLAPSE_LINES).all("details")
    root = terminal_with(COLLAPSE_LINES + 1)
    more = root.one("details.more")
    assert more.one("summary").text() == f"show all ({COLLAPSE_LINES + 1} lines)"
    assert more.one("pre.term-output").text() == "\n".join(
        str(n) for n in range(COLLAPSE_LINES + 1)
    )


def test_long_terminal_output_keeps_head_and_tail() -> None:
    root = terminal_with(1000)
    head, tail = root.all("pre.term-output")
    assert head.text().split("\n") == [str(n) for n in range(HEAD_LINES)]
    assert tail.text().split("\n") == [str(n) for n in range(1000 - TAIL_LINES, 1000)]
    assert root.one("div.clipped").text() == f"… {1000 - HEAD_LINES - TAIL_LINES} lines left out …"
    assert root.one("summary").text() == "show all (1000 lines)"
    assert len(root.all("span.a-f3")) == HEAD_LINES + TAIL_LINES


def test_long_tool_text_is_collapsed_and_clipped() -> None:
    text = "".join(f"match {n}\n" for n in range(400))
    card = CardState(
        "c",
        title="grep",
        kind="search",
        status="completed",
        content=[{"type": "content", "content": {"type": "text", "text": text}}],
    )
    root = parse(card_html(card, None))
    tool_text = root.one("div.tool-text")
    assert tool_text.one("summary").text() == "show all (400 lines)"
    assert len(tool_text.all("pre")) == 2
    assert tool_text.one("div.clipped").text() == "… 100 lines left out …"


def test_raw_input_is_shown_short_when_there_is_no_content() -> None:
    card = CardState("c", title="t", raw_input={"a": "<b>" * 200})
    shown = parse(card_html(card, None)).one("pre.raw-input").text()
    assert shown.startswith('{"a": "<b><b>') and shown.endswith("…") and len(shown) == 300


def test_non_text_content_is_a_note() -> None:
    card = CardState(
        "c",
        title="t",
        content=[
            {
                "type": "content",
                "content": {"type": "image", "mimeType": "image/png", "data": "AA=="},
            }
        ],
    )
    root = parse(card_html(card, None))
    assert root.one("div.note").text() == "[image image/png]"
    assert not root.all("img")


def test_icon_sprites_define_every_kind_once() -> None:
    root = parse(icon_sprites())
    assert_inert(root)
    assert [s.attrs["id"] for s in root.all("symbol")] == [f"k-{kind}" for kind in KINDS]
    assert all(s.all("path") for s in root.all("symbol"))


# -- messages, thoughts, plans -------------------------------------------------------------

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def test_user_message_keeps_breaks_and_shows_data_images() -> None:
    root = parse(message_html("user", [
        {"type": "text", "text": "line one\n"},
        {"type": "text", "text": "line <two>"},
        {"type": "image", "mimeType": "image/png", "data": PNG},
    ]))  # fmt: skip
    msg = root.one("div.msg")
    assert msg.classes == ["msg", "msg-user"]
    assert msg.all("p")[0].text() == "line one\nline <two>"  # its breaks kept by the CSS
    assert msg.one("img").attrs["src"] == f"data:image/png;base64,{PNG}"
    assert_inert(root)


TYPED = "# Add a greeting\n\nPlease add `greet` to **hello.py**:\n\n- it takes a *name*\n    [x](https://x.org) <b>\n1. done"


def test_a_prompt_is_shown_as_typed_not_as_markdown() -> None:
    root = parse(message_html("user", [{"type": "text", "text": TYPED}]))
    msg = root.one("div.msg-user")
    assert [n.tag for n in msg.walk()][1:] == ["p"]  # no heading, list, code, emphasis, link
    assert msg.one("p").text() == TYPED and msg.one("p").classes == ["typed"]
    assert ".typed{" in page_css() and "pre-wrap" in page_css().split(".typed{")[1].split("}")[0]
    # An agent's message is still its Markdown.
    agent = parse(message_html("agent", [{"type": "text", "text": TYPED}]))
    assert agent.all("h1") and agent.all("code") and agent.all("a")


@pytest.mark.parametrize(
    "block",
    [
        {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2Zz4="},
        {"type": "image", "mimeType": "image/png", "data": 'AA" onerror="alert(1)'},
        {"type": "image", "mimeType": "image/png"},
    ],
)
def test_prompt_images_that_are_not_plain_raster_data_are_not_loaded(block: dict[str, Any]) -> None:
    root = parse(message_html("user", [block]))
    assert not root.all("img")
    assert root.one("span.note").text() == f"[image {block['mimeType']}]"


def test_agent_message_images_and_links_never_load() -> None:
    root = parse(message_html("agent", [
        {"type": "text", "text": "see"},
        {"type": "image", "mimeType": "image/png", "data": PNG},
        {"type": "image", "mimeType": "image/png", "uri": "https://x.org/i.png"},
        {"type": "resource_link", "name": "<doc>", "uri": "https://x.org/d"},
        {"type": "resource_link", "name": "bad", "uri": "javascript:alert(1)"},
        {"type": "audio", "mimeType": "audio/wav", "data": "AA=="},
    ]))  # fmt: skip
    msg = root.one("div.msg-agent")
    assert_inert(root)
    assert not root.all("img")
    assert [(a.attrs["href"], a.text()) for a in msg.all("a")] == [
        ("https://x.org/i.png", "[image image/png]"),
        ("https://x.org/d", "<doc>"),
    ]
    assert [n.text() for n in msg.all(".note")] == [
        "[image image/png]", "[link bad <javascript:alert(1)>]", "[audio audio/wav]",
    ]  # fmt: skip


def test_hostile_messages_and_thoughts_stay_inert() -> None:
    for markup in (
        message_html("agent", [{"type": "text", "text": HOSTILE}]),
        message_html("user", [{"type": "text", "text": HOSTILE}]),
        thought_html([{"type": "text", "text": HOSTILE}]),
    ):
        no_controls(markup)
        root = parse(markup)
        assert_inert(root)
        assert len(root.children) == 1 and "<script>alert(1)</script>" in root.text()


def test_thought_is_a_closed_details() -> None:
    root = parse(thought_html([{"type": "text", "text": "hmm *so*"}]))
    details = root.one("details.thought")
    assert "open" not in details.attrs
    assert details.one("summary").text() == "Thought"
    assert details.one("em").text() == "so"


def test_plan_entries() -> None:
    root = parse(plan_html([
        {"content": "read", "status": "completed"},
        {"content": "<edit>", "status": "in_progress"},
        {"content": "test", "status": "pending"},
        {"content": "odd", "status": '"><script>'},
    ]))  # fmt: skip
    plan = root.one("section.plan")
    assert [(li.classes, li.text()) for li in plan.all("li")] == [
        (["plan-completed"], "read"),
        (["plan-in_progress"], "<edit>"),
        (["plan-pending"], "test"),
        (["plan-pending"], "odd"),
    ]
    assert_inert(root)


# -- the stylesheet ------------------------------------------------------------------------


def test_page_css_covers_themes_print_and_the_contract() -> None:
    css = page_css()
    for needle in (
        "prefers-color-scheme: dark", "@media print", "content-visibility:auto",
        ".exit-ok", ".exit-fail", ".exit-signal", ".exit-running", ".diff-lines .add",
        ".a-f15", ".a-g0", ".status-failed", ".event", "break-inside:avoid",
    ):  # fmt: skip
        assert needle in css, needle
    assert "url(" not in css and "@import" not in css
    assert css.count("{") == css.count("}")


def test_highlighting_stops_at_the_documents_budget() -> None:
    item = {"path": "a.py", "oldText": None, "newText": "x = 1\n"}
    with highlight_budget(len("x = 1") + 1 + len("x = 1") + 1) as budget:
        first, second = parse(diff_html(item, None)), parse(diff_html(item, None))
        assert budget.remaining == 0
        third = parse(diff_html(item, None))
        fence = parse(markdown_html("```python\nx = 1\n```"))
    assert first.all("td.code")[1].all("span") and second.all("td.code")[1].all("span")
    assert rows(third) == rows(first) and not third.one("table").all("span")
    assert fence.one("code").text() == "x = 1" and not fence.all("span")
    assert parse(diff_html(item, None)).one("table").all("span")  # outside a document: no bound


# -- the recorded session, block by block ---------------------------------------------------


def test_every_block_of_the_recorded_session_draws() -> None:
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.export.document import Tally, walk
    from acp_sidecar.export.source import StoredSession
    from acp_sidecar.render.blocks import CardBlock, MessageBlock, PlanBlock

    fixture = Path(__file__).parents[1] / "fixtures" / "export" / "recorded.jsonl"
    parts: list[str] = []
    call_ids: list[str] = []
    kinds: set[str] = set()
    with StoredSession(fixture, ToolsProvider(()).registry.get) as session:
        cwd = session.heading.cwd
        for block in walk(session.entries(), Tally()):
            if isinstance(block, CardBlock):
                call_ids.append(block.card.tool_call_id)
                kinds.update(str(item.get("type")) for item in block.card.content)
                parts.append(card_html(block.card, cwd))
            elif isinstance(block, MessageBlock):
                role = block.role
                parts.append(
                    thought_html(block.blocks)
                    if role == "thought"
                    else message_html(role, block.blocks)
                )
            elif isinstance(block, PlanBlock):
                parts.append(plan_html(block.entries))
    markup = "".join(parts)
    no_controls(markup)
    root = parse(markup)
    assert_inert(root)
    assert call_ids and len(set(call_ids)) == len(call_ids)
    assert [s.attrs["data-call-id"] for s in root.all("section.card")] == call_ids
    assert {"diff", "terminal"} <= kinds  # the fixture exercises both rich item kinds
    assert len(root.all("div.diff")) >= 1 and len(root.all("div.terminal")) >= 1


def test_long_markdown_tool_text_keeps_its_head_as_markdown_and_its_tail_verbatim() -> None:
    text = "```\n" + "".join(f"<{n}>\n" for n in range(500)) + "```\n**done**\n"
    card = CardState(
        "c", title="t", content=[{"type": "content", "content": {"type": "text", "text": text}}]
    )
    root = parse(card_html(card, None))
    more = root.one("div.tool-text").one("details.more")
    assert more.one("summary").text() == "show all (503 lines)"
    head, tail = more.all("pre")
    assert head.one("code").text().split("\n")[:2] == ["<0>", "<1>"]
    assert more.one("div.clipped").text() == f"… {503 - HEAD_LINES - TAIL_LINES} lines left out …"
    assert tail.text().endswith("<499>\n```\n**done**") and not tail.all("strong")


# -- plain prose skips the parser, with the parser's own output -----------------------------

_PROSE = st.lists(
    st.sampled_from([*list("ab zé.,:;'\"?%/@$1\n"), "\n\n", "  ", "日本", "\n ", " \n"]),
    max_size=40,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(source=_PROSE, breaks=st.booleans())
def test_plain_prose_renders_as_markdown_it_renders_it(source: str, breaks: bool) -> None:
    from acp_sidecar.export.markup import _AGENT, _USER, plain_paragraphs

    plain = plain_paragraphs(source, breaks=breaks)
    if plain is not None:
        assert plain == (_USER if breaks else _AGENT).render(source)


def test_the_fast_path_takes_prose_and_leaves_markup_to_the_parser() -> None:
    from acp_sidecar.export.markup import plain_paragraphs

    assert plain_paragraphs("Done: it works.\n\nSee you", breaks=False) == (
        "<p>Done: it works.</p>\n<p>See you</p>\n"
    )
    for markup in ("*a*", "1. a", "a  \nb", " a", "a\n===", "<b>", "a & b", "`x`", "[a](b)"):
        assert plain_paragraphs(markup, breaks=False) is None, markup


@pytest.mark.parametrize(
    "uri",
    [
        "java\tscript:alert(1)",
        "java\nscript:alert(1)",
        "java\rscript:alert(1)",
        "\x01javascript:alert(1)",
        " \x1f javascript:alert(1)",
        "jav\tas\ncript:alert(1)",
        "vb\tscript:msgbox",
        "da\nta:text/html;base64,PHNjcmlwdD4=",
    ],
)
def test_a_tab_newline_or_control_in_a_links_scheme_does_not_make_it_live(uri: str) -> None:
    """A browser drops every tab and newline of a URL and the controls at its ends before it
    reads the scheme: the check reads it the same way."""
    root = parse(message_html("agent", [
        {"type": "resource_link", "name": "doc", "uri": uri},
        {"type": "image", "mimeType": "image/png", "uri": uri},
        {"type": "text", "text": f"[x](<{uri}>) ![y](<{uri}>) <{uri}>"},
    ]))  # fmt: skip
    assert_inert(root)
    live = [a.attrs.get("href", "") for a in root.all("a")]
    assert live == [], live


def test_a_kept_link_is_written_as_the_browser_reads_it() -> None:
    root = parse(message_html("agent", [
        {"type": "resource_link", "name": "doc", "uri": "https://x.org/a\tb\nc"},
    ]))  # fmt: skip
    assert [a.attrs["href"] for a in root.all("a")] == ["https://x.org/abc"]
