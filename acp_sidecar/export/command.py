"""``acp-sidecar replay SESSION --html|--markdown [OUT]``: write the export.

Written atomically (a failed export leaves an earlier file intact); a file replaced keeps its
permissions. stdout is the document's alone; the path written goes to stderr.
"""

from __future__ import annotations

import io
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TextIO, TypeAlias

from acp_sidecar.export.source import StoredSession

Format: TypeAlias = Literal["html", "markdown"]

SUFFIXES: dict[Format, str] = {"html": ".html", "markdown": ".md"}


def default_output(session_id: str, fmt: Format) -> Path:
    """Where an export goes when no ``OUT`` is named."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id).lstrip(".")
    return Path((safe or "session") + SUFFIXES[fmt])


def _writer(fmt: Format) -> Callable[[StoredSession, TextIO], None]:
    from acp_sidecar import __version__

    generator = f"acp-sidecar {__version__}"
    if fmt == "html":
        from acp_sidecar.export.html import write_html

        return lambda session, out: write_html(session, out, generator=generator)
    from acp_sidecar.export.markdown import write_markdown

    return lambda session, out: write_markdown(session, out, generator=generator)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_export(
    session: StoredSession, fmt: Format, out: str, *, private: bool = False
) -> Path | None:
    """Write ``session`` as ``fmt`` to ``out`` (see the module invariants): the path written,
    or ``None`` for stdout. ``private``: a file created is the owner's alone (``0600``, as
    the session logs are), not the umask's.

    Raises:
        OSError: the file could not be written (nothing was left behind).
    """
    write = _writer(fmt)
    if out == "-":
        stream = io.TextIOWrapper(
            sys.stdout.buffer, encoding="utf-8", errors="replace", newline="\n"
        )
        try:
            write(session, stream)
            stream.flush()
        finally:
            stream.detach()
        return None
    target = Path(out) if out else default_output(session.heading.session_id, fmt)
    if out and target.is_dir():
        target = target / default_output(session.heading.session_id, fmt)
    target = Path(os.path.realpath(target))  # a link is followed, never replaced by a file
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):  # a pipe or a device: written as it is
        with open(target, "w", encoding="utf-8", errors="replace", newline="\n") as handle:
            write(session, handle)
        return target
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with open(fd, "w", encoding="utf-8", errors="replace", newline="\n") as handle:
            write(session, handle)
        created = 0o600 if private else 0o666 & ~_umask()
        os.chmod(temporary, stat.S_IMODE(mode) if mode is not None else created)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
