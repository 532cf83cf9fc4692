"""The errors the built-in tools end in, each with a stable code (part of the public contract).

No ``OSError`` escapes a built-in tool: each expected failure is one of these, naming the path
as the model gave it.
"""

from __future__ import annotations

from typing import ClassVar

from acp_sidecar.tools.errors import ToolError


class OutsideWorkspaceError(ToolError):
    """A path leaves the workspace (``..``, an absolute path elsewhere, a symlink out)."""

    code: ClassVar[str] = "OUTSIDE_WORKSPACE"


class PathNotFoundError(ToolError):
    """The file or directory does not exist."""

    code: ClassVar[str] = "NOT_FOUND"


class IsDirectoryError(ToolError):
    """A directory where a file is expected."""

    code: ClassVar[str] = "IS_DIRECTORY"


class NotDirectoryError(ToolError):
    """A file where a directory is expected (a ``cwd``, a search root, a parent)."""

    code: ClassVar[str] = "NOT_A_DIRECTORY"


class BinaryFileError(ToolError):
    """The file holds binary data (a NUL byte in its first 8 KiB, and no UTF-16/32 BOM)."""

    code: ClassVar[str] = "BINARY_FILE"


class PermissionDeniedError(ToolError):
    """The operating system refused access."""

    code: ClassVar[str] = "PERMISSION_DENIED"


class FileTooLargeError(ToolError):
    """The file is larger than the tool handles in one piece."""

    code: ClassVar[str] = "FILE_TOO_LARGE"


class FileIOError(ToolError):
    """Any other I/O failure; the message carries the OS error. Nothing was changed."""

    code: ClassVar[str] = "IO_ERROR"


class PathChangedError(ToolError):
    """A directory on the path became a symbolic link (or moved) after the path was checked."""

    code: ClassVar[str] = "PATH_CHANGED"


class FileChangedError(ToolError):
    """The file changed on disk between the tool reading it and replacing it."""

    code: ClassVar[str] = "FILE_CHANGED"


class EditorFileError(ToolError):
    """The editor failed a ``fs/read_text_file`` or ``fs/write_text_file`` request."""

    code: ClassVar[str] = "EDITOR_FS_FAILED"


class NoMatchError(ToolError):
    """``edit``: ``old_string`` does not occur in the file."""

    code: ClassVar[str] = "NO_MATCH"


class AmbiguousMatchError(ToolError):
    """``edit``: ``old_string`` occurs more than once and ``replace_all`` is not set."""

    code: ClassVar[str] = "AMBIGUOUS_MATCH"


class NoChangeError(ToolError):
    """``edit``: ``old_string`` equals ``new_string``."""

    code: ClassVar[str] = "NO_CHANGE"


class InvalidRegexError(ToolError):
    """``grep``: the pattern is not a valid (Python ``re``) regular expression."""

    code: ClassVar[str] = "INVALID_REGEX"


class PatternTooSlowError(ToolError):
    """``grep``: the pattern backtracks catastrophically (it timed out on several lines)."""

    code: ClassVar[str] = "PATTERN_TOO_SLOW"


class SpawnError(ToolError):
    """``bash``: the shell could not be started."""

    code: ClassVar[str] = "SPAWN_FAILED"
