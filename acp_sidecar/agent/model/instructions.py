"""The workspace's instructions file (``AGENTS.md`` first, then its kin) for the system prompt.

One file, not all concatenated (they are usually copies). Reading never raises; at most
:data:`MAX_BYTES`; cached per path until its identity, size or mtime changes.
"""

from __future__ import annotations

import logging
import os
import stat
from typing import Final

import attrs

logger = logging.getLogger(__name__)

INSTRUCTION_FILES: Final = (
    "AGENTS.md",
    "CLAUDE.md",
    "GEMINI.md",
    os.path.join(".github", "copilot-instructions.md"),
)
"""The names read, in order of preference, relative to the session root."""

MAX_BYTES: Final = 32 * 1024
"""The most of an instructions file that goes into the system prompt."""


@attrs.frozen
class ProjectInstructions:
    """The instructions the model is given, and where they came from."""

    name: str
    """The file's path relative to the session root (``AGENTS.md``)."""
    text: str
    """Its text, possibly cut (then ending with a note saying so)."""
    truncated: bool = False
    """Whether the file was longer than :data:`MAX_BYTES`."""


_Key = tuple[int, int, int, int]
"""What identifies a file's content for the cache: device, inode, size, mtime (ns)."""


class InstructionsReader:
    """Finds and reads a workspace's instructions file, caching the text (see the module)."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._max_bytes = max_bytes
        self._cache: dict[str, tuple[_Key, ProjectInstructions | None]] = {}
        self._told: dict[str, str] = {}
        """The last reason logged for skipping each path (so it is logged once)."""

    def read(self, root: str) -> ProjectInstructions | None:
        """The instructions for the workspace at ``root`` (``None``: there are none)."""
        for name in INSTRUCTION_FILES:
            found = self._candidate(root, name)
            if found is not None:
                return found
        return None

    def _candidate(self, root: str, name: str) -> ProjectInstructions | None:
        path = os.path.join(root, name)
        try:
            info = os.stat(path)  # follows a symlink: its target is what is read
        except FileNotFoundError:
            self._cache.pop(path, None)
            return None
        except OSError as error:
            self._skip(path, None, f"cannot be examined ({error.strerror or error})")
            return None
        key: _Key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        if not stat.S_ISREG(info.st_mode):
            self._skip(path, key, "is not a regular file")
            return None
        if not _inside(os.path.realpath(path), os.path.realpath(root)):
            self._skip(path, key, "resolves to a file outside the workspace")
            return None
        try:
            with open(path, "rb") as stream:
                data = stream.read(self._max_bytes + 1)
        except OSError as error:
            self._skip(path, key, f"cannot be read ({error.strerror or error})")
            return None
        truncated = len(data) > self._max_bytes
        text = _decode(data[: self._max_bytes], truncated)
        if text is None:
            self._skip(path, key, "is not UTF-8 text")
            return None
        if truncated:
            text = (
                text.rstrip("\n") + f"\n\n[{name} is {info.st_size:,} bytes; only its first "
                f"{self._max_bytes:,} bytes are included here.]"
            )
        found = ProjectInstructions(name=name, text=text, truncated=truncated)
        self._cache[path] = (key, found)
        self._told.pop(path, None)
        logger.info("project instructions: %s (%d bytes%s)", path, len(data), ", cut" * truncated)
        return found

    def _skip(self, path: str, key: _Key | None, reason: str) -> None:
        """Log why ``path`` is not used (once per state of the file) and remember it."""
        if key is not None:
            self._cache[path] = (key, None)
        if self._told.get(path) != reason:
            self._told[path] = reason
            logger.warning("project instructions: %s %s; skipped", path, reason)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _decode(data: bytes, cut: bool) -> str | None:
    """``data`` as UTF-8 (``None`` if it is not); a cut may split the last character, which
    is then dropped rather than counted as a decoding error."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        if cut and error.start >= len(data) - 3 and error.reason == "unexpected end of data":
            return data[: error.start].decode("utf-8", errors="strict")
        return None
