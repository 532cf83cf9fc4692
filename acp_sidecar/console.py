"""The rich console every command writes its report with (never the wire: ``serve``'s stdout).

In a terminal, text wraps between words at the terminal's size; elsewhere no line is padded,
and plain text is not wrapped unless the output draws ``frames``.
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
        # Line by line, not joined: when a pipe's reader leaves during one large write,
        # CPython can return as if all of it were written, and `replay | head` ended with 0.
        for line in lines:
            self._target.write(line.rstrip(" ") + "\n")
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
