"""Syntax highlighting for an export: unified diffs as tables, code with Pygments classes.

Only what is shown is lexed, and inside ``highlight_budget()`` at most :data:`HIGHLIGHT_CHARS`
(Pygments lexes ~0.4 MB/s: thousands of edits would take longer to export than to replay).
"""

from __future__ import annotations

import difflib
import functools
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final, NamedTuple

import attrs
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.token import STANDARD_TYPES, _TokenType
from pygments.util import ClassNotFound

from acp_sidecar.export import escape
from acp_sidecar.export.clip import HEAD_LINES, TAIL_LINES, clip_line, text_lines
from acp_sidecar.export.longtext import clipped_note, collapsed
from acp_sidecar.render.draw import shown_path
from acp_sidecar.render.fold import as_str

CONTEXT_LINES: Final = 3
"""Unchanged lines shown around each change, as ``diff -u``."""

LIGHT_STYLE: Final = "default"
DARK_STYLE: Final = "github-dark"
_SCOPES: Final = [".diff-lines", ".hl"]

_LEXER_OPTIONS: Final[dict[str, Any]] = {"stripnl": False, "stripall": False, "ensurenl": True}


HIGHLIGHT_CHARS: Final = 128 * 1024
"""Characters of code one document may highlight: about 3,000 lines, a third of a second of
Pygments; a session of a few dozen edits is highlighted whole."""


@attrs.define
class HighlightBudget:
    """What is left of one document's highlighting allowance."""

    remaining: int

    def take(self, chars: int) -> bool:
        """Whether ``chars`` more may be highlighted (then they are counted)."""
        if chars > self.remaining:
            return False
        self.remaining -= chars
        return True


_BUDGET: ContextVar[HighlightBudget | None] = ContextVar("highlight_budget", default=None)


@contextmanager
def highlight_budget(chars: int = HIGHLIGHT_CHARS) -> Iterator[HighlightBudget]:
    """Bound the highlighting of the fragments built inside the block (one document)."""
    budget = HighlightBudget(chars)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def _affordable(lines: Sequence[str]) -> bool:
    budget = _BUDGET.get()
    return budget is None or budget.take(sum(map(len, lines)) + len(lines))


# -- lexers and tokens -------------------------------------------------------------------


def _plain_or(lexer: Lexer) -> Lexer | None:
    return None if isinstance(lexer, TextLexer) else lexer


@functools.lru_cache(maxsize=512)
def _lexer_for_key(key: str) -> Lexer | None:
    try:
        return _plain_or(get_lexer_for_filename(key, **_LEXER_OPTIONS))
    except ClassNotFound:
        return None


def lexer_for_path(path: str) -> Lexer | None:
    """The lexer for a file name (``None``: plain text), looked up once per extension."""
    name = os.path.basename(path)
    stem, ext = os.path.splitext(name)
    return _lexer_for_key(f"x{ext.lower()}" if ext and stem else name)


@functools.lru_cache(maxsize=256)
def lexer_for_language(language: str) -> Lexer | None:
    """The lexer a fence's info string names (``None``: unknown or plain text)."""
    try:
        return _plain_or(get_lexer_by_name(language.lower(), **_LEXER_OPTIONS))
    except ClassNotFound:
        return None


@functools.cache
def _token_class(ttype: _TokenType) -> str:
    """Pygments' short CSS class of ``ttype`` (its nearest standard ancestor's)."""
    while ttype not in STANDARD_TYPES and ttype.parent is not None:
        ttype = ttype.parent
    cls = STANDARD_TYPES.get(ttype, "")
    # Whitespace is never coloured; an "error" token in a diff is mostly a hunk that starts
    # inside a string or comment the lexer never saw open, not a mistake worth a red box.
    return "" if cls in ("w", "err") else cls


def highlight_lines(lines: Sequence[str], lexer: Lexer | None) -> list[str]:
    """The HTML of each line of one contiguous run, lexed together."""
    if lexer is None or not lines or not _affordable(lines):
        return [escape.text(line) for line in lines]
    out: list[str] = []
    current: list[str] = []
    pending_cls, pending = "", ""  # adjacent tokens of one class share a span

    def flush() -> None:
        if pending:
            shown = escape.text(pending)
            current.append(f'<span class="{pending_cls}">{shown}</span>' if pending_cls else shown)

    for ttype, value in lexer.get_tokens("\n".join(lines)):
        cls = _token_class(ttype)
        for n, part in enumerate(value.split("\n")):
            if n:
                flush()
                pending_cls, pending = "", ""
                out.append("".join(current))
                current = []
            if not part:
                continue
            if cls == pending_cls:
                pending += part
            else:
                flush()
                pending_cls, pending = cls, part
    flush()
    out.append("".join(current))
    if len(out) < len(lines):  # a lexer that ate newlines: fall back for the rest
        out.extend(escape.text(line) for line in lines[len(out) :])
    return out[: len(lines)]


def highlight_code(code: str, language: str) -> str | None:
    """``code`` highlighted as ``language`` (inner HTML of a ``<code>``), ``None`` if unknown."""
    lexer = lexer_for_language(language)
    if lexer is None:
        return None
    lines = code.removesuffix("\n").split("\n")
    return "\n".join(highlight_lines([clip_line(line) for line in lines], lexer))


@functools.cache
def pygments_css() -> str:
    """Token colours for ``.diff-lines`` and ``.hl``: light, and dark on a dark screen."""

    def rules(style: str) -> str:
        formatter = HtmlFormatter(style=style)
        defs: list[str] = formatter.get_token_style_defs(_SCOPES)  # type: ignore[no-untyped-call]
        return "\n".join(line.split(" /* ", 1)[0] for line in defs)

    return (
        f"@media not screen and (prefers-color-scheme: dark) {{\n{rules(LIGHT_STYLE)}\n}}\n"
        f"@media screen and (prefers-color-scheme: dark) {{\n{rules(DARK_STYLE)}\n}}\n"
    )


# -- diffs -------------------------------------------------------------------------------


class DiffRow(NamedTuple):
    """One row of a diff table (a tuple: a 10,000-call session builds a hundred thousand)."""

    kind: str
    """``add``, ``del``, ``ctx`` or ``hunk``."""
    old: int | None = None
    """0-based index into the old lines (shown 1-based), when the row has one."""
    new: int | None = None
    """0-based index into the new lines, when the row has one."""
    header: str = ""
    """A hunk's ``@@ -a,b +c,d @@``."""


def _range(start: int, length: int) -> str:
    """A unified diff hunk range, as ``diff -u`` prints it."""
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"


def diff_rows(old_lines: Sequence[str], new_lines: Sequence[str]) -> list[DiffRow]:
    """The rows of the unified diff of two line lists (hunk headers included)."""
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines)
    for group in matcher.get_grouped_opcodes(CONTEXT_LINES):
        i1, j1 = group[0][1], group[0][3]
        i2, j2 = group[-1][2], group[-1][4]
        rows.append(DiffRow("hunk", header=f"@@ -{_range(i1, i2 - i1)} +{_range(j1, j2 - j1)} @@"))
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                rows.extend(
                    DiffRow("ctx", a, b) for a, b in zip(range(a1, a2), range(b1, b2), strict=True)
                )
                continue
            if tag in ("replace", "delete"):
                rows.extend(DiffRow("del", old=a) for a in range(a1, a2))
            if tag in ("replace", "insert"):
                rows.extend(DiffRow("add", new=b) for b in range(b1, b2))
    return rows


def _runs(indices: Iterable[int]) -> list[range]:
    """Sorted distinct indices grouped into contiguous ranges."""
    runs: list[range] = []
    start = previous = None
    for index in sorted(set(indices)):
        if previous is not None and index == previous + 1:
            previous = index
            continue
        if start is not None and previous is not None:
            runs.append(range(start, previous + 1))
        start = previous = index
    if start is not None and previous is not None:
        runs.append(range(start, previous + 1))
    return runs


def _highlighted(
    lines: Sequence[str], indices: Iterable[int], lexer: Lexer | None
) -> dict[int, str]:
    shown: dict[int, str] = {}
    for run in _runs(indices):
        html_lines = highlight_lines([clip_line(lines[i]) for i in run], lexer)
        shown.update(zip(run, html_lines, strict=True))
    return shown


def _rows_html(rows: Sequence[DiffRow], old: dict[int, str], new: dict[int, str]) -> str:
    parts = ['<table class="diff-lines">']
    for row in rows:
        if row.kind == "hunk":
            parts.append(
                '<tr class="hunk"><td class="ln ln-old"></td><td class="ln ln-new"></td>'
                f'<td class="code">{escape.text(row.header)}</td></tr>'
            )
            continue
        old_no = "" if row.old is None else str(row.old + 1)
        new_no = "" if row.new is None else str(row.new + 1)
        code = new[row.new] if row.new is not None else old[row.old] if row.old is not None else ""
        parts.append(
            f'<tr class="{row.kind}"><td class="ln ln-old">{old_no}</td>'
            f'<td class="ln ln-new">{new_no}</td><td class="code">{code}</td></tr>'
        )
    parts.append("</table>")
    return "".join(parts)


def diff_html(item: Mapping[str, Any], cwd: str | None) -> str:
    """An ACP ``diff`` content item (``path``, ``oldText`` — ``null`` for a new file —,
    ``newText``) as ``<div class="diff">``: its path relative to ``cwd``, then its rows."""
    path = as_str(item.get("path")) or "?"
    old_text = as_str(item.get("oldText"))
    new_text = as_str(item.get("newText")) or ""
    badge = ' <span class="badge badge-new">new file</span>' if old_text is None else ""
    shown_as = escape.text(shown_path(path, cwd))
    head = f'<div class="diff"><div class="diff-path">{shown_as}{badge}</div>'
    old_lines = [] if old_text is None else text_lines(old_text)
    new_lines = text_lines(new_text)
    rows = diff_rows(old_lines, new_lines)
    if not rows:
        return f'{head}<div class="note">(no changes)</div></div>'
    omitted = len(rows) - HEAD_LINES - TAIL_LINES
    parts = [rows] if omitted <= 0 else [rows[:HEAD_LINES], rows[len(rows) - TAIL_LINES :]]
    lexer = lexer_for_path(path)
    shown = [row for part in parts for row in part]
    old = _highlighted(old_lines, (r.old for r in shown if r.old is not None), lexer)
    new = _highlighted(new_lines, (r.new for r in shown if r.new is not None), lexer)
    body = clipped_note(omitted).join(_rows_html(part, old, new) for part in parts)
    return f"{head}{collapsed(body, len(rows))}</div>"
