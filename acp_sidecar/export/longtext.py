"""Long bodies in HTML: collapsed behind a "show all", clipped to head and tail (:mod:`.clip`)."""

from __future__ import annotations

from collections.abc import Callable

from acp_sidecar.export.clip import COLLAPSE_LINES, HEAD_LINES, TAIL_LINES, clip_lines, line_count


def collapsed(body: str, lines: int) -> str:
    """``body`` behind a closed "show all (N lines)" when ``lines`` exceeds
    :data:`COLLAPSE_LINES`, else as it is."""
    if lines <= COLLAPSE_LINES:
        return body
    return f'<details class="more"><summary>show all ({lines} lines)</summary>{body}</details>'


def clipped_note(omitted: int) -> str:
    """The marker between a clipped body's head and tail."""
    return f'<div class="clipped">… {omitted} lines left out …</div>'


def clipped_pre(text: str, css_class: str, render: Callable[[str], str]) -> str:
    """``text`` in ``<pre class=css_class>``, clipped and collapsed (see the module
    invariants); ``render`` turns a piece of it into escaped inner HTML."""
    clipped = clip_lines(text, head=HEAD_LINES, tail=TAIL_LINES)
    head = f'<pre class="{css_class}">{render(clipped.head)}</pre>'
    if clipped.omitted:
        tail = f'<pre class="{css_class}">{render(clipped.tail)}</pre>'
        body = f"{head}{clipped_note(clipped.omitted)}{tail}"
    else:
        body = head
    return collapsed(body, line_count(text))
