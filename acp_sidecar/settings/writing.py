"""Writing the config file: ``configure`` updates it, keeping comments, layout and other keys.

Written whole to a 0600 temporary, synced, renamed over (never a moment where the key is in a
readable file); read back first, so nothing :func:`read_settings` would refuse is written.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import tomlkit

from acp_sidecar.settings.keys import KEYS, MODEL_INFO
from acp_sidecar.settings.location import ConfigLocation
from acp_sidecar.settings.reading import FileSettings, read_settings

HEADER = (
    "acp-sidecar configuration (written by `acp-sidecar configure`; edit freely).\n"
    "Command-line options and environment variables win over this file.\n"
    "Keys: see `acp-sidecar --help` and the README."
)


def _toml_value(value: object) -> object:
    if isinstance(value, tuple):
        return list(value)
    return value


def render_settings(
    current: str,
    changes: Mapping[str, object | None],
    model_info: Mapping[str, Mapping[str, object] | None] | None = None,
) -> str:
    """The text of a config file: ``current`` with ``changes`` (top-level keys) and
    ``model_info`` (per model: its settings, replacing the old table; ``None`` removes it)."""
    document = tomlkit.parse(current) if current.strip() else tomlkit.document()
    if not current.strip():
        for line in HEADER.splitlines():
            document.add(tomlkit.comment(line))
        document.add(tomlkit.nl())
    order = [key.name for key in KEYS]
    for name in sorted(changes, key=lambda n: order.index(n) if n in order else len(order)):
        value = changes[name]
        if value is None:
            document.pop(name, None)
        else:
            document[name] = _toml_value(value)  # tomlkit keeps it before the tables
    if model_info:
        tables = document.get(MODEL_INFO)
        if tables is None:
            tables = tomlkit.table(is_super_table=True)
            document[MODEL_INFO] = tables
        for model, settings in model_info.items():
            if settings is None:
                tables.pop(model, None)
                continue
            table = tomlkit.table()
            for setting, value in settings.items():
                table[setting] = _toml_value(value)
            tables[model] = table
    return tomlkit.dumps(document)


def replace_whole(path: Path, text: str, mode: int, check: Callable[[Path], object]) -> None:
    """Replace the file at ``path`` with ``text`` as the module docstring says (file mode
    ``mode``); ``check`` reads the temporary first and raises to leave the old file in place.

    Raises:
        OSError: the directory or the file cannot be written (the old file is intact).
    """
    path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(handle, mode)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        check(Path(temporary))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def save_settings(
    path: Path,
    changes: Mapping[str, object | None],
    model_info: Mapping[str, Mapping[str, object] | None] | None = None,
) -> FileSettings:
    """Update the config file at ``path`` (module invariants) and return what it now says.

    Raises:
        ConfigError: the result would not be a valid config file (nothing is written).
        OSError: the directory or the file cannot be written (the old file is intact).
    """
    path = Path(os.path.realpath(path))  # a link (into a dotfiles repository) stays a link
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = ""
    text = render_settings(current, changes, model_info)
    read: list[FileSettings] = []

    def check(temporary: Path) -> None:
        read.append(read_settings(ConfigLocation(temporary, explicit=True)))

    replace_whole(path, text, 0o600, check)
    settings = read[0]
    return FileSettings(
        ConfigLocation(path, explicit=True),
        exists=True,
        values=settings.values,
        model_info=settings.model_info,
        api_key=settings.api_key,
        warnings=settings.warnings,
    )
