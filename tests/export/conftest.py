"""Fixtures for the export tests: a headless Chromium (one per module) and a directory that
keeps the screenshots after the run.

The browser fixture skips, with the reason shown, when no Chromium is installed
(``.ci/run`` installs Debian's ``chromium``; ``$CHROMIUM`` names another executable).
Screenshots go to ``$ACP_SIDECAR_ARTIFACTS`` when set, else to ``artifacts/`` under pytest's
base temporary directory; the directory is printed at the end of the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser import Browser, find_chromium

_written: list[Path] = []


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """A running headless Chromium, shared by the tests of one module."""
    executable = find_chromium()
    if executable is None:
        pytest.skip("no Chromium on PATH (apt-get install chromium, or set $CHROMIUM)")
    with Browser(executable) as running:
        yield running


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots are kept (see the module docstring)."""
    named = os.environ.get("ACP_SIDECAR_ARTIFACTS")
    directory = Path(named) if named else tmp_path_factory.getbasetemp() / "artifacts"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def keep_artifact(directory: Path, name: str, data: bytes) -> Path:
    """Write one artifact; it is listed at the end of the run."""
    path = directory / name
    path.write_bytes(data)
    _written.append(path)
    return path


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _written:
        directories = sorted({str(path.parent) for path in _written})
        terminalreporter.write_line(
            f"export: {len(_written)} browser screenshots kept in {', '.join(directories)}"
        )
