"""Suite-wide fixtures.

Every sidecar the tests start — in process or as a subprocess — keeps its sessions in a
temporary store, never in the user's data directory.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def isolated_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Point ``ACP_SIDECAR_STORE`` at a temporary directory for the whole run."""
    path = str(tmp_path_factory.mktemp("sessions"))
    previous = os.environ.get("ACP_SIDECAR_STORE")
    os.environ["ACP_SIDECAR_STORE"] = path
    yield path
    if previous is None:
        os.environ.pop("ACP_SIDECAR_STORE", None)
    else:
        os.environ["ACP_SIDECAR_STORE"] = previous
