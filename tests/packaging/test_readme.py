"""The README's install and editor set-up stay true as the package changes: the wheel it names
is the one this version builds, its JSON settings parse as pasted, and the index-only
commands appear only where it says they will work once the package is published."""

from __future__ import annotations

import json
import re
from pathlib import Path

from acp_sidecar import __version__

README = Path(__file__).resolve().parents[2] / "README.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```$", README.read_text(), re.M | re.S)


def test_the_readme_names_the_wheel_this_version_builds() -> None:
    named = set(re.findall(r"acp_sidecar-[^\s`/]+\.whl", README.read_text()))
    assert named == {f"acp_sidecar-{__version__}-py3-none-any.whl"}


def test_every_json_settings_block_parses_and_starts_the_sidecar() -> None:
    settings = [json.loads(block) for block in blocks("json")]
    assert len(settings) >= 2  # Zed and JetBrains
    for document in settings:
        for server in document["agent_servers"].values():
            assert Path(server["command"]).name == "acp-sidecar"
            assert server["args"] == []


def test_index_installs_are_only_offered_as_once_published() -> None:
    text = README.read_text()
    paragraphs = text.split("\n\n")
    for command in ("uvx acp-sidecar", "pipx install acp-sidecar"):
        holding = [p for p in paragraphs if re.search(rf"(?<![\w-]){command}(?![\w.-])", p)]
        assert holding, command
        assert all("Once it is published on PyPI" in p for p in holding), holding
