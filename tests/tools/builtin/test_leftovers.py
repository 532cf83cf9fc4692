"""The temporaries of atomic writes: their names, which are stale, and when a directory is
cleaned."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from acp_sidecar.tools.builtin.files import atomic, leftovers
from acp_sidecar.tools.builtin.files.paths import WorkspacePath


def target(directory: Path, name: str) -> WorkspacePath:
    real = os.path.realpath(directory)
    path = os.path.join(real, name)
    return WorkspacePath(path, path, name, real, real)


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def test_a_name_with_a_huge_pid_breaks_no_write(tmp_path: Path) -> None:
    """As found: os.kill raised OverflowError (not OSError) and every write there failed."""
    for name in (".x.99999999999-abcdef012345.tmp", ".y.9999999999-abcdef012345.tmp"):
        (tmp_path / name).write_text("")
        age(tmp_path / name, leftovers.DEAD_PID_SECONDS + 60)
    leftovers.forget_cleanings()
    atomic.atomic_write(target(tmp_path, "a.txt"), b"hello")
    assert (tmp_path / "a.txt").read_bytes() == b"hello"
    assert (tmp_path / ".x.99999999999-abcdef012345.tmp").exists()  # not of our pattern


def test_a_fresh_temporary_of_a_pid_not_alive_here_is_kept(tmp_path: Path) -> None:
    """As found: another machine's (NFS) or container's live temporary was deleted at once."""
    fresh = tmp_path / f".big.bin.{dead_pid()}-0123456789ab.tmp"
    fresh.write_bytes(b"half written")
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        assert leftovers.clean(fd) == 0
        assert fresh.exists()
        age(fresh, leftovers.DEAD_PID_SECONDS + 60)  # untouched for long: its writer is gone
        assert leftovers.clean(fd) == 1
    finally:
        os.close(fd)
    assert not fresh.exists()


@pytest.mark.parametrize("character", ["é", "日", "😀"])
def test_a_long_non_ascii_name_can_be_written(tmp_path: Path, character: str) -> None:
    """As found: the temporary kept 200 *characters*, 400+ bytes, over the 255-byte limit."""
    name = character * (250 // len(character.encode()))
    atomic.atomic_write(target(tmp_path, name), b"hello")
    assert (tmp_path / name).read_bytes() == b"hello"
    assert os.listdir(tmp_path) == [name]


def test_a_directory_is_listed_at_most_once_a_minute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As found: every write listed its whole directory (42 ms a write among 100k files)."""
    listed: list[int] = []
    real_clean = leftovers.clean

    def counting(fd: int) -> int:
        listed.append(fd)
        return real_clean(fd)

    monkeypatch.setattr(leftovers, "clean", counting)
    leftovers.forget_cleanings()
    (tmp_path / "sub").mkdir()
    for i in range(5):
        atomic.atomic_write(target(tmp_path, f"f{i}.txt"), b"x")
    atomic.atomic_write(target(tmp_path / "sub", "g.txt"), b"x")
    assert len(listed) == 2  # once per directory
    leftovers.forget_cleanings()
    atomic.atomic_write(target(tmp_path, "f0.txt"), b"y")
    assert len(listed) == 3
