"""A stored session drawn in the terminal (``acp-sidecar replay SESSION``) under a heading of its
facts; the heading needs the whole log, so the body is drawn into memory first.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from acp_sidecar.export.document import Tally, display_title, heading_facts
from acp_sidecar.export.source import StoredSession
from acp_sidecar.render.transcript import TranscriptRenderer
from acp_sidecar.text import harmless


def heading(session: StoredSession, tally: Tally) -> RenderableType:
    """The session's title, then its facts as a two-column grid (once the walk has ended)."""
    title = Text(harmless(display_title(session.heading.title)), style="bold")
    rows = Table.grid(padding=(0, 2))
    rows.add_column(style="dim", no_wrap=True)
    rows.add_column()
    for fact in heading_facts(session, tally):
        rows.add_row(fact.label, Text(harmless(", ".join(fact.values))))
    return Group(title, rows, Text("─" * 3, style="dim"))


def write_terminal(session: StoredSession, console: Console) -> None:
    """Draw ``session`` on ``console`` (see the module invariants)."""
    tally = Tally()
    renderer = TranscriptRenderer(console, cwd=session.heading.cwd, on_block=tally.count)
    with console.capture() as body:  # drawn as for this console, held until the heading
        for entry in session.entries():
            if isinstance(entry.item, Mapping):
                renderer.feed(entry.item, entry.at)
            else:
                renderer.event(entry.item, entry.at)
        renderer.finish()
    console.print(heading(session, tally))
    console.print()
    console.file.write(body.get())
    console.file.flush()
