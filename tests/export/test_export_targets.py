"""Where ``replay --html`` / ``--markdown`` write: OUT, stdout for ``-``, else
``<session-id>.html|.md`` in the current directory; the path written is named on stderr and
nothing but the document reaches stdout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.export.sessions import write_sample_session


def _replay(log: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        [sys.executable, "-m", "acp_sidecar", "replay", str(log), *args],
        capture_output=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )
    if done.returncode == 2 and args[0].encode() in done.stderr:
        pytest.skip(f"replay {args[0]} is not on this branch yet")
    return done


def test_html_goes_to_out_to_stdout_or_beside_us(tmp_path: Path) -> None:
    option, suffix, start = "--html", "html", b"<!doctype html"
    log = write_sample_session(tmp_path / "sessions")
    here = tmp_path / "here"
    here.mkdir()

    named = _replay(log, option, str(tmp_path / f"out.{suffix}"), cwd=here)
    assert named.returncode == 0, named.stderr.decode()
    assert named.stdout == b""
    written = (tmp_path / f"out.{suffix}").read_bytes()
    assert str(tmp_path / f"out.{suffix}") in named.stderr.decode()

    piped = _replay(log, option, "-", cwd=here)
    assert piped.returncode == 0, piped.stderr.decode()
    assert piped.stdout.lower().startswith(start) and written.lower().startswith(start)
    assert piped.stdout == written, "the same document, wherever it goes"
    assert list(here.iterdir()) == []

    default = _replay(log, option, cwd=here)
    assert default.returncode == 0, default.stderr.decode()
    assert default.stdout == b""
    assert (here / f"sample.{suffix}").read_bytes() == written
    assert f"sample.{suffix}" in default.stderr.decode()


def test_markdown_goes_to_stdout_or_beside_us(tmp_path: Path) -> None:
    log = write_sample_session(tmp_path / "sessions")
    piped = _replay(log, "--markdown", "-", cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr.decode()
    assert b"Fix the failing test" in piped.stdout
    default = _replay(log, "--markdown", cwd=tmp_path)
    assert default.returncode == 0, default.stderr.decode()
    assert default.stdout == b""
    assert (tmp_path / "sample.md").read_bytes() == piped.stdout
