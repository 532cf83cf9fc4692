"""Writing the config file: comments and other keys kept, atomic, private, checked."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from acp_sidecar.agent.model.config import ModelProfile
from acp_sidecar.settings import ConfigError, ConfigLocation, read_settings
from acp_sidecar.settings.writing import render_settings, save_settings

SECRET = "sk-test-0123456789abcdef"


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_is_private_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "config.toml"
    saved = save_settings(
        path,
        {
            "model": "m",
            "models": ("m", "n"),
            "base_url": "http://localhost:9/v1",
            "api_key": SECRET,
        },
        {"m": {"context": 1000, "reasoning": True}},
    )
    assert mode_of(path) == 0o600
    again = read_settings(ConfigLocation(path, explicit=True))
    assert (
        again.values
        == saved.values
        == {
            "model": "m",
            "models": ("m", "n"),
            "base_url": "http://localhost:9/v1",
        }
    )
    assert again.api_key == SECRET
    assert again.model_info == (ModelProfile("m", context_window=1000, reasoning_effort=True),)
    assert path.read_text().startswith("# acp-sidecar configuration")


def test_an_update_keeps_comments_and_other_keys(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '# mine\nmodel = "old"  # the one I like\nfsync = "record"\n\n'
        "[model_info.old]\ncontext = 5 # small\n",
        encoding="utf-8",
    )
    os.chmod(path, 0o644)
    save_settings(path, {"model": "new", "mode": "auto", "fsync": None}, {"new": {"images": True}})
    text = path.read_text()
    assert "# mine" in text and "# the one I like" in text and "context = 5 # small" in text
    settings = read_settings(ConfigLocation(path, explicit=True))
    assert settings.values == {"model": "new", "mode": "auto"}
    assert [p.name for p in settings.model_info] == ["old", "new"]
    assert mode_of(path) == 0o600  # tightened, never loosened


def test_a_model_table_can_be_replaced_and_removed(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    save_settings(path, {}, {"a": {"context": 1}, "b": {"context": 2}})
    save_settings(path, {}, {"a": {"context": 3}, "b": None})
    settings = read_settings(ConfigLocation(path, explicit=True))
    assert settings.model_info == (ModelProfile("a", context_window=3),)


def test_an_invalid_result_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "kept"\n', encoding="utf-8")
    with pytest.raises(ConfigError):
        save_settings(path, {"max_tokens": -1})
    assert path.read_text() == 'model = "kept"\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]  # no temporary left


def test_a_failed_write_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.toml"
    path.write_text('model = "kept"\n', encoding="utf-8")

    def full_disk(source: str, target: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("acp_sidecar.settings.writing.os.replace", full_disk)
    with pytest.raises(OSError):
        save_settings(path, {"model": "new"})
    assert path.read_text() == 'model = "kept"\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.toml"]


def test_render_keeps_top_level_keys_before_tables() -> None:
    text = render_settings("[model_info.a]\ncontext = 1\n", {"model": "a"})
    assert text.index('model = "a"') < text.index("[model_info.a]")


def test_a_linked_config_file_stays_a_link(tmp_path: Path) -> None:
    """A config file kept in a dotfiles repository and linked into place is written where
    the link points; the link stays."""
    real = tmp_path / "dotfiles" / "acp.toml"
    real.parent.mkdir()
    real.write_text('model = "old"\n', encoding="utf-8")
    link = tmp_path / "config.toml"
    link.symlink_to(real)
    save_settings(link, {"model": "new"})
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert read_settings(ConfigLocation(real, explicit=True)).values == {"model": "new"}
