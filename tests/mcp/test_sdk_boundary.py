"""Only :mod:`acp_sidecar.mcp` imports the MCP SDK (``mcp`` and its types package
``mcp_types``), and its SDK-free modules stay so: the ACP server names MCP hooks and starts
stdio servers without the SDK, which a session without servers never loads."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[2] / "acp_sidecar"
SDK = ("mcp", "mcp_types")


def sdk_imports(path: Path) -> list[str]:
    """``file:line module`` for each import of the SDK in ``path`` (any depth, even under
    ``TYPE_CHECKING`` or inside a function)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            if name.split(".")[0] in SDK:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {name}")
    return found


def test_nothing_outside_acp_sidecar_mcp_imports_the_sdk() -> None:
    outside = [p for p in PACKAGE.rglob("*.py") if (PACKAGE / "mcp") not in p.parents]
    assert len(outside) > 50
    assert [hit for path in outside for hit in sdk_imports(path)] == []


def test_the_scan_finds_the_sdk_where_it_is_imported() -> None:
    assert any(" mcp." in hit for hit in sdk_imports(PACKAGE / "mcp" / "connection.py"))
    assert any(hit.endswith(" mcp_types") for hit in sdk_imports(PACKAGE / "mcp" / "stdio.py"))


@pytest.mark.process
@pytest.mark.parametrize(
    "module", ["config", "launch", "client_side", "callbacks", "processes", "elicitation"]
)
def test_the_sdk_free_modules_load_without_it(module: str) -> None:
    code = (
        f"import sys, acp_sidecar.mcp.{module}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


HIGHER = ("acp_sidecar.server", "acp_sidecar.agent", "acp_sidecar.cli", "acp_sidecar.demo")
"""The layers above :mod:`acp_sidecar.mcp`: they start servers and use their tools; the MCP
package never reaches back into them (a callback it is given is how it talks to them)."""


def test_the_mcp_package_imports_nothing_from_the_layers_above_it() -> None:
    hits: list[str] = []
    for path in (PACKAGE / "mcp").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            hits += [
                f"{path.name}:{node.lineno} {name}"
                for name in names
                if any(name == up or name.startswith(up + ".") for up in HIGHER)
            ]
    assert hits == []


def test_a_server_line_is_bounded_like_the_acp_wire() -> None:
    from acp_sidecar.mcp.stdio import MAX_LINE
    from acp_sidecar.server.framing import DEFAULT_LINE_LIMIT

    assert MAX_LINE == DEFAULT_LINE_LIMIT
