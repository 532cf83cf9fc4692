"""Tools from the user's own modules and from installed packages' entry points."""

from __future__ import annotations

import importlib.metadata
import logging
import textwrap
from pathlib import Path

import pytest

from acp_sidecar.tools import plugins
from acp_sidecar.tools.plugins import PluginError, load_plugins, load_tool_spec

MODULE = """
from acp_sidecar.tools import define_tool

async def _hello(args, execution):
    return "hello"

def make(name):
    return define_tool(
        name=name, description="says hello", parameters={}, execute=_hello
    )

one = make("one")
several = [make("two"), make("three")]
as_tuple = (make("four"),)
def factory():
    return [make("five")]
def broken_factory():
    raise RuntimeError("no config")
def returns_factory():
    return factory
not_a_tool = 42
mixed = [make("six"), "oops"]
dup = make("one")
class Holder:
    tools = [make("seven")]
"""


@pytest.fixture(autouse=True)
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_tools.py").write_text(textwrap.dedent(MODULE))
    (tmp_path / "explodes.py").write_text("raise ImportError('needs numpy')\n")
    (tmp_path / "deep.py").write_text(
        "import json\n\ndef settings():\n    return json.loads('{')\n\nSETTINGS = settings()\n"
    )
    (tmp_path / "typo.py").write_text("TOOLS = [\n    define_tool(\n)\n)\n")
    monkeypatch.syspath_prepend(str(tmp_path))


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("my_tools:one", ["one"]),
        ("my_tools:several", ["two", "three"]),
        ("my_tools:as_tuple", ["four"]),
        ("my_tools:factory", ["five"]),
        ("my_tools:Holder.tools", ["seven"]),
    ],
)
def test_every_shape_loads(spec: str, names: list[str]) -> None:
    assert [tool.name for tool in load_tool_spec(spec)] == names


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("my_tools", "'my_tools': expected MODULE:ATTR, e.g. my_tools.tools:all_tools"),
        ("my_tools:", "'my_tools:': expected MODULE:ATTR, e.g. my_tools.tools:all_tools"),
        (
            "missing_mod:x",
            "missing_mod:x: cannot import missing_mod: ModuleNotFoundError: "
            "No module named 'missing_mod'",
        ),
        ("my_tools:nope", "my_tools:nope: my_tools has no attribute 'nope'"),
        (
            "my_tools:not_a_tool",
            "my_tools:not_a_tool: expected a ToolDefinition, a list of them, or a callable "
            "returning them; got int",
        ),
        (
            "my_tools:mixed",
            "my_tools:mixed: expected only ToolDefinitions, but item 1 is str",
        ),
        (
            "my_tools:broken_factory",
            "my_tools:broken_factory: calling it raised RuntimeError: no config",
        ),
        (
            "my_tools:returns_factory",
            "my_tools:returns_factory(): expected a ToolDefinition, a list of them, or a "
            "callable returning them; got function",
        ),
    ],
)
def test_every_failure_names_the_source(spec: str, message: str) -> None:
    with pytest.raises(PluginError) as caught:
        load_tool_spec(spec)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("spec", "message", "line"),
    [
        ("explodes:x", "explodes:x: cannot import explodes: ImportError: needs numpy", 1),
        (
            "deep:x",
            "deep:x: cannot import deep: JSONDecodeError: Expecting property name enclosed in "
            "double quotes: line 1 column 2 (char 1)",
            4,
        ),
        (
            "typo:x",
            "typo:x: cannot import typo: SyntaxError: closing parenthesis ')' does not match "
            "opening parenthesis '[' on line 1",
            4,
        ),
    ],
)
def test_a_module_that_fails_to_import_is_named_with_its_file_and_line(
    tmp_path: Path, spec: str, message: str, line: int
) -> None:
    with pytest.raises(PluginError) as caught:
        load_tool_spec(spec)
    module = spec.partition(":")[0]
    assert str(caught.value) == f"{message} (at {tmp_path / module}.py:{line})"


def test_the_traceback_of_a_failed_import_is_logged_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG, logger="acp_sidecar.tools.plugins"):
        tools, errors = load_plugins(["deep:x"], entry_points=False)
    assert tools == [] and len(errors) == 1
    [record] = [r for r in caplog.records if r.exc_info is not None]
    assert record.levelno == logging.DEBUG
    assert "deep:x" in record.getMessage()
    shown = caplog.text
    assert "Traceback (most recent call last)" in shown
    assert 'deep.py", line 6, in <module>' in shown and 'deep.py", line 4, in settings' in shown


def test_load_plugins_keeps_what_loaded_and_reports_the_rest() -> None:
    tools, errors = load_plugins(
        ["my_tools:one", "missing_mod:x", "my_tools:several", "my_tools:dup"], entry_points=False
    )
    assert [tool.name for tool in tools] == ["one", "two", "three"]
    assert errors == [
        "missing_mod:x: cannot import missing_mod: ModuleNotFoundError: No module named "
        "'missing_mod'",
        "my_tools:dup: a tool named 'one' was already loaded from my_tools:one; skipped",
    ]


def test_entry_points_load_too(monkeypatch: pytest.MonkeyPatch) -> None:
    group = plugins.ENTRY_POINT_GROUP
    offered = [
        importlib.metadata.EntryPoint("good", "my_tools:factory", group),
        importlib.metadata.EntryPoint("bad", "missing_mod:tools", group),
        importlib.metadata.EntryPoint("wrong", "my_tools:not_a_tool", group),
    ]

    def fake_entry_points(*, group: str) -> list[importlib.metadata.EntryPoint]:
        assert group == plugins.ENTRY_POINT_GROUP
        return offered

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    tools, errors = load_plugins(["my_tools:one"])
    assert [tool.name for tool in tools] == ["one", "five"]
    assert errors == [
        "entry point bad = missing_mod:tools: cannot load it: ModuleNotFoundError: No module "
        "named 'missing_mod'",
        "entry point wrong = my_tools:not_a_tool: expected a ToolDefinition, a list of them, "
        "or a callable returning them; got int",
    ]
