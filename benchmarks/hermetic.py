"""Benchmarks run in a home of their own, as the suite does (:mod:`tests.isolation`): no
config file, model, key or store of the user's reaches a sidecar a benchmark starts.

:func:`isolate_benchmark` must run before a benchmark reads ``os.environ``; within the suite
(already isolated) it does nothing.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def isolate_benchmark() -> None:
    """Isolate this process's environment for its children, once (temporary dirs removed at
    exit)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.isolation import SUITE_CACHE_VARIABLE, isolate

    if SUITE_CACHE_VARIABLE in os.environ:
        return
    root = Path(tempfile.mkdtemp(prefix="acp-sidecar-bench-"))
    atexit.register(shutil.rmtree, root, True)
    isolate(root)
