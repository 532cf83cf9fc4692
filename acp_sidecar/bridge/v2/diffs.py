"""A v1 diff (a file's old and new text) in v2's form: the change and a ``git_patch``.

Invariant: the patch, applied to the old text, gives the new text exactly; its paths are
absolute with no ``a/``/``b/`` prefix, and ``/dev/null`` names a new file's old side.
"""

from __future__ import annotations

import difflib

from acp_sidecar.protocol.tool_call import ToolCallDiff as V1Diff
from acp_sidecar.protocol.v2.tool_call import DiffChange, DiffPatch, ToolCallDiff

NO_NEWLINE = "\\ No newline at end of file\n"


def diff_of(diff: V1Diff) -> ToolCallDiff:
    """The v2 card content of one file's change."""
    added = diff.old_text is None
    change = DiffChange(operation="add" if added else "modify", path=diff.path)
    return ToolCallDiff(
        changes=[change], patch=DiffPatch(text=git_patch(diff.path, diff.old_text, diff.new_text))
    )


def git_patch(path: str, old_text: str | None, new_text: str) -> str:
    """A ``diff --git`` section turning ``old_text`` (``None``: no file) into ``new_text``."""
    head = [f"diff --git {path} {path}\n"]
    if old_text is None:
        head.append("new file mode 100644\n")
    old_lines = (old_text or "").splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    hunks = list(
        difflib.unified_diff(
            old_lines, new_lines, "/dev/null" if old_text is None else path, path, n=3
        )
    )
    return "".join(head + [_marked(line) for line in hunks])


def _marked(line: str) -> str:
    """A patch line, with Git's marker after a last line that has no newline."""
    return line if line.endswith("\n") else line + "\n" + NO_NEWLINE
