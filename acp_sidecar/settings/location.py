"""Where the config file is: ``--config``, else ``$ACP_SIDECAR_CONFIG``, else the user config
dir. An explicit path must exist; the default may be absent. Nothing is created here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import attrs
import platformdirs

from acp_sidecar.values import Value

CONFIG_ENV: Final = "ACP_SIDECAR_CONFIG"
"""The environment variable naming the config file."""
CONFIG_NAME: Final = "config.toml"


@attrs.frozen(repr=False, eq=False)
class ConfigLocation(Value):
    """The config file to read, and how it was chosen."""

    path: Path
    """Absolute."""
    explicit: bool
    """Named by ``--config`` or :data:`CONFIG_ENV` (then it must exist)."""

    @property
    def source(self) -> str:
        """How the path was chosen, for messages."""
        return "named explicitly" if self.explicit else "the default location"


def default_config_path() -> Path:
    """``<user config dir>/acp-sidecar/config.toml`` for this platform."""
    return Path(platformdirs.user_config_dir("acp-sidecar", appauthor=False)) / CONFIG_NAME


def config_path(given: str | None = None, env: Mapping[str, str] | None = None) -> ConfigLocation:
    """The config file (see the module invariants); ``env`` defaults to ``os.environ``."""
    if given is None or not given.strip():
        given = (os.environ if env is None else env).get(CONFIG_ENV, "").strip() or None
    if given is None:
        return ConfigLocation(default_config_path(), explicit=False)
    try:
        path = Path(given).expanduser()
    except RuntimeError:  # ~user for no such user: reading it reports "no such file"
        path = Path(given)
    return ConfigLocation(path.absolute(), explicit=True)
