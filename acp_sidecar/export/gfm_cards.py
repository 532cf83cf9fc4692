"""GitHub-flavoured Markdown of a transcript's blocks, built from :mod:`.gfm`'s primitives (so it
keeps their invariants); a message's own Markdown goes through :mod:`.gfm_safe`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, assert_never

from acp_sidecar.export.clip import clip_message
from acp_sidecar.export.gfm import (
    details,
    escape_text,
    fence,
    inline_code,
    lines_of,
    long_part,
    note,
    typed_text,
)
from acp_sidecar.export.gfm_safe import safe_markdown
from acp_sidecar.render.blocks import Role
from acp_sidecar.render.draw import (
    STATUS_MARKERS,
    block_text,
    compaction_heading,
    describe_block,
    holds_fence,
    raw_input_line,
    shown_path,
    terminal_text,
)
from acp_sidecar.render.fold import CardState, TerminalState, as_mapping, as_str

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
            [] if old_text is None else lines_of(old_text),
            lines_of(new_text),
            fromfile="/dev/null" if old_text is None else f"a/{shown}",
            tofile=f"b/{shown}",
            lineterm="",
        )
    )
    if not lines:
        return heading + "\n" + note("(no changes)")
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
        return note("(terminal not started)")
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
        parts.append(note("(no output)"))
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
        return note(describe_block(block)) if text is None else text_markdown(text)
    return note(f"[{as_str(kind) or '?'} item]")


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


def _message_body(blocks: Iterable[Mapping[str, Any]], draw: Callable[[str], str]) -> str:
    """Consecutive text blocks joined and drawn by ``draw``; other blocks as notes."""
    parts: list[str] = []
    text: list[str] = []
    for block in blocks:
        piece = block_text(block)
        if piece is not None:
            text.append(piece)
            continue
        if text:
            parts.append(draw(clip_message("".join(text))))
            text = []
        parts.append(note(describe_block(block)))
    if text:
        parts.append(draw(clip_message("".join(text))))
    return "\n".join(part for part in parts if part)


def message_markdown(role: Role, blocks: Iterable[Mapping[str, Any]]) -> str:
    """A user or agent message: a bold role line, then the prompt as it was typed
    (:func:`~acp_sidecar.export.gfm.typed_text`), or the agent's own Markdown (made safe);
    images, resources and links are named, never loaded. A thought is
    :func:`thought_markdown`."""
    match role:
        case "user":
            label, draw = "User", typed_text
        case "agent":
            label, draw = "Agent", safe_markdown
        case "thought":
            return thought_markdown(blocks)
        case _:
            assert_never(role)
    body = _message_body(blocks, draw)
    return f"**{label}**\n" + (f"\n{body}" if body else "")


def thought_markdown(blocks: Iterable[Mapping[str, Any]]) -> str:
    """An agent thought, in a closed ``<details>``."""
    return details("Thought", _message_body(blocks, safe_markdown) or note("(empty)"))


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
        lines.append(note("(empty)"))
    return "".join(lines)


def markdown_plan_markdown(document: str, path: str | None) -> str:
    """A Markdown plan: a bold heading, its file when it has one, the document made safe."""
    head = "**Plan**" + (f" ({inline_code(path)})" if path else "") + "\n\n"
    if not document.strip():
        return head + note("(removed)")
    return head + safe_markdown(clip_message(document))


_NOTICE_LABELS: Final = {"info": "Notice", "warning": "Warning", "error": "Error"}


def notice_markdown(severity: str, title: str, detail: str | None) -> str:
    """A notice: its severity and title in bold, then its detail as it was written."""
    label = _NOTICE_LABELS.get(severity, "Notice")
    head = f"**{label}:** {escape_text(title) or '(untitled)'}\n"
    shown = typed_text(detail or "")
    return head + (f"\n{shown}" if shown else "")


def compaction_markdown(status: str, summary: str, error: str | None) -> str:
    """A compaction: what became of it, and the summary the model is sent in its place
    (collapsed, its own Markdown made safe)."""
    heading = compaction_heading(status, error)
    body = safe_markdown(clip_message(summary)) if summary.strip() else ""
    return details(heading, body) if body else f"*{escape_text(heading)}*\n"
