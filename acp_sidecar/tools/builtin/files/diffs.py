"""Diff hunks for the cards of ``edit`` and ``write``, and how they are kept in meta.

Hunks never overlap; :func:`replacement_diffs` is linear and keeps nothing per occurrence;
meta holds at most :data:`META_TEXT_CAP` characters of diff text.
"""

from __future__ import annotations

import codecs
import difflib
import re
from collections.abc import Iterator, Sequence
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

_DECODE_CHUNK = 1 << 20
"""Bytes decoded at a time to measure a text too long to keep."""


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


def _regions(needle: bytes, context: int) -> re.Pattern[bytes]:
    """Matches one changed region's occurrences of ``needle``, from its first to its last.

    Two occurrences share a region when their context windows touch: when at most
    ``2 * context + 1`` newlines lie between the last byte of one and the start of the next.
    The next occurrence is looked for on the rest of the line, then on each following line in
    turn (lazily), so it is the first one, as ``bytes.replace`` finds them.
    """
    lines = 2 * context + 1 - needle.endswith(b"\n")  # a needle's own newline counts
    found = re.escape(needle)
    return re.compile(found + rb"(?:(?:[^\n]*\n){0,%d}?[^\n]*?" % lines + found + rb")*+")


def _each_region(data: bytes, needle: bytes, context: int) -> Iterator[re.Match[bytes]]:
    """The changed regions of replacing ``needle`` in ``data``, in order: each found with
    ``bytes.find`` (far faster than a regular expression's scan over what lies between) and
    followed to its last occurrence with :func:`_regions`."""
    region = _regions(needle, context)
    at = data.find(needle)
    while at >= 0:
        match = region.match(data, at)
        assert match is not None  # it starts with the occurrence found at ``at``
        yield match
        at = data.find(needle, match.end())


def replacement_diffs(
    before: bytes,
    old: bytes,
    new: bytes,
    *,
    after: bytes | None = None,
    context: int = CONTEXT_LINES,
    cap: int = META_TEXT_CAP,
) -> StoredDiffs:
    """The hunks of ``before.replace(old, new)`` (every occurrence; UTF-8 text, decoded with
    surrogate escapes), bounded as :func:`bounded` bounds them.

    Only the regions that fit in ``cap`` are decoded; the rest are counted. The regions
    hold whole occurrences, so each one's new text is its old text replaced, or, when the
    caller already made the new content (``after``), a slice of it at an offset known from
    the occurrences before it (a region of the whole file is then not replaced twice).
    """
    grow, lines_grow = len(new) - len(old), new.count(b"\n") - old.count(b"\n")
    kept: list[Hunk] = []
    used = total = replaced = 0
    cut = full = False
    old_line, counted = 1, 0
    for match in _each_region(before, old, context):
        total += 1
        if full:
            continue  # only counted
        a = _region_start(before, match.start(), context)
        b = _region_end(before, match.end() - 1, context)
        inside = before.count(old, match.start(), match.end())
        old_line += before.count(b"\n", counted, a)
        counted = a
        new_line = old_line + replaced * lines_grow
        start = a + replaced * grow
        replaced += inside
        old_text, old_size = _bounded_text(before, a, b, cap)
        if after is None:
            new_text, new_size = _bounded_text(before[a:b].replace(old, new), 0, None, cap)
        else:
            new_text, new_size = _bounded_text(after, start, b + replaced * grow, cap)
        size = old_size + new_size
        if used + size > cap:
            if kept:
                full = True
                continue
            old_text, new_text = (
                _cut(old_text, cap // 2, old_size),
                _cut(new_text, cap // 2, new_size),
            )
            size, cut = cap, True
        kept.append(Hunk(old_line, new_line, printable(old_text), printable(new_text)))
        used += size
        full = used >= cap  # a hunk holds at least one character: no other one fits
    return StoredDiffs(tuple(kept), total - len(kept), cut)


def _bounded_text(data: bytes, start: int, end: int | None, cap: int) -> tuple[str, int]:
    """``data[start:end]`` decoded, and its length in characters; a text longer than ``cap``
    (which cannot be kept whole) comes back as its first ``cap`` characters only, so a
    region of the whole file is never held decoded."""
    end = len(data) if end is None else end
    if end - start <= cap:
        text = _decoded(data[start:end])
        return text, len(text)
    decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    head, size = "", 0
    for at in range(start, end, _DECODE_CHUNK):
        piece = decoder.decode(
            data[at : min(at + _DECODE_CHUNK, end)], final=at + _DECODE_CHUNK >= end
        )
        if len(head) < cap:
            head += piece[: cap - len(head)]
        size += len(piece)
    return head, size


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


def _cut(text: str, size: int, length: int | None = None) -> str:
    """``text`` (of ``length`` characters, when only its start is given) cut at ``size``."""
    length = len(text) if length is None else length
    if length <= size:
        return text
    return text[:size] + f"\n… [{length - size:,} more characters not shown]\n"


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
