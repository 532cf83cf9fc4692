"""Drawing folded cards and messages as ``rich`` renderables. Pure; a malformed part is a dim
note, never raised on; terminal output keeps colours and ``\\r``, other sequences are shown.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any, Final

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.padding import Padding
from rich.panel import Panel
from rich.style import Style
from rich.text import Span, Text

from acp_sidecar.render.fold import CardState, TerminalState, as_mapping, as_str
from acp_sidecar.text import harmless, visible

STATUS_MARKERS: Final[dict[str, tuple[str, str]]] = {
    "completed": ("✓", "bold green"),
    "failed": ("✗", "bold red"),
    "in_progress": ("⋯", "bold yellow"),
    "pending": ("○", "dim"),
}
"""The marker and style shown before a card's title, per status."""

CODE_THEME: Final = "ansi_dark"
"""Code blocks use the terminal's own palette (no painted background)."""

_UNKNOWN_MARKER: Final = ("?", "bold magenta")
_BORDERS: Final = {"completed": "green", "failed": "red"}
RAW_INPUT_LIMIT: Final = 300
"""Characters of a card's raw input shown when it has no content."""


def status_marker(status: str) -> Text:
    """The card's status marker (``✓`` completed, ``✗`` failed, ``⋯`` running, ``○`` pending)."""
    mark, style = STATUS_MARKERS.get(status, _UNKNOWN_MARKER)
    return Text(mark, style=style)


def shown_path(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies inside it, for people: its control and bidi
    characters are visible signs (a U+202E would reorder the name it is in)."""
    if cwd is None or not os.path.isabs(path):
        return visible(path)
    root = os.path.normpath(cwd)
    full = os.path.normpath(path)
    if full.startswith(root.rstrip(os.sep) + os.sep):
        return visible(os.path.relpath(full, root))
    return visible(path)


def note(text: str) -> Text:
    """A dim one-line note."""
    return Text(text, style="dim")


# -- messages ----------------------------------------------------------------------------


def block_text(block: Mapping[str, Any]) -> str | None:
    """The text of a ``text`` content block, else ``None``."""
    return as_str(block.get("text")) if block.get("type") == "text" else None


def describe_block(block: Mapping[str, Any]) -> str:
    """A one-line stand-in for a content block that is not text."""
    kind = as_str(block.get("type")) or "?"
    if kind in ("image", "audio"):
        return f"[{kind} {as_str(block.get('mimeType')) or ''}]".replace(" ]", "]")
    if kind == "resource_link":
        name = as_str(block.get("name")) or ""
        uri = as_str(block.get("uri")) or ""
        return f"[link {name} <{uri}>]" if name else f"[link <{uri}>]"
    if kind == "resource":
        resource = as_mapping(block.get("resource")) or {}
        return f"[resource <{as_str(resource.get('uri')) or '?'}>]"
    return f"[{kind} content]"


def _message_parts(blocks: Iterable[Mapping[str, Any]]) -> list[str | Text]:
    """Consecutive text blocks joined into strings; other blocks as dim notes."""
    parts: list[str | Text] = []
    for block in blocks:
        text = block_text(block)
        if text is None:
            parts.append(note(describe_block(block)))
        elif parts and isinstance(parts[-1], str):
            parts[-1] += text
        else:
            parts.append(text)
    return parts


def draw_user_message(blocks: Iterable[Mapping[str, Any]]) -> RenderableType:
    """A user message: ``❯`` and its text, verbatim."""
    body = Text()
    for part in _message_parts(blocks):
        body.append_text(part if isinstance(part, Text) else Text(part, style="bold"))
    return Group(Text.assemble(("❯ ", "bold cyan"), body))


def draw_agent_message(blocks: Iterable[Mapping[str, Any]]) -> RenderableType:
    """An agent message, drawn as Markdown."""
    return Group(
        *(
            p if isinstance(p, Text) else Markdown(p, code_theme=CODE_THEME)
            for p in _message_parts(blocks)
        )
    )


def draw_thought(blocks: Iterable[Mapping[str, Any]]) -> RenderableType:
    """An agent thought, dimmed."""
    body = Text(style="dim italic")
    for part in _message_parts(blocks):
        body.append_text(part if isinstance(part, Text) else Text(part))
    return Padding(body, (0, 0, 0, 2))


# -- cards -------------------------------------------------------------------------------


def holds_fence(text: str) -> bool:
    """Whether a card's text holds a fenced block (then it is shown as Markdown)."""
    return "```" in text and any(line.lstrip().startswith("```") for line in text.splitlines())


def tool_text(text: str) -> RenderableType:
    """A card's text: verbatim, unless it holds a fenced block (then Markdown, as editors do)."""
    if holds_fence(text):
        return Markdown(text, code_theme=CODE_THEME)
    return Text(text.rstrip("\n"))


def draw_diff(item: Mapping[str, Any], cwd: str | None) -> RenderableType:
    """A ``diff`` item: the file's path, then its hunks coloured (``oldText: null`` = a new
    file, all added)."""
    path = as_str(item.get("path")) or "?"
    shown = shown_path(path, cwd)
    old_text = as_str(item.get("oldText"))
    new_text = as_str(item.get("newText")) or ""
    old_lines = [] if old_text is None else old_text.splitlines()
    lines = list(
        difflib.unified_diff(
            old_lines,
            new_text.splitlines(),
            fromfile="/dev/null" if old_text is None else f"a/{shown}",
            tofile=f"b/{shown}",
            lineterm="",
        )
    )
    heading = Text(shown, style="bold")
    if old_text is None:
        heading.append(" (new file)", style="green")
    if not lines:
        return Group(heading, note("(no changes)"))
    out = Text()
    for line in lines[2:]:  # the ---/+++ lines only repeat the heading
        if line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = ""
        out.append(line + "\n", style=style)
    out.rstrip()
    return Group(heading, out)


def terminal_text(output: str) -> Text:
    """Terminal output as a terminal shows it: ANSI styles kept, ``\\r`` rewinding the line."""
    lines = []
    for line in output.replace("\r\n", "\n").split("\n"):
        lines.append(line.rsplit("\r", 1)[-1])
    text = Text.from_ansi("\n".join(lines).rstrip("\n"))
    text.end = ""
    return text


def inert_terminal_text(output: str) -> Text:
    """:func:`terminal_text` fit to print on a terminal: its styles, but no link, and the
    controls the decoding left (sequences rich does not know, C1) shown as pictures."""
    decoded = terminal_text(output)
    spans = [
        Span(s.start, s.end, s.style.update_link(None))
        if isinstance(s.style, Style) and s.style.link
        else s
        for s in decoded.spans
    ]
    # harmless() replaces one character by one, so the spans still fall where they did.
    return Text(harmless(decoded.plain), spans=spans, end="")


def exit_pill(terminal: TerminalState) -> Text | None:
    """The exit pill: green ``exit 0``, red ``exit N``, magenta signal; ``None`` while running."""
    if terminal.signal is not None:
        return Text(f" {terminal.signal} ", style="bold white on magenta")
    if terminal.exit_code is not None:
        style = "bold white on green" if terminal.exit_code == 0 else "bold white on red"
        return Text(f" exit {terminal.exit_code} ", style=style)
    return None


def _terminal_body(terminal: TerminalState | None, cwd: str | None) -> list[RenderableType]:
    if terminal is None:
        return [note("(terminal not started)")]
    body: list[RenderableType] = []
    if terminal.cwd is not None:
        body.append(note(f"cwd: {terminal.cwd}"))
    output = terminal.output
    body.append(inert_terminal_text(output) if output else note("(no output)"))
    return body


def _item(item: Mapping[str, Any], card: CardState, cwd: str | None) -> list[RenderableType]:
    kind = item.get("type")
    if kind == "diff":
        return [draw_diff(item, cwd)]
    if kind == "terminal":
        terminal_id = as_str(item.get("terminalId"))
        terminal = None if terminal_id is None else card.terminals.get(terminal_id)
        return _terminal_body(terminal, cwd)
    if kind == "content":
        block = as_mapping(item.get("content")) or {}
        text = block_text(block)
        return [note(describe_block(block)) if text is None else tool_text(text)]
    return [note(f"[{as_str(kind) or '?'} item]")]


def raw_input_line(card: CardState) -> str | None:
    """A card's raw input as one short JSON line (``None`` when it has none, or the card
    stands for the plan drawn beside it, whose JSON it would repeat): what a card with no
    content shows, in every view."""
    if card.raw_input is None or card.shows_plan:
        return None
    try:
        shown = json.dumps(card.raw_input, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        shown = repr(card.raw_input)
    if len(shown) > RAW_INPUT_LIMIT:
        shown = shown[: RAW_INPUT_LIMIT - 1] + "…"
    return shown


def _raw_input(card: CardState) -> list[RenderableType]:
    shown = raw_input_line(card)
    return [] if shown is None else [note(shown)]


def _title_line(card: CardState) -> Text:
    line = Text.assemble(status_marker(card.status), " ", (card.title or card.tool_call_id, "bold"))
    if card.kind and card.kind != "other":
        line.append(f"  {card.kind}", style="dim")
    return line


def draw_card(card: CardState, cwd: str | None = None) -> RenderableType:
    """A folded card (see the module invariants)."""
    body: list[RenderableType] = []
    for item in card.content:
        body.extend(_item(item, card, cwd))
    if not card.content:
        body.extend(_raw_input(card))
    terminals = [
        card.terminals.get(tid)
        for item in card.content
        if item.get("type") == "terminal" and (tid := as_str(item.get("terminalId"))) is not None
    ]
    if not terminals:
        return Group(_title_line(card), *(Padding(part, (0, 0, 0, 2)) for part in body))
    shown = next((t for t in reversed(terminals) if t is not None), None)
    title = Text.assemble(status_marker(card.status), " ", ("$ ", "dim"), card.title or "")
    return Panel(
        Group(*body),
        title=title,
        title_align="left",
        subtitle=None if shown is None else exit_pill(shown),
        subtitle_align="right",
        border_style=_BORDERS.get(card.status, "yellow"),
    )


# -- other updates -----------------------------------------------------------------------

_PLAN_MARKERS: Final = {"completed": "✓", "in_progress": "⋯", "pending": "○"}


def draw_plan(entries: Iterable[Mapping[str, Any]]) -> RenderableType:
    """The agent's plan: one line per entry with its status marker."""
    lines = [Text("Plan", style="bold")]
    for entry in entries:
        mark = _PLAN_MARKERS.get(as_str(entry.get("status")) or "", "?")
        lines.append(Text(f"  {mark} {as_str(entry.get('content')) or ''}"))
    return Group(*lines)


def draw_markdown_plan(document: str, path: str | None) -> RenderableType:
    """A Markdown plan: its heading (and file), then the document as written."""
    head = Text("Plan", style="bold")
    if path:
        head.append(f"  {path}", style="dim")
    return Group(head, Text(document) if document.strip() else note("(removed)"))


def draw_commands(names: Iterable[str]) -> RenderableType:
    """The available slash commands, briefly."""
    shown = [f"/{name}" for name in names if name]
    return note("commands: " + (" ".join(shown) if shown else "(none)"))


def draw_mode(mode_id: str) -> RenderableType:
    """A mode switch."""
    return note(f"mode: {mode_id}")


_NOTICE_MARKERS: Final = {
    "info": ("ℹ", "bold blue"),
    "warning": ("⚠", "bold yellow"),
    "error": ("✗", "bold red"),
}


def draw_notice(severity: str, title: str, detail: str | None) -> RenderableType:
    """A notice: a marker for its severity and its title, then its detail."""
    mark, style = _NOTICE_MARKERS.get(severity, ("•", "bold"))
    line = Text.assemble((mark, style), " ", (title, "bold"))
    if not detail:
        return line
    return Group(line, Padding(Text(detail, style="dim"), (0, 0, 0, 2)))


COMPACTED: Final = "Earlier turns summarised"
"""What a compaction is called in every view: the turns before it were summarised, and the
model is sent the summary in their place (the transcript still shows them all)."""

_COMPACTION_ENDS: Final = {
    "completed": COMPACTED,
    "failed": "Summarising the earlier turns failed",
    "cancelled": "Summarising the earlier turns was cancelled",
    "in_progress": "Summarising the earlier turns…",
}


def compaction_heading(status: str, error: str | None) -> str:
    """A compaction's one line: what became of it (and why it failed)."""
    heading = _COMPACTION_ENDS.get(status, f"{COMPACTED} ({status})")
    return f"{heading}: {error}" if error and status != "completed" else heading


def draw_compaction(status: str, summary: str, error: str | None) -> RenderableType:
    """A compaction: its line, then the summary the model is sent, dimmed."""
    line = Text.assemble(("≡ ", "bold magenta"), (compaction_heading(status, error), "bold"))
    if not summary.strip():
        return line
    body = Text(summary.strip("\n"), style="dim italic")
    return Group(line, Padding(body, (0, 0, 0, 2)))
