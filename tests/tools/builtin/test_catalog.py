"""The built-in catalogue: names and parameters are a public contract; cards survive replay."""

from __future__ import annotations

from typing import Any

from acp_sidecar.tools import ToolRegistry
from acp_sidecar.tools.builtin import builtin_tools
from acp_sidecar.tools.result import result_from_json, result_to_json
from tests.results import outcome

from .helpers import Workspace, run


def test_the_tools_and_their_parameters(registry: ToolRegistry) -> None:
    schemas = {s["name"]: s["parameters"] for s in registry.schemas()}
    assert list(schemas) == ["read", "write", "edit", "bash", "grep", "glob", "plan"]
    shape = {
        name: (sorted(schema["properties"]), sorted(schema.get("required", [])))
        for name, schema in schemas.items()
    }
    assert shape == {
        "read": (["limit", "offset", "path"], ["path"]),
        "write": (["content", "path"], ["content", "path"]),
        "edit": (
            ["new_string", "old_string", "path", "replace_all"],
            ["new_string", "old_string", "path"],
        ),
        "bash": (["background", "command", "cwd", "description", "timeout_ms"], ["command"]),
        "grep": (
            ["case_insensitive", "glob", "max_results", "path", "pattern"],
            ["pattern"],
        ),
        "glob": (["path", "pattern"], ["pattern"]),
        # A checklist (entries) or a Markdown plan (markdown, path): the tool checks it is one.
        "plan": (["entries", "markdown", "path"], []),
    }
    for name, schema in schemas.items():
        assert schema["additionalProperties"] is False
        for prop, spec in schema["properties"].items():
            assert spec.get("description"), f"{name}.{prop} has no description"


def test_builtin_tools_is_a_fresh_list() -> None:
    first = builtin_tools()
    first.clear()
    assert len(builtin_tools()) == 7


async def test_result_cards_are_the_same_after_a_round_trip_through_the_log(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("a.txt", "alpha\nbeta\n")
    calls: list[tuple[str, dict[str, Any]]] = [
        ("read", {"path": "a.txt"}),
        ("edit", {"path": "a.txt", "old_string": "beta", "new_string": "gamma"}),
        ("write", {"path": "b.txt", "content": "new\n"}),
        ("bash", {"command": "echo hi"}),
        ("grep", {"pattern": "a"}),
        ("glob", {"pattern": "*.txt"}),
        ("plan", {"entries": [{"content": "c", "priority": "low", "status": "pending"}]}),
        ("plan", {"markdown": "# Plan\n", "path": "/w/PLAN.md"}),
    ]
    for name, arguments in calls:
        result = await run(registry, workspace, name, arguments)
        replayed = result_from_json(result_to_json(result))
        definition = registry.get(name)
        assert definition is not None and definition.present_result is not None
        assert definition.present_call is not None
        live = definition.present_result(arguments, outcome(result))
        assert live is not None
        assert definition.present_result(arguments, outcome(replayed)) == live
        assert definition.present_call(arguments) == definition.present_call(arguments)
