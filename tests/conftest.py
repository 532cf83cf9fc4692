"""Suite-wide set-up.

Before anything is collected, this process's environment is isolated (:mod:`tests.isolation`):
a temporary home, config, data and state directory and session store, and none of the user's
``ACP_SIDECAR_*``, ``OPENAI_*`` or ``*_API_KEY`` variables. Every sidecar the tests start, in
process or as a subprocess, therefore reads no config file of the user's and keeps its
sessions in the temporary store.
"""

from __future__ import annotations

import shutil
import signal
import tempfile
from pathlib import Path
from types import FrameType

import pytest

from tests.isolation import isolate

_roots: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    _roots.append(Path(tempfile.mkdtemp(prefix="acp-sidecar-tests-")))
    isolate(_roots[-1])
    # A run stopped from outside (CI's time limit, `timeout`) still ends with its summary:
    # SIGTERM interrupts the test under way the way Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)


def pytest_unconfigure(config: pytest.Config) -> None:
    for root in _roots:
        shutil.rmtree(root, ignore_errors=True)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"stopped by signal {signum}")
