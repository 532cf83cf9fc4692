"""``glob``: matching, newest first, the cap, ignore rules, errors, cards."""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

from acp_sidecar.tools import CancelSignal, GenericCallView, GenericResultView, ToolRegistry
from acp_sidecar.tools.builtin import glob as glob_module
from acp_sidecar.tools.builtin.glob import MAX_FILES, glob_tool
from tests.results import failure, outcome, text

from .helpers import Workspace, run
from .test_grep import cancel_after


def aged(workspace: Workspace, rel: str, mtime: int) -> None:
    os.utime(workspace.put(rel, ""), (mtime, mtime))


async def test_newest_first_then_by_path(workspace: Workspace, registry: ToolRegistry) -> None:
    aged(workspace, "old.md", 1_000)
    aged(workspace, "docs/new.md", 3_000)
    aged(workspace, "b.md", 2_000)
    aged(workspace, "a.md", 2_000)
    result = await run(registry, workspace, "glob", {"pattern": "**/*.md"})
    assert text(result) == "docs/new.md\na.md\nb.md\nold.md"
    assert result.meta == {"matches": 4, "shown": 4}


async def test_patterns_and_path(workspace: Workspace, registry: ToolRegistry) -> None:
    for rel in ("top.py", "src/a.py", "src/b.ts", "src/c.tsx", "src/deep/d.py", "tests/t.py"):
        aged(workspace, rel, 1_000)

    async def listing(arguments: dict[str, str]) -> list[str]:
        return sorted(text(await run(registry, workspace, "glob", arguments)).split("\n"))

    assert await listing({"pattern": "*.py"}) == ["top.py"]
    assert await listing({"pattern": "src/**/*.py"}) == ["src/a.py", "src/deep/d.py"]
    assert await listing({"pattern": "**/*.{ts,tsx}"}) == ["src/b.ts", "src/c.tsx"]
    assert await listing({"pattern": "*.py", "path": "src"}) == ["src/a.py"]
    assert await listing({"pattern": "./src/*.ts"}) == ["src/b.ts"]


async def test_gitignore_and_git_are_respected(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put(".gitignore", "dist/\n*.min.js\n")
    for rel in ("app.js", "app.min.js", "dist/bundle.js", ".git/hooks/x.js", "lib/.hidden.js"):
        aged(workspace, rel, 1_000)
    result = await run(registry, workspace, "glob", {"pattern": "**/*.js"})
    assert text(result) == "app.js\nlib/.hidden.js"


async def test_the_listing_is_capped_with_a_note(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    for index in range(MAX_FILES + 10):
        aged(workspace, f"f/{index:04}.txt", 10_000 - index)
    result = await run(registry, workspace, "glob", {"pattern": "f/*.txt"})
    lines = text(result).split("\n")
    assert lines[0] == "f/0000.txt"
    assert lines[MAX_FILES - 1] == f"f/{MAX_FILES - 1:04}.txt"
    assert lines[MAX_FILES:] == [
        "",
        f"[Showing the {MAX_FILES} most recently modified of 510 matching files. Narrow the "
        "pattern or path to see the others.]",
    ]
    assert result.meta == {"matches": 510, "shown": MAX_FILES}


async def test_no_match_is_a_result(workspace: Workspace, registry: ToolRegistry) -> None:
    result = await run(registry, workspace, "glob", {"pattern": "**/*.rs"})
    assert text(result) == "No files match '**/*.rs' in the workspace."
    result = await run(registry, workspace, "glob", {"pattern": "nowhere/**"})
    assert not result.is_error


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "violation"),
    [
        ("", "/pattern: must not be empty"),
        ("/etc/*", "/pattern: must be relative; give the directory to search in as path"),
        ("../*", "/pattern: must not contain '..'; give the directory to search in as path"),
        ("{a,b}" * 9, "/pattern: the {…} alternatives expand to more than 256 patterns"),
    ],
)
async def test_a_bad_pattern(
    workspace: Workspace, registry: ToolRegistry, pattern: str, violation: str
) -> None:
    result = await run(registry, workspace, "glob", {"pattern": pattern})
    assert failure(result) == ("INVALID_ARGS", f"Invalid arguments:\n- {violation}")


async def test_a_path_that_is_missing_or_a_file(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    result = await run(registry, workspace, "glob", {"pattern": "*", "path": "nope"})
    assert failure(result) == ("NOT_FOUND", "nope does not exist.")
    workspace.put("f.txt", "")
    result = await run(registry, workspace, "glob", {"pattern": "*", "path": "f.txt"})
    assert failure(result) == ("NOT_A_DIRECTORY", "f.txt is not a directory.")


# --- cards ------------------------------------------------------------------------------------


async def test_cards(workspace: Workspace, registry: ToolRegistry) -> None:
    workspace.put("a.py", "")
    arguments: dict[str, Any] = {"pattern": "*.py", "path": "."}
    assert glob_tool.present_call is not None and glob_tool.present_result is not None
    assert glob_tool.present_call(arguments) == GenericCallView(
        card="generic", title="Glob *.py in .", kind="search", raw_input=arguments
    )
    result = await run(registry, workspace, "glob", arguments)
    view = glob_tool.present_result(arguments, outcome(result))
    assert view == glob_tool.present_result(arguments, outcome(result))
    assert view == GenericResultView(card="generic", title="Glob *.py in .: 1 file")


async def test_a_cancelled_glob_says_how_far_it_got_not_no_files(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25 §6: a cancelled glob was a completed "No files match"."""
    for index in range(300):
        workspace.put(f"d{index % 10}/f{index:03d}.txt", "")
    signal = CancelSignal()
    cancel_after(monkeypatch, glob_module, signal, 5)
    result = await run(registry, workspace, "glob", {"pattern": "**/*.md"}, signal=signal)
    code, message = failure(result)
    assert code == "CANCELLED"
    found = re.fullmatch(
        r"glob was cancelled after listing (\d+) files? \(none matched by then\): the listing "
        r"is incomplete and says nothing about the files it did not reach\.",
        message,
    )
    assert found is not None, message
    assert 5 <= int(found.group(1)) < 300
