"""The environment the suite and every process it starts run in: a home of their own.

:func:`isolate` is applied to this process before collection (``tests/conftest.py``), so a
child that inherits ``os.environ`` inherits the isolation; a child given a trimmed environment
(the ACP SDK keeps only ``HOME``, ``PATH``, … of its parent) gets :func:`child_variables`
added. Nothing the user configured — a config file, a model or a key in the shell — reaches a
sidecar the suite starts, and nothing is written to the user's home.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Final

SCRUBBED_PREFIXES: Final = ("ACP_SIDECAR_", "OPENAI_")
"""The sidecar's own settings and the endpoint's: never inherited from the user's shell."""

PLACES: Final = {
    "HOME": "home",
    "XDG_CONFIG_HOME": "home/.config",
    "XDG_DATA_HOME": "home/.local/share",
    "XDG_CACHE_HOME": "home/.cache",
    "XDG_STATE_HOME": "home/.local/state",
    "ACP_SIDECAR_STORE": "sessions",
}
"""Where each of the user's directories points instead, relative to the isolation's root."""

SUITE_CACHE_VARIABLE: Final = "ACP_SIDECAR_TEST_CACHE"
"""Names the suite's own download cache (npm packages of the MCP peers); default below."""


def scrubbed(name: str) -> bool:
    """Whether the variable ``name`` of the user's environment is kept from the suite."""
    return name.startswith(SCRUBBED_PREFIXES) or name.endswith("_API_KEY")


def isolated_environment(root: Path, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` without the user's sidecar and endpoint settings, and with the home, the XDG
    directories and the session store inside ``root`` (created)."""
    env = {name: value for name, value in base.items() if not scrubbed(name)}
    for name, place in PLACES.items():
        path = root / place
        path.mkdir(parents=True, exist_ok=True)
        env[name] = str(path)
    return env


def isolate(root: Path, environ: MutableMapping[str, str] = os.environ) -> None:
    """Replace ``environ`` by its :func:`isolated_environment`; the suite's download cache is
    fixed first, from the home the suite was started in (it holds only what the suite
    fetched)."""
    if SUITE_CACHE_VARIABLE not in environ:
        cache = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME", root)) / ".cache")
        environ[SUITE_CACHE_VARIABLE] = str(Path(cache) / "acp-sidecar-tests")
    isolated = isolated_environment(root, environ)
    isolated[SUITE_CACHE_VARIABLE] = environ[SUITE_CACHE_VARIABLE]
    environ.clear()
    environ.update(isolated)


COVERAGE_VARIABLE: Final = "COVERAGE_PROCESS_CONFIG"
"""Set by coverage's ``patch = subprocess`` in a measured run: a child that keeps it is measured."""


def child_variables(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The isolating variables, for a child whose environment is built from a few names (and
    coverage's, in a measured run)."""
    return {name: environ[name] for name in (*PLACES, COVERAGE_VARIABLE) if name in environ}


def suite_cache() -> Path:
    """The suite's download cache (see :func:`isolate`)."""
    return Path(os.environ[SUITE_CACHE_VARIABLE])
