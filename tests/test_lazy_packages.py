"""The packages that load their names on first use still show and give every public name."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(
    "package",
    [
        "acp_sidecar.tools",
        "acp_sidecar.tools.builtin",
        "acp_sidecar.agent.model",
        "acp_sidecar.store",
    ],
)
def test_every_public_name_is_listed_and_resolves(package: str) -> None:
    module = importlib.import_module(package)
    names = module.__all__
    assert set(names) <= set(dir(module))  # listed before they are loaded (autocomplete, pydoc)
    for name in names:
        assert getattr(module, name) is not None
