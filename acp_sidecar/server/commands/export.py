"""``/export`` and ``/export md``: the session's transcript written beside its log.

Invariants:
- The file is ``<store>/<session id>.html`` (``.md``), drawn by :mod:`acp_sidecar.export`
  exactly as ``acp-sidecar replay SESSION --html`` (``--markdown``) draws the log as it stands
  when the command runs: every turn before this one, and this one's prompt.
- It is replaced atomically (a second export overwrites the first whole); a failure leaves no
  file behind, nor a partial one, and is the answer. A file it creates is the owner's alone
  (``0600``), as the log beside it is. Anything but a regular file at that name
  (a link, a directory) is left alone and refused.
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Final

from acp_sidecar.protocol.content import ResourceLinkContentBlock
from acp_sidecar.server.commands.base import CommandAnswer, CommandContext

if TYPE_CHECKING:
    from acp_sidecar.agent.toolset import ToolsProvider
    from acp_sidecar.export.command import Format

FORMATS: Final[dict[str, Format]] = {
    "": "html",
    "html": "html",
    "md": "markdown",
    "markdown": "markdown",
}
"""What ``/export`` takes → the export format."""

_MIME_TYPES: Final[dict[Format, str]] = {"html": "text/html", "markdown": "text/markdown"}
_SUFFIXES: Final[dict[Format, str]] = {"html": ".html", "markdown": ".md"}


async def export(context: CommandContext) -> CommandAnswer:
    """Write the transcript (see the module invariants) and answer with a link to it."""
    fmt = FORMATS.get(context.argument.lower())
    if fmt is None:
        return CommandAnswer(
            f"`/export` writes HTML, or Markdown with `/export md`; it does not know "
            f"`{context.argument}`."
        )
    session = context.session
    recorder = session.recorder
    store = context.connection.store
    if recorder is None or store is None:
        return CommandAnswer(
            "This session is not stored (the sidecar runs without a session store), so it "
            "has no transcript to export."
        )
    from acp_sidecar.store.paths import export_path

    recorder.flush()  # the log holds everything said so far, this prompt included
    log = store.path_of(session.session_id)
    target = export_path(store.directory, session.session_id, _SUFFIXES[fmt])
    try:
        size = await asyncio.to_thread(_write, log, target, fmt, context.connection.tools)
    except (OSError, ValueError) as exc:  # StoreError is a ValueError
        return CommandAnswer(f"The transcript could not be written ({exc}); nothing was written.")
    kind = "HTML" if fmt == "html" else "Markdown"
    link = ResourceLinkContentBlock(
        name=target.name,
        uri=target.as_uri(),
        title=f"{kind} transcript of this session",
        mime_type=_MIME_TYPES[fmt],
        size=size,
    )
    return CommandAnswer(f"Exported this session as {kind} to `{target}`.", links=(link,))


def _write(log: Path, target: Path, fmt: Format, tools: ToolsProvider) -> int:
    """Write the export of ``log`` to ``target`` (in a worker thread: it reads the whole
    log), its cards drawn by the server's tools as the command line's are; its size."""
    from acp_sidecar.export.command import write_export
    from acp_sidecar.export.source import StoredSession

    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise OSError(f"{target} is there and is not a regular file")
    with StoredSession(log, tools.registry.get) as stored:
        written = write_export(stored, fmt, str(target), private=True)
    assert written is not None
    return written.stat().st_size
