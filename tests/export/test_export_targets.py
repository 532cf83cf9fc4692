"""Where ``replay --html`` / ``--markdown`` write: OUT, stdout for ``-``, else
``<session-id>.html|.md`` in the current directory; the path written is named on stderr and
nothing but the document reaches stdout."""

from __future__ import annotations

from pathlib import Path

from tests.export.sessions import write_sample_session
from tests.in_process import Ran, run_cli


def _replay(log: Path, *args: str, cwd: Path) -> Ran:
    return run_cli("replay", str(log), *args, cwd=cwd)


def test_html_goes_to_out_to_stdout_or_beside_us(tmp_path: Path) -> None:
    option, suffix, start = "--html", "html", b"<!doctype html"
    log = write_sample_session(tmp_path / "sessions")
    here = tmp_path / "here"
    here.mkdir()

    named = _replay(log, option, str(tmp_path / f"out.{suffix}"), cwd=here)
    assert named.returncode == 0, named.stderr
    assert named.stdout_bytes == b""
    written = (tmp_path / f"out.{suffix}").read_bytes()
    assert str(tmp_path / f"out.{suffix}") in named.stderr

    piped = _replay(log, option, "-", cwd=here)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout_bytes.lower().startswith(start) and written.lower().startswith(start)
    assert piped.stdout_bytes == written, "the same document, wherever it goes"
    assert list(here.iterdir()) == []

    default = _replay(log, option, cwd=here)
    assert default.returncode == 0, default.stderr
    assert default.stdout_bytes == b""
    assert (here / f"sample.{suffix}").read_bytes() == written
    assert f"sample.{suffix}" in default.stderr


def test_markdown_goes_to_stdout_or_beside_us(tmp_path: Path) -> None:
    log = write_sample_session(tmp_path / "sessions")
    piped = _replay(log, "--markdown", "-", cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert b"Fix the failing test" in piped.stdout_bytes
    default = _replay(log, "--markdown", cwd=tmp_path)
    assert default.returncode == 0, default.stderr
    assert default.stdout_bytes == b""
    assert (tmp_path / "sample.md").read_bytes() == piped.stdout_bytes
