"""Diff hunks for the result cards of ``edit`` and ``write``, and how they are kept in meta.

Invariants:
- A hunk is a changed region with up to :data:`CONTEXT_LINES` unchanged lines around it,
  given as the region's old and new text (whole lines) and its first line on each side.
  Regions whose context would touch are merged, so hunks never overlap.
- :func:`replacement_hunks` is exact and linear: it is given the replaced spans, so it never
  diffs. :func:`text_hunks` diffs two texts line by line (``difflib``), falling back to one
  hunk spanning the first to the last differing line when the texts are too large to diff.
- What goes into meta is bounded: at most :data:`META_TEXT_CAP` characters of diff text, the
  rest dropped with a count (the model-facing text never depends on it).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

import attrs

from acp_sidecar.tools.builtin.files.encoding import printable
from acp_sidecar.tools.presentation import DiffResultView, FileDiff, ToolResult

CONTEXT_LINES = 3
"""Unchanged lines shown around each change."""

META_TEXT_CAP = 256 * 1024
"""Characters of diff text a result keeps in its meta (session logs stay small)."""

_DIFFLIB_MAX_LINES = 20_000
"""Above this many differing lines (both sides together), no line diff is attempted."""


@attrs.frozen
class Hunk:
    """One changed region with its context."""

    old_line: int
    """1-based first line of ``old_text`` in the old file."""
    new_line: int
    """1-based first line of ``new_text`` in the new file."""
    old_text: str
    new_text: str


def _region_start(text: bytes, pos: int, context: int) -> int:
    """The start of the line holding ``pos``, moved back ``context`` lines."""
    start = text.rfind(b"\n", 0, pos) + 1
    for _ in range(context):
        if start == 0:
            break
        start = text.rfind(b"\n", 0, start - 1) + 1
    return start


def _region_end(text: bytes, pos: int, context: int) -> int:
    """The end (past the newline) of the line holding ``pos``, moved on ``context`` lines."""
    size = len(text)
    newline = text.find(b"\n", pos)
    end = size if newline < 0 else newline + 1
    for _ in range(context):
        if end >= size:
            break
        newline = text.find(b"\n", end)
        end = size if newline < 0 else newline + 1
    return end


def _decoded(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def replacement_hunks(
    old: bytes, spans: Sequence[tuple[int, int, bytes]], *, context: int = CONTEXT_LINES
) -> list[Hunk]:
    """The hunks of replacing each ``old[start:end]`` by its bytes, for ``(start, end, new)``
    in ``spans`` (sorted, disjoint) — UTF-8 text, decoded with surrogate escapes.

    Only the regions around the spans are read: the cost is one count of the newlines before
    the last region, however large the file.
    """
    regions: list[tuple[int, int, int, int]] = []  # old_a, old_b, first span, last span
    for index, (start, end, _new) in enumerate(spans):
        a = _region_start(old, start, context)
        b = _region_end(old, max(start, end - 1), context)
        if regions and a <= regions[-1][1]:
            regions[-1] = (regions[-1][0], b, regions[-1][2], index)
        else:
            regions.append((a, b, index, index))
    hunks: list[Hunk] = []
    old_line, counted = 1, 0
    shift = 0  # lines the spans of earlier regions added (or removed, when negative)
    for a, b, first, last in regions:
        old_line += old.count(b"\n", counted, a)
        counted = a
        pieces: list[bytes] = []
        at = a
        for start, end, new in spans[first : last + 1]:
            pieces += (old[at:start], new)
            at = end
        pieces.append(old[at:b])
        hunks.append(
            Hunk(old_line, old_line + shift, _decoded(old[a:b]), _decoded(b"".join(pieces)))
        )
        for start, end, new in spans[first : last + 1]:
            shift += new.count(b"\n") - old.count(b"\n", start, end)
    return hunks


def text_hunks(old: str, new: str, *, context: int = CONTEXT_LINES) -> list[Hunk]:
    """The hunks between two texts (line diff; one coarse hunk when they are too large)."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    limit = min(len(a), len(b))
    prefix = 0
    while prefix < limit and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    if prefix == len(a) == len(b):
        return []
    # Only the differing middle (plus context) is diffed: long equal ends cost nothing.
    lo = max(0, prefix - context)
    hi_a = min(len(a), len(a) - suffix + context)
    hi_b = min(len(b), len(b) - suffix + context)
    if (len(a) - suffix - prefix) + (len(b) - suffix - prefix) > _DIFFLIB_MAX_LINES:
        return [Hunk(lo + 1, lo + 1, "".join(a[lo:hi_a]), "".join(b[lo:hi_b]))]
    matcher = difflib.SequenceMatcher(None, a[lo:hi_a], b[lo:hi_b], autojunk=False)
    hunks: list[Hunk] = []
    for group in matcher.get_grouped_opcodes(context):
        i1, i2 = lo + group[0][1], lo + group[-1][2]
        j1, j2 = lo + group[0][3], lo + group[-1][4]
        hunks.append(Hunk(i1 + 1, j1 + 1, "".join(a[i1:i2]), "".join(b[j1:j2])))
    return hunks


def _cut(text: str, size: int) -> str:
    if len(text) <= size:
        return text
    return text[:size] + f"\n… [{len(text) - size:,} more characters not shown]\n"


@attrs.frozen
class StoredDiffs:
    """Hunks as kept in meta: bounded, printable."""

    hunks: tuple[Hunk, ...]
    omitted: int
    """Hunks dropped to respect :data:`META_TEXT_CAP`."""
    cut: bool
    """A hunk's text was shortened to fit."""


def bounded(hunks: Sequence[Hunk], *, cap: int = META_TEXT_CAP) -> StoredDiffs:
    """The hunks that fit in ``cap`` characters, printable; the first is cut to fit if needed."""
    kept: list[Hunk] = []
    used = 0
    cut = False
    for hunk in hunks:
        size = len(hunk.old_text) + len(hunk.new_text)
        if used + size > cap:
            if kept:
                break
            half = cap // 2
            hunk = attrs.evolve(
                hunk, old_text=_cut(hunk.old_text, half), new_text=_cut(hunk.new_text, half)
            )
            cut = True
            size = cap
        kept.append(
            attrs.evolve(hunk, old_text=printable(hunk.old_text), new_text=printable(hunk.new_text))
        )
        used += size
    return StoredDiffs(tuple(kept), len(hunks) - len(kept), cut)


def diffs_to_meta(stored: StoredDiffs) -> dict[str, Any]:
    """The JSON form of bounded hunks (``hunks``, ``omitted_hunks``, ``cut``)."""
    return {
        "hunks": [
            {
                "old_line": h.old_line,
                "new_line": h.new_line,
                "old_text": h.old_text,
                "new_text": h.new_text,
            }
            for h in stored.hunks
        ],
        "omitted_hunks": stored.omitted,
        "cut": stored.cut,
    }


def file_diffs_from_meta(meta: object) -> list[FileDiff] | None:
    """The diff card's entries from a ``write``/``edit`` result's meta (``None`` if malformed).

    A created file's entry has ``old_text=None`` (the card shows a new file).
    """
    if not isinstance(meta, dict):
        return None
    path, hunks, created = meta.get("path"), meta.get("hunks"), meta.get("created") is True
    if not isinstance(path, str) or not isinstance(hunks, list | tuple):
        return None
    diffs: list[FileDiff] = []
    for hunk in hunks:
        if not isinstance(hunk, dict):
            return None
        old_text, new_text = hunk.get("old_text"), hunk.get("new_text")
        if not isinstance(old_text, str) or not isinstance(new_text, str):
            return None
        diffs.append(FileDiff(path=path, old_text=None if created else old_text, new_text=new_text))
    return diffs


def diff_result_title(verb: str, shown: str, meta: object) -> str | None:
    """A result title when some hunks were left out of meta (``None`` keeps the call's)."""
    if isinstance(meta, dict):
        omitted = meta.get("omitted_hunks")
        if isinstance(omitted, int) and omitted > 0:
            return f"{verb} {shown} ({omitted} more changed region(s) not shown)"
    return None


def diff_result_view(verb: str, path: str, result: ToolResult) -> DiffResultView | None:
    """The completed card of a file mutation (``write``, ``edit``), rebuilt from its meta
    alone (pure: the same on replay); ``None`` for a failed call or unusable meta."""
    if result.is_error:
        return None
    diffs = file_diffs_from_meta(result.meta)
    if diffs is None:
        return None
    return DiffResultView(title=diff_result_title(verb, path, result.meta), diffs=diffs)
