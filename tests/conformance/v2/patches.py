"""A small applier of the single-file ``git_patch`` sections the sidecar sends: the oracle of
the v2 diff tests. It knows unified hunks and Git's "no newline" marker, nothing more, and
checks every context and removed line against the old text."""

from __future__ import annotations

import re

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def apply_patch(old_text: str | None, patch: str) -> str:
    """``old_text`` (``None``: no file) with ``patch``'s hunks applied."""
    old = (old_text or "").splitlines(keepends=True)
    lines = patch.splitlines(keepends=True)
    assert lines[0].startswith("diff --git /"), lines[0]
    out: list[str] = []
    at = 0  # the next old line not copied yet
    for index, line in enumerate(lines):
        if match := HUNK.match(line):
            start = int(match.group(1)) - (0 if match.group(2) == "0" else 1)
            out.extend(old[at:start])
            at = start
        elif line.startswith((" ", "-")) and not line.startswith("--- "):
            assert old[at].rstrip("\n") == line[1:].rstrip("\n"), (old[at], line)
            if line.startswith(" "):
                out.append(old[at])
            at += 1
        elif line.startswith("+") and not line.startswith("+++ "):
            out.append(line[1:])
        elif line.startswith("\\") and lines[index - 1].startswith(("+", " ")):
            out[-1] = out[-1].removesuffix("\n")  # the line before the marker has none
    out.extend(old[at:])
    return "".join(out)
