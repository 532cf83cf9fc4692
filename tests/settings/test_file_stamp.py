"""``file_stamp`` (``os.access`` first, for a file that is not there) against the plain
``stat`` it stands for: the same stamp, ``None`` or exception for every kind of path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from acp_sidecar.settings.reading import file_stamp


def stat_stamp(path: Path | str) -> tuple[int, int, int, int] | None:
    """The general path: one ``stat``, ``None`` where it fails."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def outcome(function: Any, path: Path | str) -> Any:
    try:
        return ("value", function(path))
    except Exception as exc:  # the outcome compared is any exception
        return ("raised", type(exc), str(exc))


def paths(tmp_path: Path) -> list[Path | str]:
    (tmp_path / "file.toml").write_text("rules = []\n")
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "dir").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "file.toml")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    found: list[Path | str] = []
    for name in ["file.toml", "empty", "dir", "link", "dangling", "loop", "missing"]:
        found += [tmp_path / name, str(tmp_path / name)]
    found += [
        tmp_path / "file.toml" / "below",  # a file as a directory: ENOTDIR
        tmp_path / "missing" / "below",
        str(tmp_path / ("x" * 300)),  # ENAMETOOLONG
        "/" + "a/" * 3000,
        "",
        "a\0b",
        Path("a\0b"),
        tmp_path,
    ]
    return found


def test_file_stamp_is_the_stat_stamp(tmp_path: Path) -> None:
    for path in paths(tmp_path):
        assert outcome(file_stamp, path) == outcome(stat_stamp, path), path


def test_file_stamp_sees_a_file_appear_change_and_go(tmp_path: Path) -> None:
    path = tmp_path / "rules.toml"
    assert file_stamp(path) is None
    path.write_text("a")
    first = file_stamp(path)
    assert first is not None and first == stat_stamp(path)
    path.write_text("ab")
    assert file_stamp(path) == stat_stamp(path) != first
    path.unlink()
    assert file_stamp(path) is None


def test_a_directory_that_cannot_be_searched_is_as_stat_finds_it(tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "file").write_text("a")
    closed.chmod(0)
    try:
        assert outcome(file_stamp, closed / "file") == outcome(stat_stamp, closed / "file")
    finally:
        closed.chmod(0o700)
