"""The workspace boundary: every path a built-in tool touches is resolved here.

A path is accepted only when its real location lies inside one of the session's roots (unless
``--allow-outside-workspace``). A refusal never says where a link points.
"""

from __future__ import annotations

import os

import attrs

from acp_sidecar.tools.builtin.errors import OutsideWorkspaceError, PathChangedError
from acp_sidecar.tools.context import ToolContext, WorkspaceRoot
from acp_sidecar.tools.errors import ToolArgsError


@attrs.frozen
class WorkspacePath:
    """A path that passed the boundary."""

    path: str
    """Absolute and normalised, symlinks kept: what the editor and the cards are given."""
    real: str
    """Symlinks resolved: what is written on disk (so a symlink stays a symlink)."""
    shown: str
    """Relative to the workspace root when inside it, else absolute: for messages."""
    root: str
    """The workspace root that holds the path (absolute, normalised): the session cwd, or
    the additional root the path lies in; the cwd for a path allowed outside every root."""
    root_real: str
    """That root's real location as the session fixed it: the boundary a walk below the
    path keeps to."""


def is_inside(path: str, root: str) -> bool:
    """Whether normalised absolute ``path`` is ``root`` or lies below it."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def shown_path(path: str, root: str) -> str:
    """``path`` relative to ``root`` when inside it (``"."`` for the root), else as is."""
    if path == root:
        return "."
    if is_inside(path, root):
        return os.path.relpath(path, root)
    return path


def workspace_root(ctx: ToolContext) -> str:
    """The session's workspace root, absolute and normalised."""
    return os.path.normpath(os.path.abspath(ctx.cwd))


def resolve_path(ctx: ToolContext, raw: str, *, param: str = "path") -> WorkspacePath:
    """Resolve a model-given path against the workspace and enforce the boundary.

    Raises:
        ToolArgsError: the path is empty or contains a NUL character (``/param`` names it).
        OutsideWorkspaceError: the path, or what it resolves to, is outside the workspace.
    """
    if not raw:
        raise ToolArgsError([f"/{param}: must not be empty"])
    if "\0" in raw:
        raise ToolArgsError([f"/{param}: must not contain NUL characters"])
    root = workspace_root(ctx)
    full = os.path.normpath(os.path.join(root, raw))
    try:
        real = os.path.realpath(full)
    except OSError as exc:  # a link that stopped being one while it was resolved (EINVAL)
        raise PathChangedError(
            f"{raw} changed while it was being resolved: a directory on its path was replaced "
            "by a symbolic link or back. Nothing was read or written; try again."
        ) from exc
    roots = ctx.roots
    holder = roots[0] if roots else WorkspaceRoot(root, root)
    if not ctx.allow_outside_workspace:
        held = containing_root(real, roots)
        if held is None and is_inside(full, root):
            raise OutsideWorkspaceError(
                f"{raw} resolves through a symbolic link to a place outside the "
                f"workspace ({root}). Only paths inside the workspace can be used."
            )
        if held is None:
            raise OutsideWorkspaceError(
                f"{raw} is outside the workspace ({root}). Only paths inside the workspace "
                "can be used; give a path relative to the workspace root."
            )
        holder = held
    shown = shown_path(full, root)
    return WorkspacePath(full, real, shown, root=holder.path, root_real=holder.real)


def containing_root(real: str, roots: tuple[WorkspaceRoot, ...]) -> WorkspaceRoot | None:
    """The first of ``roots`` whose real location holds the real path ``real``; ``None`` if
    none does."""
    for root in roots:
        if is_inside(real, root.real):
            return root
    return None
