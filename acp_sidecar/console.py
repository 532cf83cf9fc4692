"""The rich console every command writes its report with (never the wire: ``serve``'s
stdout is the protocol).

Invariants:
- In a terminal, text is wrapped between words to the terminal's own size (also where
  ``TERM=dumb`` makes rich assume 80 columns), so the terminal never breaks a line inside a
  word.
- Anywhere else (a pipe, a file) no line is padded with spaces: what rich adds to fill a
  width (tables, indented blocks, Markdown) is taken off as each line is written. Plain text
  is not wrapped at all (each line as long as it is, for the reader to wrap), unless the
  output draws ``frames`` (cards, tables, indented blocks): rich draws those only at a width
  and would cut what does not fit, so their text is wrapped between words at rich's width
  (``$COLUMNS``, else the terminal on stdin or stderr, else 80).
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any, cast

from rich.console import Console


def output_console(file: IO[str] | None = None, *, frames: bool = False, **options: Any) -> Console:
    """A console on ``file`` (default: stdout) that follows the module invariants;
    ``options`` are :class:`~rich.console.Console`'s."""
    target = sys.stdout if file is None else file
    if _is_terminal(target):
        width, height = _size(target)
        return Console(file=target, width=width, height=height, **options)
    # rich only writes, flushes and asks isatty, fileno and encoding.
    unpadded = cast(IO[str], Unpadded(target))
    return Console(file=unpadded, soft_wrap=not frames, **options)


def _is_terminal(file: IO[str]) -> bool:
    try:
        return file.isatty()
    except (AttributeError, ValueError):  # closed, or a file-like object without it
        return False


def _size(file: IO[str]) -> tuple[int | None, int | None]:
    """The terminal's columns and lines (rich takes its own only when given neither)."""
    try:
        size = os.get_terminal_size(file.fileno())
    except (AttributeError, ValueError, OSError):
        return None, None  # rich decides
    return (size.columns or None, size.lines or None)


class Unpadded:
    """A text stream that writes each line to ``target`` without its trailing spaces.

    A line not yet ended is held until its newline or a flush (a prompt ends without one
    and keeps its spaces).
    """

    def __init__(self, target: IO[str]) -> None:
        self._target = target
        self._line = ""

    @property
    def encoding(self) -> str:
        return getattr(self._target, "encoding", None) or "utf-8"

    def write(self, text: str) -> int:
        lines = (self._line + text).split("\n")
        self._line = lines.pop()
        if lines:
            self._target.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._line:
            self._target.write(self._line)
            self._line = ""
        self._target.flush()

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._target.fileno()
