"""Where session logs live, and which session ids may name one.

Invariants:
- The store directory is, in order: the explicit directory (``--store DIR``), else
  ``$ACP_SIDECAR_STORE``, else ``<user data dir>/acp-sidecar/sessions`` (platformdirs). The
  override names the directory that holds the ``.jsonl`` files itself.
- A session id names a file directly inside that directory and nothing else: ids are 1-128
  characters of ``A-Z a-z 0-9 . _ -`` starting with a letter or digit, so no id (a client
  sends them in ``session/load``) can reach outside the store.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import platformdirs

from acp_sidecar.store.errors import InvalidSessionIdError

STORE_ENV: Final = "ACP_SIDECAR_STORE"
"""The environment variable that overrides the store directory."""

LOG_SUFFIX: Final = ".jsonl"
"""The extension of a session log (``<session id>.jsonl``)."""

EXPORT_SUFFIXES: Final = (".html", ".md")
"""The transcripts a session's ``/export`` writes beside its log (``<session id>.html``,
``<session id>.md``), removed with the session."""

_SESSION_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def default_store_dir() -> Path:
    """``<user data dir>/acp-sidecar/sessions`` for this platform."""
    return Path(platformdirs.user_data_dir("acp-sidecar", appauthor=False)) / "sessions"


def resolve_store_dir(
    directory: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """The store directory (see the module invariants); ``env`` defaults to ``os.environ``.

    The result is absolute; ``~`` is expanded in an override. Nothing is created.
    """
    if directory is None:
        override = (os.environ if env is None else env).get(STORE_ENV, "")
        if not override:
            return default_store_dir()
        directory = override
    return Path(directory).expanduser().absolute()


def is_session_id(session_id: str) -> bool:
    """Whether ``session_id`` may name a log (see the module invariants)."""
    return _SESSION_ID.fullmatch(session_id) is not None


def log_path(directory: Path, session_id: str) -> Path:
    """The log file of ``session_id`` in ``directory``; :class:`InvalidSessionIdError` if it
    may not name one."""
    if not is_session_id(session_id):
        raise InvalidSessionIdError(session_id)
    return directory / f"{session_id}{LOG_SUFFIX}"


def export_path(directory: Path, session_id: str, suffix: str) -> Path:
    """Where ``/export`` writes a session's transcript of ``suffix`` (one of
    :data:`EXPORT_SUFFIXES`): beside its log; :class:`InvalidSessionIdError` as :func:`log_path`."""
    assert suffix in EXPORT_SUFFIXES, suffix
    return log_path(directory, session_id).with_suffix(suffix)
