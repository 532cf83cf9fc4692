"""GitHub-flavoured Markdown fragments of a transcript: cards, messages, thoughts, plans.

Every function is pure and maps plain data (wire JSON mappings, :class:`CardState`) to a
Markdown block; ``export/markdown.py`` assembles the document from them.

Invariants:
- Each fragment is a run of whole top-level blocks that starts at column 0 and ends with one
  ``"\\n"``; the document separates fragments by a blank line. Nothing a fragment holds can
  leak into the next one: every fence it opens it closes, every ``<details>`` it opens it
  closes, and text taken from the log cannot open or close either.
- Everything taken from the log is untrusted. Titles, paths, plan entries and notes pass
  through :func:`escape_text` (they render literally); code and output go in a :func:`fence`
  (nothing inside can end it); messages keep their own Markdown through
  :func:`safe_markdown`, which lets no raw HTML through and closes what they leave open.
- No control character reaches the output but ``\\n`` and ``\\t``: C0 controls and DEL are
  shown as their Unicode control pictures (``\\x1b`` as ``␛``), C1 controls as ``�`` — a
  Markdown file is often read raw in a terminal, where they would act.
- The only raw HTML in the output is our own ``<details>``/``<summary>``, whose summary is
  HTML-escaped.
- Long parts follow ``export/clip.py``: more than ``COLLAPSE_LINES`` lines go in a closed
  ``<details>`` ("show all (N lines)"); more than ``HEAD_LINES + TAIL_LINES`` keep their head
  and tail around "… N lines left out …".
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Final, assert_never

from markdown_it import MarkdownIt
from markdown_it.token import Token

from acp_sidecar.export.clip import (
    COLLAPSE_LINES,
    HEAD_LINES,
    TAIL_LINES,
    clip_lines,
    clip_message,
)
from acp_sidecar.render.blocks import Role
from acp_sidecar.render.draw import (
    STATUS_MARKERS,
    block_text,
    describe_block,
    holds_fence,
    raw_input_line,
    shown_path,
    terminal_text,
)
from acp_sidecar.render.fold import CardState, TerminalState, as_mapping, as_str

_LINE_BREAK: Final = re.compile(r"\r\n?|\n")
_BACKTICKS: Final = re.compile(r"`+")
_INFO_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_+.#-]")

# -- primitives --------------------------------------------------------------------------


_VISIBLE: Final = {
    **{code: 0x2400 + code for code in range(0x20) if code not in (0x09, 0x0A, 0x0D)},
    0x7F: 0x2421,
    **dict.fromkeys(range(0x80, 0xA0), 0xFFFD),
}
"""Control characters to what shows them harmlessly (see the module invariants)."""


_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""The characters :data:`_VISIBLE` replaces (searched first: most text has none)."""


def visible(text: str) -> str:
    """``text`` with its control characters (but tab and line endings) made harmless."""
    return text.translate(_VISIBLE) if _CONTROL.search(text) else text


def _normalise(text: str) -> str:
    """Line endings as every Markdown parser reads them (``\\r\\n`` and ``\\r`` are ``\\n``),
    control characters made visible."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return visible(text)


def _longest_backticks(text: str) -> int:
    if "`" not in text:
        return 0
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)


def fence(text: str, info: str = "") -> str:
    """``text`` in a fenced code block that nothing in it can end.

    The fence is a backtick run longer than any in ``text`` (at least three), so no line of
    ``text`` can close it; ``info`` keeps only characters that are safe in an info string.
    """
    text = _normalise(text)
    ticks = "`" * max(3, _longest_backticks(text) + 1)
    body = text if not text or text.endswith("\n") else text + "\n"
    return f"{ticks}{_INFO_UNSAFE.sub('', info)}\n{body}{ticks}\n"


def inline_code(text: str) -> str:
    """``text`` as one code span (line breaks become spaces, as they do inside a span)."""
    text = visible(_LINE_BREAK.sub(" ", text))
    if not text:
        return "` `"
    ticks = "`" * (_longest_backticks(text) + 1)
    # A span's content loses one space at each end when it has both (and is not all spaces);
    # a backtick at an end would join the fence. Padding both ends keeps the text intact.
    pad = text[0] in "` " or text[-1] in "` "
    if text.strip(" ") == "":
        pad = False
    space = " " if pad else ""
    return f"{ticks}{space}{text}{space}{ticks}"


_ESCAPED: Final = frozenset("\\`*_[]|~$")
_STARTS_BLOCK: Final = re.compile(r"[#>+=-]|\d+[.)]")


def escape_text(text: str) -> str:
    """``text`` as inline Markdown that renders literally and cannot open HTML.

    Line breaks become spaces and the ends are trimmed (a title, path or plan entry is one
    line, and Markdown trims the ends anyway). Emphasis, code, link, table, strikethrough
    and math punctuation is backslash-escaped; ``<`` is always ``&lt;`` and ``&`` before
    what could be an entity ``&amp;``; a start that could open a block (heading, quote,
    list item, setext underline) is escaped too, so the text may begin a line.
    """
    text = visible(_LINE_BREAK.sub(" ", text)).strip()
    out: list[str] = []
    for i, char in enumerate(text):
        if char in _ESCAPED:
            out.append("\\" + char)
        elif char == "<":
            out.append("&lt;")
        elif char == "&" and re.match(r"&#?[A-Za-z0-9]", text[i : i + 3]):
            out.append("&amp;")
        else:
            out.append(char)
    escaped = "".join(out)
    if start := _STARTS_BLOCK.match(escaped):
        end = start.end()
        escaped = escaped[: end - 1] + "\\" + escaped[end - 1 :]
    return escaped


def details(summary: str, body: str, open: bool = False) -> str:
    """``body`` (Markdown) in a GitHub ``<details>``; ``summary`` is text, escaped as HTML.

    The blank lines around the body end our HTML blocks, so GitHub renders the body as
    Markdown; ``body`` must be whole blocks (as every fragment here is).
    """
    shown = html.escape(visible(_LINE_BREAK.sub(" ", summary)), quote=True)
    head = "<details open>" if open else "<details>"
    return f"{head}<summary>{shown}</summary>\n\n{body.strip(chr(10))}\n\n</details>\n"


def _note(text: str) -> str:
    """A short italic note, escaped (a stand-in for what is not drawn)."""
    escaped = escape_text(text)
    return f"*{escaped}*\n" if escaped else ""


# -- a message's own Markdown ------------------------------------------------------------

_PARSER: Final = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
"""The reading of Markdown used to find code and HTML: CommonMark with GitHub's tables and
strikethrough, raw HTML on, as GitHub (cmark-gfm) reads it."""

_BLOCKS: Final = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
"""The same reading, blocks only (the inline pass is a good half of the time, and finding
code blocks does not need it)."""
_BLOCKS.core.ruler.disable(["inline"])


def _tokens(tokens: Iterable[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        if token.children:
            yield from _tokens(token.children)


def _holds_html(tokens: Iterable[Token]) -> bool:
    return any(t.type in ("html_block", "html_inline") for t in _tokens(tokens))


def holds_html(markdown: str) -> bool:
    """Whether ``markdown``, read as GitHub reads it, holds any raw HTML."""
    return _holds_html(_PARSER.parse(markdown))


def _escape_outside_code_spans(text: str) -> str:
    """``<`` as ``&lt;`` except inside code spans (CommonMark's backtick-run rule) and where a
    backslash already makes it literal."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        char = text[i]
        if char == "`":
            run_end = i
            while run_end < n and text[run_end] == "`":
                run_end += 1
            run = run_end - i
            close = _closing_run(text, run_end, run)
            if close is None:
                out.append(text[i:run_end])
                i = run_end
            else:
                out.append(text[i : close + run])
                i = close + run
            continue
        if char == "\\" and i + 1 < n and text[i + 1] in "\\`<":
            out.append(text[i : i + 2])  # an escaped backtick opens nothing; \< is literal
            i += 2
            continue
        out.append("&lt;" if char == "<" else char)
        i += 1
    return "".join(out)


def _closing_run(text: str, start: int, length: int) -> int | None:
    """Where the next backtick run of exactly ``length`` starts, at or after ``start``."""
    for match in _BACKTICKS.finditer(text, start):
        if len(match.group()) == length:
            return match.start()
    return None


def _is_closing_fence(line: str, markup: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(markup) and set(stripped) == {markup[0]}


def safe_markdown(text: str) -> str:
    """A message's own Markdown, kept as Markdown but unable to reach outside itself.

    The approximation, in four steps:

    1. ``text`` is read with markdown-it-py as GitHub reads it (CommonMark, tables, HTML on).
       Lines inside fenced and indented code blocks (the tokens' line ``map``s) are kept
       verbatim. In every other block (a paragraph, heading or table's line range, or any
       other line) each ``<`` becomes ``&lt;`` except inside a code span, found by
       CommonMark's rule (a backtick run up to the next run of the same length) — so raw
       HTML, HTML comments and autolinks show as text, and code keeps its ``<``.
    2. The result is read again; if it still holds HTML (the span scan and the parser
       disagreed, e.g. on a table row that ``|`` splits inside backticks), step 1 is redone
       without sparing code spans: they show ``&lt;``; code blocks keep their ``<``.
    3. If even that holds HTML (the escaping changed which lines are code), every ``<`` is
       escaped, code blocks included: ugly, never HTML.
    4. A top-level fence left open at the end (which would swallow the rest of the
       document) is closed with its own fence.

    Link destinations are left to the renderer: GitHub (as markdown-it) drops
    ``javascript:``, ``vbscript:``, ``file:`` and non-image ``data:`` links.
    """
    text = _normalise(text).strip("\n")
    if not text:
        return ""
    if "<" not in text:  # no HTML without a "<": only the fence check is left
        if "`" not in text and "~" not in text:  # and no fence without one of these
            return text + "\n"
        return _close_open_fence(text, _BLOCKS.parse(text)) + "\n"
    result = _escape_outside_code(text, spare_spans=True)
    tokens = _PARSER.parse(result)
    if _holds_html(tokens):
        result = _escape_outside_code(text, spare_spans=False)
        tokens = _PARSER.parse(result)
        if _holds_html(tokens):
            result = result.replace("<", "&lt;")
            tokens = _BLOCKS.parse(result)
    return _close_open_fence(result, tokens) + "\n"


def _escape_outside_code(text: str, *, spare_spans: bool) -> str:
    """Step 1 of :func:`safe_markdown` (``spare_spans``), or step 2."""
    lines = text.split("\n")
    verbatim: set[int] = set()
    spans: dict[int, int] = {}
    for token in _BLOCKS.parse(text):
        if token.map is None:
            continue
        first, last = token.map
        if token.type in ("fence", "code_block"):
            verbatim.update(range(first, last))
        elif token.type == "inline":
            spans.setdefault(first, max(last, first + 1))
    out: list[str] = []
    i = 0
    while i < len(lines):
        if i in verbatim:
            out.append(lines[i])
            i += 1
            continue
        end = spans.get(i, i + 1)
        while any(j in verbatim for j in range(i, end)):
            end -= 1  # never escape code lines, whatever an inline map claims
        block = "\n".join(lines[i:end])
        escaped = _escape_outside_code_spans(block) if spare_spans else block.replace("<", "&lt;")
        out.extend(escaped.split("\n"))
        i = end
    return "\n".join(out)


def _close_open_fence(text: str, tokens: Iterable[Token]) -> str:
    """``text`` (read as ``tokens``) with a top-level fence that runs to its end closed.

    A fence without its closing line always runs to the end (its ``map`` may stop short of
    trailing blank lines), so any top-level fence not ending in a closing line is that one.
    """
    lines = text.split("\n")
    for token in tokens:
        if token.type != "fence" or token.level != 0 or token.map is None:
            continue
        first, last = token.map
        if last - first < 2 or not _is_closing_fence(lines[last - 1], token.markup):
            return f"{text}\n{token.markup}"
    return text


# -- long parts --------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    """``text``'s lines, as ``export/clip.py`` counts them (one trailing newline dropped)."""
    text = _normalise(text)
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n") if text else []


def left_out(omitted: int) -> str:
    """The line standing for what a clipped part left out."""
    return f"*… {omitted} {'line' if omitted == 1 else 'lines'} left out …*\n"


def long_part(text: str, draw: Callable[[str], str], lead: str = "") -> str:
    """``text`` drawn by ``draw``, collapsed and clipped as ``export/clip.py`` says.

    ``lead`` is put before the head (a console's command line); it is not counted.
    """
    count = len(_lines(text))
    clipped = clip_lines(text, head=HEAD_LINES, tail=TAIL_LINES)
    body = draw(lead + clipped.head)
    if clipped.omitted:
        body += "\n" + left_out(clipped.omitted) + "\n" + draw(clipped.tail)
    if count > COLLAPSE_LINES:
        return details(f"show all ({count} lines)", body)
    return body


# -- cards -------------------------------------------------------------------------------


def _marker(status: str) -> str:
    return STATUS_MARKERS.get(status, ("?", ""))[0]


def _location(location: Mapping[str, Any], cwd: str | None) -> str | None:
    path = as_str(location.get("path"))
    if path is None:
        return None
    line = location.get("line")
    shown = shown_path(path, cwd)
    if isinstance(line, int) and not isinstance(line, bool):
        shown = f"{shown}:{line}"
    return inline_code(shown)


def title_line(card: CardState, cwd: str | None) -> str:
    """The card's first line: status marker, kind, **title**, locations."""
    parts = [_marker(card.status)]
    if card.kind and card.kind != "other" and (kind := escape_text(card.kind)):
        parts.append(f"*{kind}*")
    title = escape_text(card.title) or escape_text(card.tool_call_id) or "(untitled)"
    parts.append(f"**{title}**")
    line = " ".join(parts)
    locations = [shown for loc in card.locations if (shown := _location(loc, cwd)) is not None]
    if locations:
        line += " · " + ", ".join(locations)
    return line + "\n"


def diff_markdown(item: Mapping[str, Any], cwd: str | None) -> str:
    """A ``diff`` item: its path (and "new file" when ``oldText`` is null), then a unified
    diff fence with ``---``/``+++`` headers relative to ``cwd``."""
    path = as_str(item.get("path")) or "?"
    shown = shown_path(path, cwd)
    old_text = as_str(item.get("oldText"))
    new_text = as_str(item.get("newText")) or ""
    heading = inline_code(shown) + (" — **new file**" if old_text is None else "") + "\n"
    lines = list(
        difflib.unified_diff(
            [] if old_text is None else _lines(old_text),
            _lines(new_text),
            fromfile="/dev/null" if old_text is None else f"a/{shown}",
            tofile=f"b/{shown}",
            lineterm="",
        )
    )
    if not lines:
        return heading + "\n" + _note("(no changes)")
    return heading + "\n" + long_part("\n".join(lines), lambda part: fence(part, "diff"))


def exit_status(terminal: TerminalState, *, finished: bool = False) -> str:
    """``exit 0`` / ``exit 2`` / the signal; else "running", or "no exit status" when the
    card finished without one."""
    if terminal.signal is not None:
        return inline_code(terminal.signal)
    if terminal.exit_code is not None:
        return inline_code(f"exit {terminal.exit_code}")
    return "*no exit status*" if finished else "*running*"


def _console(output: str) -> str:
    """Clipped output (and its command line) decoded as a terminal shows it, in a console
    fence: decoding after clipping sends only the lines kept through the ANSI parser."""
    return fence(terminal_text(output).plain, "console")


def terminal_markdown(
    terminal: TerminalState | None, command: str, cwd: str | None, *, finished: bool = False
) -> str:
    """A ``terminal`` item: its cwd, a ``console`` fence (the command, then the output with
    ANSI styles dropped and ``\\r`` applied), and its exit status (``finished``: whether the
    card reached a final status)."""
    if terminal is None:
        return _note("(terminal not started)")
    parts: list[str] = []
    if terminal.cwd is not None:
        parts.append(f"cwd {inline_code(shown_path(terminal.cwd, cwd))}\n")
    output = terminal.output
    lead = f"$ {command}\n" if command else ""
    if output:
        parts.append(long_part(output, _console, lead))
    else:
        if lead:
            parts.append(fence(lead, "console"))
        parts.append(_note("(no output)"))
    parts.append(exit_status(terminal, finished=finished) + "\n")
    return "\n".join(parts)


def text_markdown(text: str) -> str:
    """A card's text: in a fence, or — when it holds a fence, as editors draw it — as
    Markdown through :func:`safe_markdown`."""
    if holds_fence(text):
        return long_part(text, safe_markdown)
    return long_part(text, fence)


def _item(item: Mapping[str, Any], card: CardState, cwd: str | None) -> str:
    kind = item.get("type")
    if kind == "diff":
        return diff_markdown(item, cwd)
    if kind == "terminal":
        terminal_id = as_str(item.get("terminalId"))
        terminal = None if terminal_id is None else card.terminals.get(terminal_id)
        return terminal_markdown(terminal, card.title, cwd, finished=card.finished)
    if kind == "content":
        block = as_mapping(item.get("content")) or {}
        text = block_text(block)
        return _note(describe_block(block)) if text is None else text_markdown(text)
    return _note(f"[{as_str(kind) or '?'} item]")


def _raw_input(card: CardState) -> str:
    shown = raw_input_line(card)
    return "" if shown is None else inline_code(shown) + "\n"


def card_markdown(card: CardState, cwd: str | None) -> str:
    """A folded card as the editor drew it: the title line, then each content item (a diff,
    a terminal, text); a card without content shows its raw input."""
    parts = [title_line(card, cwd)]
    parts.extend(_item(item, card, cwd) for item in card.content)
    if not card.content and (raw := _raw_input(card)):
        parts.append(raw)
    return "\n".join(part for part in parts if part)


# -- messages and plans ------------------------------------------------------------------


def _message_body(blocks: Iterable[Mapping[str, Any]]) -> str:
    """Consecutive text blocks joined and kept as Markdown; other blocks as notes."""
    parts: list[str] = []
    text: list[str] = []
    for block in blocks:
        piece = block_text(block)
        if piece is not None:
            text.append(piece)
            continue
        if text:
            parts.append(safe_markdown(clip_message("".join(text))))
            text = []
        parts.append(_note(describe_block(block)))
    if text:
        parts.append(safe_markdown(clip_message("".join(text))))
    return "\n".join(part for part in parts if part)


def message_markdown(role: Role, blocks: Iterable[Mapping[str, Any]]) -> str:
    """A user or agent message: a bold role line, then the message's own Markdown (made
    safe); images, resources and links are named, never loaded. A thought is
    :func:`thought_markdown`."""
    match role:
        case "user":
            label = "User"
        case "agent":
            label = "Agent"
        case "thought":
            return thought_markdown(blocks)
        case _:
            assert_never(role)
    body = _message_body(blocks)
    return f"**{label}**\n" + (f"\n{body}" if body else "")


def thought_markdown(blocks: Iterable[Mapping[str, Any]]) -> str:
    """An agent thought, in a closed ``<details>``."""
    return details("Thought", _message_body(blocks) or _note("(empty)"))


_PLAN_STATUSES: Final = {"in_progress": "in progress", "pending": "pending"}


def plan_markdown(entries: Iterable[Mapping[str, Any]]) -> str:
    """The agent's plan as a task list: ``- [x]`` done, ``- [ ]`` the rest with their status."""
    lines = ["**Plan**\n", "\n"]
    for entry in entries:
        status = as_str(entry.get("status")) or ""
        content = escape_text(as_str(entry.get("content")) or "") or "*(no text)*"
        if status == "completed":
            lines.append(f"- [x] {content}\n")
            continue
        shown = _PLAN_STATUSES.get(status) or escape_text(status) or "unknown"
        lines.append(f"- [ ] {content} *({shown})*\n")
    if len(lines) == 2:
        lines.append(_note("(empty)"))
    return "".join(lines)
