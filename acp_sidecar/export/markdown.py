"""A stored session as one GitHub-flavoured Markdown file: the same blocks, in the same order, as
the HTML page. The only raw HTML is ours (``<details>``, ``<summary>``, ``<sub>``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import escape
from typing import TextIO, assert_never

from acp_sidecar.export.document import (
    Clock,
    Tally,
    answer_text,
    display_title,
    heading_facts,
    walk,
)
from acp_sidecar.export.gfm import escape_text, inline_code
from acp_sidecar.export.gfm_cards import (
    card_markdown,
    compaction_markdown,
    markdown_plan_markdown,
    message_markdown,
    notice_markdown,
    plan_markdown,
    thought_markdown,
)
from acp_sidecar.export.source import StoredSession
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


def event_markdown(event: Event) -> str:
    """An event as one italic line."""
    match event:
        case ModeSwitched(mode_id=mode):
            return f"*Mode switched to* {inline_code(mode)}"
        case OptionChanged(config_id="model", value=model):
            return f"*Model switched to* {inline_code(model)}"
        case OptionChanged(config_id=config_id, value=value):
            return f"*{escape_text(config_id)} set to* {inline_code(value)}"
        case PermissionDecided():
            verdict = escape_text(answer_text(event.answer, event.remembered, event.rule))
            return f"*Permission for* {inline_code(event.tool)}*:* **{verdict}**"
        case TurnEnded(reason=reason):
            return f"*Turn ended:* **{escape_text(reason)}**"
        case _:
            assert_never(event)


def block_markdown(block: Block, cwd: str | None) -> str:
    """The Markdown for one block."""
    match block:
        case MessageBlock(role="thought"):
            return thought_markdown(block.blocks)
        case MessageBlock(role=role):
            return message_markdown(role, block.blocks)
        case CardBlock():
            return card_markdown(block.card, cwd)
        case PlanBlock(markdown=str(document)):
            return markdown_plan_markdown(document, block.path)
        case PlanBlock():
            return plan_markdown(block.entries)
        case ModeBlock(mode_id=mode):
            return event_markdown(ModeSwitched(mode))
        case CommandsBlock(names=names):
            return "*Commands:* " + (" ".join(inline_code(f"/{n}") for n in names) or "none")
        case EventBlock(event=event):
            return event_markdown(event)
        case NoticeBlock():
            return notice_markdown(block.severity, block.title, block.detail)
        case CompactionBlock():
            return compaction_markdown(block.status, block.summary_text, block.error)
        case _:
            assert_never(block)


def _entries(session: StoredSession, tally: Tally) -> Iterator[str]:
    clock = Clock()
    cwd = session.heading.cwd
    for block in walk(session.entries(), tally):
        text = block_markdown(block, cwd).strip("\n")
        if block.at is not None:
            text = f"<sub>{escape(clock.label(block.at))}</sub>\n\n{text}"
        yield text + "\n\n"


def _cell(text: str) -> str:
    """``text`` fit for a table cell: a "|" not yet escaped is (GFM unescapes it before it
    reads code spans, so this holds inside them too)."""
    return re.sub(r"(?<!\\)\|", r"\\|", text.replace("\n", " "))


def _heading(session: StoredSession, tally: Tally) -> str:
    rows = []
    for fact in heading_facts(session, tally):
        shown = (inline_code(v) if fact.code else escape_text(v) for v in fact.values)
        rows.append((fact.label, ", ".join(shown)))
    table = "".join(f"| {name} | {_cell(value)} |\n" for name, value in rows)
    title = escape_text(display_title(session.heading.title))
    return f"# {title}\n\n| | |\n|---|---|\n{table}\n---\n\n"


def write_markdown(session: StoredSession, out: TextIO, *, generator: str) -> None:
    """Write ``session`` to ``out`` as Markdown (see the module invariants)."""
    tally = Tally()
    body = list(_entries(session, tally))
    out.write(_heading(session, tally))
    out.writelines(body)
    out.write(f"---\n\n<sub>Exported by {escape(generator)}. Times are UTC.</sub>\n")
