"""Byte searches in a log file by position: linear in the bytes searched, however long a line.

Invariants:
- A search reads with ``os.pread`` (the descriptor's offset is left alone) in blocks of
  :data:`FIRST_BLOCK` bytes, doubling up to :data:`BLOCK` (what is looked for is often near
  where the search starts: a log's last newline is its last byte), consecutive blocks
  overlapping by the needle's length less one; nothing is carried from block to block, so
  memory is one block (and, in :func:`last_line_with`, the one line handed to its
  ``accept``).
- A region that shrinks while it is searched (a log cut back) is searched as far as it goes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Final, TypeVar

BLOCK: Final = 256 * 1024
"""The most bytes read at once."""

FIRST_BLOCK: Final = 4096
"""The bytes a search reads first."""

T = TypeVar("T")


def rfind(fd: int, needle: bytes, start: int, end: int) -> int:
    """Where the last ``needle`` wholly in bytes ``[start, end)`` of the file begins; -1 if none."""
    size, block = len(needle), FIRST_BLOCK
    while end - start >= size:
        low = max(start, end - block)
        found = os.pread(fd, end - low, low).rfind(needle)
        if found >= 0:
            return low + found
        if low == start:
            break
        end = low + size - 1
        block = min(BLOCK, block * 2)
    return -1


def find(fd: int, needle: bytes, start: int, end: int) -> int:
    """Where the first ``needle`` wholly in bytes ``[start, end)`` of the file begins; -1 if
    none."""
    size, block = len(needle), FIRST_BLOCK
    while end - start >= size:
        high = min(end, start + block)
        data = os.pread(fd, high - start, start)
        found = data.find(needle)
        if found >= 0:
            return start + found
        if high == end or len(data) < high - start:
            break
        start = high - size + 1
        block = min(BLOCK, block * 2)
    return -1


def committed_size(fd: int, size: int) -> int:
    """The length of the file up to and including its last ``\\n`` (``size``: its length)."""
    return rfind(fd, b"\n", 0, size) + 1


def last_line_with(
    fd: int, needle: bytes, start: int, end: int, accept: Callable[[bytes], T | None]
) -> T | None:
    """``accept``'s answer for the last line in ``[start, end)`` (whole lines: ``start`` and
    ``end`` are line boundaries) that holds ``needle`` and that it accepts (answers not
    ``None`` for); ``None`` if there is none. Each line ``accept`` is given ends in ``\\n``."""
    while True:
        at = rfind(fd, needle, start, end)
        if at < 0:
            return None
        newline = rfind(fd, b"\n", start, at)
        line_start = start if newline < 0 else newline + 1
        newline = find(fd, b"\n", at + len(needle), end)
        line_end = end if newline < 0 else newline + 1
        answer = accept(os.pread(fd, line_end - line_start, line_start))
        if answer is not None:
            return answer
        end = line_start
