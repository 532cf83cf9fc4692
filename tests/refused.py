"""A directory the process may not look into, made for tests: as root (CI) no file mode
refuses a stat, so the refusal an ordinary user meets is made at ``os.stat``, where both
``Path.is_dir`` and ``os.path.isdir`` meet it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest


def refuse_stats_under(monkeypatch: pytest.MonkeyPatch, refused: Path) -> None:
    """Make every ``os.stat`` of ``refused`` or a path under it raise ``EACCES``."""
    stat = os.stat

    def refusing(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if isinstance(path, str | os.PathLike) and Path(path).is_relative_to(refused):
            raise PermissionError(13, "Permission denied", str(path))
        return stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", refusing)
