"""Editor mentions (``@file``): what a resource link or embedded resource in a prompt names.

Editors send an ``@``-mention as a ``resource_link`` (or, when they embed the content, a
``resource``) whose URI names a file, a directory, or a range of lines: Zed writes a selection
as ``file:///abs/path#L10:20`` (1-based, inclusive) and a directory with a trailing ``/``.

Invariants: parsing is pure and total — any URI gives a :class:`Mention`; only ``file:`` URIs
give a ``path``, and a line range is kept only when it is well formed (``L10``, ``L10:20``,
``L10-20``, ``L10-L20``, with ``1 <= start <= end``).
"""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import unquote, urlsplit

import attrs

_LINES: Final = re.compile(r"L(\d+)(?:[:-]L?(\d+))?")


@attrs.frozen
class Mention:
    """One mentioned resource."""

    uri: str
    """The URI as the editor sent it."""
    path: str | None = None
    """The absolute local path of a ``file:`` URI (``None`` for anything else)."""
    lines: tuple[int, int] | None = None
    """The 1-based, inclusive range of lines the mention selects, if it names one."""
    directory: bool = False
    """The URI names a directory (its path ends with ``/``)."""

    @property
    def shown(self) -> str:
        """How the mention reads inside a command's text: its path, else its URI."""
        return self.uri if self.path is None else self.path


def parse_mention(uri: str) -> Mention:
    """What ``uri`` names (see the module invariants)."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost") or not parts.path:
        return Mention(uri)
    raw = parts.path
    path = unquote(raw)  # POSIX paths, as the rest of the sidecar (urllib.request is heavy)
    directory = raw.endswith("/") and len(raw) > 1
    if directory:
        path = path.rstrip("/")
    return Mention(uri, path=path, lines=_line_range(parts.fragment), directory=directory)


def _line_range(fragment: str) -> tuple[int, int] | None:
    match = _LINES.fullmatch(fragment)
    if match is None:
        return None
    start = int(match.group(1))
    end = int(match.group(2) or start)
    return (start, end) if 1 <= start <= end else None
