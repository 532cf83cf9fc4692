"""HTML fragments for a transcript's blocks: tool cards, messages, thoughts and plans.

Pure; every string from the log is escaped. The markup is the DOM contract the tests and the
browser checks rely on (``section.card[data-status]…``). Nothing on the page loads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

from acp_sidecar.export import escape
from acp_sidecar.export.ansi import ansi_html
from acp_sidecar.export.clip import (
    HEAD_LINES,
    TAIL_LINES,
    clip_lines,
    clip_message,
    line_count,
)
from acp_sidecar.export.highlight import diff_html
from acp_sidecar.export.longtext import clipped_note, clipped_pre, collapsed
from acp_sidecar.export.markup import LINK_REL, link_target, markdown_html
from acp_sidecar.render.draw import (
    block_text,
    compaction_heading,
    describe_block,
    holds_fence,
    raw_input_line,
    shown_path,
)
from acp_sidecar.render.fold import CardState, TerminalState, as_mapping, as_str

KINDS: Final = (
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other",
)  # fmt: skip
"""The ACP tool kinds; any other kind is drawn as ``other``."""

STATUS_TEXT: Final = {
    "completed": "completed",
    "failed": "failed",
    "in_progress": "running",
    "pending": "pending",
}
"""The status pill's text per ACP status."""

"""Characters of a card's raw input shown when it has no content."""

INLINE_IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""Prompt images of these types with ``data`` are shown inline (as ``data:`` URLs)."""

_BASE64: Final = re.compile(r"[A-Za-z0-9+/]*={0,2}")
"""Base64, matched once its whitespace is taken out (a pattern allowing whitespace between
the parts backtracks quadratically on a long run of it)."""

# One 16×16 stroke drawing per kind (drawn for this project; ``currentColor`` follows the theme).
_ICON_PATHS: Final = {
    "read": "M1.5 8s2.4-4.5 6.5-4.5 6.5 4.5 6.5 4.5-2.4 4.5-6.5 4.5S1.5 8 1.5 8zM8 6a2 2 0 1 0 0 4 "
    "2 2 0 0 0 0-4z",
    "edit": "M10.5 2.5l3 3-8 8h-3v-3zM9 4l3 3",
    "delete": "M2.5 4h11M6 4V2.5h4V4M4 4l.8 9.5h6.4L12 4M6.5 6.5v5M9.5 6.5v5",
    "move": "M2 8h11M9.5 4.5 13 8l-3.5 3.5",
    "search": "M7 2.5a4.5 4.5 0 1 0 0 9 4.5 4.5 0 0 0 0-9zM10.3 10.3 14 14",
    "execute": "M2.5 3.5 6.5 7.5l-4 4M8 12.5h5.5",
    "think": "M8 1.8a4.2 4.2 0 0 0-2.5 7.6v1.6h5V9.4A4.2 4.2 0 0 0 8 1.8zM6 13.5h4",
    "fetch": "M8 1.8a6.2 6.2 0 1 0 0 12.4A6.2 6.2 0 0 0 8 1.8zM1.8 8h12.4M8 1.8c2.2 2.2 2.2 10.2 "
    "0 12.4M8 1.8c-2.2 2.2-2.2 10.2 0 12.4",
    "switch_mode": "M2.5 5.5h10l-2.5-2.5M13.5 10.5h-10l2.5 2.5",
    "other": "M3.5 8h.01M8 8h.01M12.5 8h.01",
}


_STROKE: Final = (
    'fill="none" stroke="currentColor" stroke-width="1.5" stroke-linecap="round" '
    'stroke-linejoin="round"'
)


def icon_sprites() -> str:
    """One hidden inline ``<svg>`` defining ``#k-{kind}`` for every kind (once per page)."""
    symbols = "".join(
        f'<symbol id="k-{kind}" viewBox="0 0 16 16"><path d="{_ICON_PATHS[kind]}" {_STROKE}/>'
        "</symbol>"
        for kind in KINDS
    )
    return (
        '<svg class="sprites" aria-hidden="true" '
        f'style="position:absolute;width:0;height:0;overflow:hidden">{symbols}</svg>'
    )


def _note(text: str) -> str:
    return f'<div class="note">{escape.text(text)}</div>'


# -- cards -------------------------------------------------------------------------------


def _kind(card: CardState) -> str:
    return card.kind if card.kind in KINDS else "other"


def _title(card: CardState, cwd: str | None) -> str:
    """The title the editor showed (the bridge already made its paths relative)."""
    return card.title or card.tool_call_id


def _head(card: CardState, cwd: str | None) -> str:
    kind = _kind(card)
    status = card.status if card.status in STATUS_TEXT else "unknown"
    return (
        f'<section class="card" data-status="{escape.attr(card.status)}" data-kind="{kind}" '
        f'data-call-id="{escape.attr(card.tool_call_id)}"><header class="card-head">'
        f'<svg class="kind-icon" viewBox="0 0 16 16" aria-hidden="true"><use href="#k-{kind}"/>'
        f'</svg><span class="card-title">{escape.text(_title(card, cwd))}</span>'
        f'<span class="status status-{status}">{STATUS_TEXT.get(status, "unknown")}</span>'
        "</header>"
    )


def _locations(card: CardState, cwd: str | None) -> str:
    items = []
    for location in card.locations:
        path = as_str(location.get("path"))
        if path is None:
            continue
        line = location.get("line")
        shown = shown_path(path, cwd)
        if isinstance(line, int) and not isinstance(line, bool):
            shown = f"{shown}:{line}"
        items.append(f"<li>{escape.text(shown)}</li>")
    return f'<ul class="locations">{"".join(items)}</ul>' if items else ""


def _exit_pill(terminal: TerminalState | None, finished: bool) -> str:
    if terminal is not None and terminal.signal is not None:
        return f'<span class="exit-pill exit-signal">{escape.text(terminal.signal)}</span>'
    if terminal is not None and terminal.exit_code is not None:
        outcome = "exit-ok" if terminal.exit_code == 0 else "exit-fail"
        return f'<span class="exit-pill {outcome}">exit {terminal.exit_code}</span>'
    return (
        f'<span class="exit-pill exit-running">{"no exit status" if finished else "running"}</span>'
    )


def _rewound(output: str) -> str:
    """Each line as the terminal left it: ``\\r`` rewinds, so only the text after the last one
    stays. Done before clipping so a progress bar's thousand redraws count as one line."""
    if "\r" not in output:
        return output
    return "\n".join(line.rsplit("\r", 1)[-1] for line in output.replace("\r\n", "\n").split("\n"))


def _command(card: CardState) -> str:
    if card.title:
        return card.title
    raw = as_mapping(card.raw_input)
    return (as_str(raw.get("command")) if raw is not None else None) or ""


def terminal_html(card: CardState, terminal_id: str | None) -> str:
    """A ``terminal`` item: command, cwd, output (ANSI drawn, clipped, collapsed), exit pill."""
    terminal = None if terminal_id is None else card.terminals.get(terminal_id)
    parts = [
        '<div class="terminal">',
        f'<div class="term-command">{escape.text(_command(card))}</div>',
    ]
    if terminal is None:
        parts.append(_note("(terminal not started)"))
    else:
        if terminal.cwd is not None:
            parts.append(f'<div class="term-cwd">{escape.text(terminal.cwd)}</div>')
        output = _rewound(terminal.output)
        if output:
            parts.append(clipped_pre(output, "term-output", ansi_html))
        else:  # the contract's element is always there, the note says why it is empty
            parts.append('<pre class="term-output"></pre>' + _note("(no output)"))
    parts.append(_exit_pill(terminal, card.finished))
    parts.append("</div>")
    return "".join(parts)


def tool_text_html(text: str) -> str:
    """A card's text: verbatim in a ``<pre>`` (clipped and collapsed), or Markdown when it holds
    a fence (as :func:`acp_sidecar.render.draw.tool_text` decides)."""
    if holds_fence(text):
        clipped = clip_lines(text, head=HEAD_LINES, tail=TAIL_LINES)
        body = markdown_html(clipped.head)
        if clipped.omitted:  # the tail may start inside a fence: verbatim, never mis-parsed
            tail = f'<pre class="text">{escape.text(clipped.tail)}</pre>'
            body = f"{body}{clipped_note(clipped.omitted)}{tail}"
        return f'<div class="tool-text">{collapsed(body, line_count(text))}</div>'
    return f'<div class="tool-text">{clipped_pre(text, "text", escape.text)}</div>'


def _item(item: Mapping[str, Any], card: CardState, cwd: str | None) -> str:
    kind = item.get("type")
    if kind == "diff":
        return diff_html(item, cwd)
    if kind == "terminal":
        return terminal_html(card, as_str(item.get("terminalId")))
    if kind == "content":
        block = as_mapping(item.get("content")) or {}
        text = block_text(block)
        return _note(describe_block(block)) if text is None else tool_text_html(text)
    return _note(f"[{as_str(kind) or '?'} item]")


def _raw_input(card: CardState) -> str:
    shown = raw_input_line(card)
    return "" if shown is None else f'<pre class="raw-input">{escape.text(shown)}</pre>'


def card_html(card: CardState, cwd: str | None) -> str:
    """A folded tool-call card (see the module invariants); paths relative to ``cwd``."""
    parts = [_head(card, cwd), _locations(card, cwd)]
    parts.extend(_item(item, card, cwd) for item in card.content)
    if not card.content:
        parts.append(_raw_input(card))
    parts.append("</section>")
    return "".join(parts)


# -- messages and plans ------------------------------------------------------------------


def _image(block: Mapping[str, Any], *, inline: bool) -> str:
    mime = as_str(block.get("mimeType")) or ""
    data = as_str(block.get("data"))
    compact = "".join(data.split()) if data else ""
    if inline and compact and mime in INLINE_IMAGE_TYPES and _BASE64.fullmatch(compact):
        return f'<img class="prompt-image" alt="image" src="data:{mime};base64,{compact}">'
    uri = as_str(block.get("uri"))
    label = escape.text(describe_block(block))
    href = None if uri is None else link_target(uri)
    if href and href.lower().startswith(("http:", "https:")):
        return f'<a class="image-link" href="{escape.attr(href)}" rel="{LINK_REL}">{label}</a>'
    return f'<span class="note">{label}</span>'


def _resource_link(block: Mapping[str, Any]) -> str:
    uri = as_str(block.get("uri")) or ""
    label = escape.text(as_str(block.get("name")) or uri or "link")
    href = link_target(uri)
    if href:
        return f'<a class="resource-link" href="{escape.attr(href)}" rel="{LINK_REL}">{label}</a>'
    return f'<span class="note">{escape.text(describe_block(block))}</span>'


def _blocks_html(blocks: Iterable[Mapping[str, Any]], *, prompt: bool) -> str:
    """Consecutive text blocks joined and drawn as Markdown (a ``prompt``'s as it was typed);
    other blocks as short notes."""
    parts: list[str] = []
    texts: list[str] = []

    def flush() -> None:
        if not texts:
            return
        text = clip_message("".join(texts))
        if prompt:  # as it was typed: a prompt is not Markdown the user asked to be drawn
            parts.append(f'<p class="typed">{escape.text(text.strip(chr(10)))}</p>')
        else:
            parts.append(markdown_html(text))
        texts.clear()

    for block in blocks:
        text = block_text(block)
        if text is not None:
            texts.append(text)
            continue
        flush()
        kind = block.get("type")
        if kind == "image":
            parts.append(f"<p>{_image(block, inline=prompt)}</p>")
        elif kind == "resource_link":
            parts.append(f"<p>{_resource_link(block)}</p>")
        else:
            parts.append(f'<p class="note">{escape.text(describe_block(block))}</p>')
    flush()
    return "".join(parts)


def message_html(role: Literal["user", "agent"], blocks: Iterable[Mapping[str, Any]]) -> str:
    """A user prompt or an agent message: ``<div class="msg msg-{role}">`` with the prompt as
    it was typed (``<p class="typed">``: its line breaks and spaces kept; its ``data:`` images
    shown), or the agent's Markdown."""
    return f'<div class="msg msg-{role}">{_blocks_html(blocks, prompt=role == "user")}</div>'


def thought_html(blocks: Iterable[Mapping[str, Any]]) -> str:
    """An agent thought, collapsed: ``<details class="thought">`` (closed)."""
    body = _blocks_html(blocks, prompt=False)
    return f'<details class="thought"><summary>Thought</summary>{body}</details>'


PLAN_STATUSES: Final = frozenset({"pending", "in_progress", "completed"})


def plan_html(entries: Iterable[Mapping[str, Any]]) -> str:
    """The agent's plan: ``<section class="plan"><ol><li class="plan-{status}">``."""
    items = []
    for entry in entries:
        status = as_str(entry.get("status"))
        status = status if status in PLAN_STATUSES else "pending"
        content = escape.text(as_str(entry.get("content")) or "")
        items.append(f'<li class="plan-{status}">{content}</li>')
    return f'<section class="plan"><h2>Plan</h2><ol>{"".join(items)}</ol></section>'


def markdown_plan_html(document: str, path: str | None) -> str:
    """A Markdown plan: ``<section class="plan plan-markdown">``, the document rendered safely,
    its file named when it has one (removed: a note)."""
    where = f'<p class="plan-path"><code>{escape.text(path)}</code></p>' if path else ""
    body = markdown_html(document) if document.strip() else _note("(removed)")
    return f'<section class="plan plan-markdown"><h2>Plan</h2>{where}{body}</section>'


NOTICE_SEVERITIES: Final = frozenset({"info", "warning", "error"})
COMPACTION_STATUSES: Final = frozenset({"in_progress", "completed", "failed", "cancelled"})


def notice_html(severity: str, title: str, detail: str | None) -> str:
    """A notice: ``<div class="notice notice-{severity}">`` with its title and its detail
    (plain text, its line breaks kept)."""
    shown = severity if severity in NOTICE_SEVERITIES else "info"
    body = f'<p class="notice-detail">{escape.text(detail)}</p>' if detail else ""
    return (
        f'<div class="notice notice-{shown}" role="note">'
        f'<p class="notice-title">{escape.text(title)}</p>{body}</div>'
    )


def compaction_html(status: str, summary: str, error: str | None) -> str:
    """A compaction: ``<details class="compaction">`` (closed) holding the summary the model
    is sent in place of the earlier turns, drawn as Markdown; a ``<div>`` without one."""
    shown = status if status in COMPACTION_STATUSES else "completed"
    heading = escape.text(compaction_heading(status, error))
    if not summary.strip():
        return f'<div class="compaction compaction-{shown}">{heading}</div>'
    body = markdown_html(clip_message(summary))
    return (
        f'<details class="compaction compaction-{shown}"><summary>{heading}</summary>'
        f"{body}</details>"
    )
