"""A stored session as one self-contained HTML page: no script, nothing fetched, a CSP that
forbids loading anything (defence in depth: escaping is the guard).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TextIO, assert_never

from acp_sidecar.export.cards import (
    card_html,
    compaction_html,
    icon_sprites,
    markdown_plan_html,
    message_html,
    notice_html,
    plan_html,
    thought_html,
)
from acp_sidecar.export.document import (
    Clock,
    Tally,
    answer_text,
    display_title,
    heading_facts,
    utc,
    walk,
)
from acp_sidecar.export.escape import attr
from acp_sidecar.export.escape import text as escape
from acp_sidecar.export.highlight import highlight_budget
from acp_sidecar.export.source import StoredSession
from acp_sidecar.export.style import page_css
from acp_sidecar.render.blocks import (
    Block,
    CardBlock,
    CommandsBlock,
    CompactionBlock,
    Event,
    EventBlock,
    MessageBlock,
    ModeBlock,
    ModeSwitched,
    NoticeBlock,
    OptionChanged,
    PermissionDecided,
    PlanBlock,
    TurnEnded,
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""The page's Content-Security-Policy (see the module invariants)."""


def event_html(event: Event) -> str:
    """An event as one line."""
    match event:
        case ModeSwitched(mode_id=mode):
            return f'<div class="event event-mode">Mode switched to <b>{escape(mode)}</b></div>'
        case OptionChanged(config_id="model", value=model):
            return f'<div class="event event-model">Model switched to <b>{escape(model)}</b></div>'
        case OptionChanged(config_id=config_id, value=value):
            return (
                f'<div class="event event-option">{escape(config_id)} set to '
                f"<b>{escape(value)}</b></div>"
            )
        case PermissionDecided():
            verdict = "allow" if event.allowed else "reject"
            return (
                f'<div class="event event-permission permission-{verdict}" '
                f'data-call-id="{attr(event.call_id)}">Permission for '
                f"<code>{escape(event.tool)}</code>: "
                f"<b>{escape(answer_text(event.answer, event.remembered, event.rule))}</b></div>"
            )
        case TurnEnded(reason=reason):
            return f'<div class="event event-stop">Turn ended: <b>{escape(reason)}</b></div>'
        case _:
            assert_never(event)


def block_html(block: Block, cwd: str | None) -> str:
    """The fragment for one block."""
    match block:
        case MessageBlock(role="user"):
            return message_html("user", block.blocks)
        case MessageBlock(role="agent"):
            return message_html("agent", block.blocks)
        case MessageBlock():
            return thought_html(block.blocks)
        case CardBlock():
            return card_html(block.card, cwd)
        case PlanBlock(markdown=str(document)):
            return markdown_plan_html(document, block.path)
        case PlanBlock():
            return plan_html(block.entries)
        case ModeBlock(mode_id=mode):
            return event_html(ModeSwitched(mode))
        case CommandsBlock(names=names):
            shown = " ".join(f"<code>/{escape(name)}</code>" for name in names)
            return f'<div class="event event-commands">Commands: {shown or "none"}</div>'
        case EventBlock(event=event):
            return event_html(event)
        case NoticeBlock():
            return notice_html(block.severity, block.title, block.detail)
        case CompactionBlock():
            return compaction_html(block.status, block.summary_text, block.error)
        case _:
            assert_never(block)


def _entries(session: StoredSession, tally: Tally) -> Iterator[str]:
    clock = Clock()
    cwd = session.heading.cwd
    for block in walk(session.entries(), tally):
        kind = type(block).__name__.removesuffix("Block").lower()
        if isinstance(block, MessageBlock):
            kind = block.role
        stamp = ""
        if block.at is not None:
            iso = utc(block.at).isoformat(timespec="seconds")
            stamp = f'<time datetime="{iso}">{escape(clock.label(block.at))}</time>'
        yield f'<div class="entry entry-{kind}">{stamp}{block_html(block, cwd)}</div>\n'


def _heading(session: StoredSession, tally: Tally) -> str:
    rows = []
    for fact in heading_facts(session, tally):
        shown = (f"<code>{escape(v)}</code>" if fact.code else escape(v) for v in fact.values)
        rows.append((fact.label, ", ".join(shown)))
    listed = "".join(f"<dt>{name}</dt><dd>{value}</dd>" for name, value in rows)
    title = escape(display_title(session.heading.title))
    return f'<header class="session"><h1>{title}</h1><dl>{listed}</dl></header>\n'


def write_html(session: StoredSession, out: TextIO, *, generator: str) -> None:
    """Write ``session`` to ``out`` as one page (see the module invariants); ``generator``
    names the program in the page's footer and ``<meta name="generator">``."""
    tally = Tally()
    with highlight_budget():
        body = list(_entries(session, tally))
    title = attr(display_title(session.heading.title))  # <title> holds text, no spans
    out.write(
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="color-scheme" content="light dark">\n'
        f'<meta name="generator" content="{attr(generator)}">\n'
        f"<title>{title} · transcript</title>\n"
        f"<style>\n{page_css()}\n</style>\n"
        f'</head><body>\n{icon_sprites()}\n<main class="transcript">\n'
    )
    out.write(_heading(session, tally))
    out.writelines(body)
    out.write(
        f'<footer class="colophon">Exported by {escape(generator)}. Times are UTC.</footer>\n'
        "</main></body></html>\n"
    )
