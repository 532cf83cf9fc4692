"""What a card mapping knows of its session: a frozen value, so every mapping stays pure."""

from __future__ import annotations

import os
import posixpath

import attrs

from acp_sidecar.values import Value


@attrs.frozen(repr=False, eq=False)
class CardContext(Value):
    """The session facts a card depends on."""

    cwd: str
    """The session's absolute working directory; relative paths resolve against it."""
    terminal_output: bool = False
    """The client advertised ``clientCapabilities._meta.terminal_output: true``."""
    plan_operations: bool = False
    """The client advertised ``clientCapabilities.plan``: plans go out as ``plan_update`` /
    ``plan_removed`` (with ids), not the legacy ``plan``."""


_POSIX = os.path is posixpath


def absolute(path: str, cwd: str) -> str:
    """``path`` made absolute against ``cwd`` and normalised (the wire carries these).

    Exactly ``normpath`` of ``path`` joined to ``cwd``; an absolute path with no ``//``, no
    ``/.`` and no trailing ``/`` is one ``normpath`` would return unchanged, so it is
    returned without the call (most paths of a replayed session are such).
    """
    if not _POSIX:
        return os.path.normpath(path if os.path.isabs(path) else os.path.join(cwd, path))
    if path[:1] == "/":
        full = path
    elif not cwd or cwd[-1] == "/":  # posixpath.join of two str, inlined
        full = cwd + path
    else:
        full = cwd + "/" + path
    if full[:1] == "/" and full[-1] != "/" and "//" not in full and "/." not in full:
        return full
    return posixpath.normpath(full)


def shown_path(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` when it lies inside it, else absolute (for titles)."""
    full = absolute(path, cwd)
    root = os.path.normpath(cwd)
    if full == root:
        return "."
    prefix = root.rstrip(os.sep) + os.sep
    if full.startswith(prefix):
        rest = full[len(prefix) :]
        if rest and os.path.isabs(root) and not rest.startswith(os.sep):
            # Both normalised and absolute: what relpath finds, without its split and join.
            return rest
        return os.path.relpath(full, root)
    return full


def relative_title(title: str, paths: list[str], cwd: str) -> str:
    """``title`` with each absolute in-workspace path in ``paths`` shown relative to ``cwd``."""
    if not paths:
        return title  # a card that names no file (most generic ones)
    if len(paths) == 1:  # a card of one file (most that name any): nothing to order
        ordered = [absolute(paths[0], cwd)]
    else:
        ordered = sorted({absolute(p, cwd) for p in paths}, key=len, reverse=True)
    for path in ordered:
        if path not in title:
            continue  # nothing to replace (most titles already show their paths relative)
        shown = shown_path(path, cwd)
        if shown != path:
            title = title.replace(path, shown)
    return title
