"""What is at a path now, as undo compares it: a file's hash (and bytes, when small enough
to keep), or why there is no file to compare. Blocking; run it in a thread."""

from __future__ import annotations

import hashlib
import os
import stat
from typing import Literal, TypeAlias

import attrs

from acp_sidecar.store.blobs import MAX_KEPT

SeenKind: TypeAlias = Literal["file", "absent", "directory", "unreadable", "other"]


@attrs.frozen
class Seen:
    """A path as it was looked at."""

    kind: SeenKind
    sha: str | None = None
    """The file's SHA-256 (``kind == "file"``)."""
    data: bytes | None = attrs.field(default=None, repr=False)
    """The file's bytes, when it is no bigger than :data:`MAX_KEPT`."""

    @property
    def hash(self) -> str | None:
        """What a :class:`~acp_sidecar.store.records.FileChangeRecord` names: the file's hash,
        ``None`` for no file."""
        return self.sha


_CHUNK = 1 << 20


def look(real: str) -> Seen:
    """What is at ``real`` (a path with its links resolved) now."""
    try:
        info = os.stat(real)
    except FileNotFoundError:
        return Seen("absent")
    except OSError:
        return Seen("unreadable")
    if stat.S_ISDIR(info.st_mode):
        return Seen("directory")
    if not stat.S_ISREG(info.st_mode):
        return Seen("other")
    try:
        fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as stream:
            if info.st_size <= MAX_KEPT:
                data = stream.read(MAX_KEPT + 1)
                if len(data) <= MAX_KEPT:
                    return Seen("file", hashlib.sha256(data).hexdigest(), data)
                digest = hashlib.sha256(data)  # it grew meanwhile: too big after all
            else:
                digest = hashlib.sha256()
            while chunk := stream.read(_CHUNK):
                digest.update(chunk)
    except OSError:
        return Seen("unreadable")
    return Seen("file", digest.hexdigest())
