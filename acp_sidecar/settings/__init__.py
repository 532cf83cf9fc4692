"""The config file: where it is, what it may hold, reading it and writing it.

Options win over variables, variables over the file. :mod:`.writing` is not imported here: it
loads tomlkit, which serving never needs.
"""

from acp_sidecar.settings.keys import KEYS, KEYS_BY_NAME, MODEL_INFO, MODEL_INFO_KEYS, Key
from acp_sidecar.settings.location import (
    CONFIG_ENV,
    ConfigLocation,
    config_path,
    default_config_path,
)
from acp_sidecar.settings.reading import (
    ConfigError,
    FileSettings,
    Problem,
    file_stamp,
    read_settings,
)

__all__ = [
    "CONFIG_ENV",
    "KEYS",
    "KEYS_BY_NAME",
    "MODEL_INFO",
    "MODEL_INFO_KEYS",
    "ConfigError",
    "ConfigLocation",
    "FileSettings",
    "Key",
    "Problem",
    "config_path",
    "default_config_path",
    "file_stamp",
    "read_settings",
]
