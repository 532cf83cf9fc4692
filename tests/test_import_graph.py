"""No import circle anywhere in ``acp_sidecar``, and the server's layering.

Every import counts, at any depth: module level, inside functions (lazy imports) and under
``TYPE_CHECKING``. ``from P import N`` is an edge to ``P.N`` when that is a module, else to
``P``; ``import P.Q`` is an edge to ``P.Q``. A package's ``__init__`` that runs implicitly
before its submodule is not an edge (only what a module names is).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path

import acp_sidecar

ROOT = Path(acp_sidecar.__file__).parent
PACKAGE = "acp_sidecar"


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _known(name: str, known: Mapping[str, Path]) -> str | None:
    """``name``, or the longest prefix of it that is a module of ours."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The modules of ours that ``name`` imports, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                source = f"{base}.{node.module}" if node.module else base
            else:
                source = node.module or ""
            targets = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            if target == PACKAGE or target.startswith(PACKAGE + "."):
                module = _known(target, known)
                if module is not None and module != name:
                    found.add(module)
    return found


@functools.cache
def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative, so a deep chain of imports cannot hit the recursion limit.
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        groups.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return groups


def one_cycle(graph: Mapping[str, set[str]], group: list[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, through the group."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & members):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    raise AssertionError(f"{group} is not a circle")


def test_the_package_has_no_import_circle() -> None:
    graph = import_graph()
    found = [" -> ".join(one_cycle(graph, group)) for group in circles(graph)]
    assert found == [], "import circles in acp_sidecar:\n" + "\n".join(found)


def test_a_circle_is_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert one_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_lazy_and_type_only_imports_count(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from acp_sidecar.server.connection import Connection\n"
        "def later():\n"
        "    from acp_sidecar.server import handlers\n"
        "    import acp_sidecar.tools.context\n"
        "    from . import session\n",
        encoding="utf-8",
    )
    known = modules()
    assert imports_of("acp_sidecar.server.mod", source, known) == {
        "acp_sidecar.server.connection",
        "acp_sidecar.server.handlers",
        "acp_sidecar.tools.context",
        "acp_sidecar.server.session",
    }


def test_only_the_app_imports_the_handler_table_and_the_connection_knows_no_handler() -> None:
    graph = import_graph()
    table = {"acp_sidecar.server.handlers", "acp_sidecar.server.loading"}
    table |= {"acp_sidecar.server.lifecycle", "acp_sidecar.server.forking"}
    importers = {name for name, targets in graph.items() if targets & table} - table
    assert importers == {"acp_sidecar.server.app"}
    above_connection = table | {
        "acp_sidecar.server.app",
        "acp_sidecar.server.refresh",
        "acp_sidecar.server.state",
        "acp_sidecar.server.config_options",
        "acp_sidecar.server.mcp_session",
    }
    assert graph["acp_sidecar.server.connection"] & above_connection == set()
