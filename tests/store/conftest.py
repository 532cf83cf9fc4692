"""Shared fixtures for the store tests: a store in a temporary directory (the sample values
they share are in :mod:`tests.store.samples`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acp_sidecar.store import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions", fsync="never")
