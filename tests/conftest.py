"""Suite-wide fixtures.

Every sidecar the tests start — in process or as a subprocess — keeps its sessions in a
temporary store, never in the user's data directory, and reads no config file of the user's:
the user config directory is an empty temporary one and ``ACP_SIDECAR_CONFIG`` is unset.
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


@pytest.fixture(autouse=True, scope="session")
def isolated_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Point the user config directory (``XDG_CONFIG_HOME``) at an empty temporary one and
    unset ``ACP_SIDECAR_CONFIG`` for the whole run."""
    path = str(tmp_path_factory.mktemp("config"))
    saved = {name: os.environ.get(name) for name in ("XDG_CONFIG_HOME", "ACP_SIDECAR_CONFIG")}
    os.environ["XDG_CONFIG_HOME"] = path
    os.environ.pop("ACP_SIDECAR_CONFIG", None)
    yield path
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
