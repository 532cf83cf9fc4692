"""The README's install and editor set-up stay true as the package changes: the wheel it names
is the one this version builds, its JSON settings parse as pasted, the index-only
commands appear only where it says they will work once the package is published, and its
example tool works and keeps to the workspace."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

from acp_sidecar import __version__
from acp_sidecar.tools import ToolExecutionInput, ToolExecutionResult, ToolRegistry
from acp_sidecar.tools.context import LocalContext

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


def example_tools(directory: Path) -> ModuleType:
    """The README's example tool module (the Python block that defines a tool), imported."""
    [source] = [block for block in blocks("python") if "define_tool(" in block]
    path = directory / "readme_tools.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("readme_tools", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def count(registry: ToolRegistry, workspace: Path, path: str) -> ToolExecutionResult:
    call = ToolExecutionInput(
        call_id=path,
        name="count_lines",
        arguments={"path": path},
        context=LocalContext(str(workspace)),
    )
    return await registry.execute(call)


async def test_the_readme_tool_counts_lines_inside_the_workspace_and_nothing_outside(
    tmp_path: Path,
) -> None:
    registry = ToolRegistry()
    for tool in example_tools(tmp_path).TOOLS:
        registry.register(tool)
    workspace = tmp_path / "a" / "b" / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "notes.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "secret.txt").write_text("root:x:0:0\n")
    (workspace / "link.txt").symlink_to(tmp_path / "secret.txt")

    inside = await count(registry, workspace, "notes.txt")
    assert not inside.is_error and inside.content[0].text == "3 lines"  # type: ignore[union-attr]
    for outside in ("../../../etc/passwd", "../../../secret.txt", "/etc/passwd", "link.txt"):
        refused = await count(registry, workspace, outside)
        assert refused.is_error, outside
        assert refused.error is not None and refused.error.code == "OUTSIDE_WORKSPACE", outside
