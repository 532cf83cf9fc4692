"""``grep``: grouped results, ignore rules, limits, errors, cards — and rg ≡ pure Python."""

from __future__ import annotations

import asyncio
import codecs
import random
import re
import shutil
import threading
from typing import Any

import pytest

from acp_sidecar.tools import (
    CancelSignal,
    GenericCallView,
    GenericResultView,
    ToolExecution,
    ToolRegistry,
)
from acp_sidecar.tools.builtin import grep as grep_module
from acp_sidecar.tools.builtin.grep import GrepArgs, grep_tool, search
from acp_sidecar.tools.builtin.search import grep_engine as search_module
from acp_sidecar.tools.builtin.search import ripgrep as ripgrep_module
from tests.results import failure, meta, outcome, text

from .helpers import Workspace, run

needs_rg = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep is not installed")


@pytest.fixture(params=["rg", "python"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with ripgrep on PATH, and again without it."""
    if request.param == "rg":
        if shutil.which("rg") is None:
            pytest.skip("ripgrep is not installed")
    else:
        monkeypatch.setattr(grep_module, "ripgrep", lambda: None)
    return str(request.param)


@pytest.fixture
def project(workspace: Workspace) -> Workspace:
    workspace.put(".gitignore", "*.log\nbuild/\n")
    workspace.put("src/app.py", "import os\n\ndef main():\n    return os.getcwd()\n")
    workspace.put("src/util.py", "def helper():\n    pass\n")
    workspace.put("README.md", "# App\nmain entry point\n")
    workspace.put("debug.log", "def main in a log\n")
    workspace.put("build/gen.py", "def main(): generated\n")
    workspace.put(".git/HEAD", "def main\n")
    workspace.put("image.bin", b"def main\x00\x01\x02")
    return workspace


async def test_matches_are_grouped_by_file_in_path_order(
    project: Workspace, registry: ToolRegistry, engine: str
) -> None:
    result = await run(registry, project, "grep", {"pattern": r"def \w+\("})
    assert text(result) == (
        "src/app.py\n3: def main():\n\nsrc/util.py\n1: def helper():\n\n"
        "[2 matching lines in 2 files.]"
    )
    assert result.meta == {"matches": 2, "files": 2, "truncated": False, "engine": engine}


async def test_glob_case_and_path_narrow_the_search(
    project: Workspace, registry: ToolRegistry, engine: str
) -> None:
    result = await run(registry, project, "grep", {"pattern": "MAIN", "case_insensitive": True})
    assert text(result).startswith("README.md\n2: main entry point\n\nsrc/app.py\n3: def main():")
    result = await run(registry, project, "grep", {"pattern": "main", "glob": "*.md"})
    assert text(result) == "README.md\n2: main entry point\n\n[1 matching line in 1 file.]"
    result = await run(registry, project, "grep", {"pattern": "def", "path": "src", "glob": "u*"})
    assert text(result) == "src/util.py\n1: def helper():\n\n[1 matching line in 1 file.]"


async def test_an_explicit_file_is_searched_even_if_ignored(
    project: Workspace, registry: ToolRegistry, engine: str
) -> None:
    result = await run(registry, project, "grep", {"pattern": "main", "path": "debug.log"})
    assert text(result) == "debug.log\n1: def main in a log\n\n[1 matching line in 1 file.]"


async def test_max_results_cuts_with_a_note(
    workspace: Workspace, registry: ToolRegistry, engine: str
) -> None:
    workspace.put("a.txt", "hit\n" * 3)
    workspace.put("b.txt", "hit\n" * 3)
    result = await run(registry, workspace, "grep", {"pattern": "hit", "max_results": 4})
    assert text(result) == (
        "a.txt\n1: hit\n2: hit\n3: hit\n\nb.txt\n1: hit\n\n"
        "[Showing the first 4 matching lines (in 2 files); there are more. Narrow the search "
        "with path, glob or a more specific pattern, or raise max_results (at most 2000).]"
    )
    assert meta(result)["truncated"] is True


async def test_no_match_is_a_result(
    project: Workspace, registry: ToolRegistry, engine: str
) -> None:
    result = await run(registry, project, "grep", {"pattern": "zzz", "path": "src"})
    assert not result.is_error
    assert text(result) == "No matches for 'zzz' in src."


async def test_long_lines_are_cut(workspace: Workspace, registry: ToolRegistry) -> None:
    workspace.put("min.js", "x" * 700 + "needle\n")
    result = await run(registry, workspace, "grep", {"pattern": "needle"})
    assert text(result).split("\n")[1] == f"1: {'x' * 500} … [line cut: 706 characters]"


async def test_a_pattern_ripgrep_rejects_runs_in_python(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("a.txt", "foobar\nbazbar\n")
    result = await run(registry, workspace, "grep", {"pattern": r"(?<=foo)bar"})
    assert text(result) == "a.txt\n1: foobar\n\n[1 matching line in 1 file.]"
    assert meta(result)["engine"] == "python"


async def test_a_cancelled_search_ends(
    workspace: Workspace, registry: ToolRegistry, engine: str
) -> None:
    for index in range(300):
        workspace.put(f"d{index % 10}/f{index}.txt", "needle\n" * 50)
    signal = CancelSignal()
    asyncio.get_running_loop().call_soon(signal.cancel, "session/cancel")
    result = await run(registry, workspace, "grep", {"pattern": "zzz"}, signal=signal)
    code, message = failure(result)
    assert code == "CANCELLED"
    assert "No matches" not in message


def cancel_after(
    monkeypatch: pytest.MonkeyPatch, module: Any, signal: CancelSignal, files: int
) -> None:
    """Make ``module``'s walk cancel ``signal`` as it lists its ``files``-th file (as a user
    pressing stop in the middle of a search)."""
    walk = module.walk_files

    def walking(*args: Any, **kwargs: Any) -> Any:
        for index, entry in enumerate(walk(*args, **kwargs)):
            if index == files - 1:
                signal.cancel("session/cancel")
            yield entry

    monkeypatch.setattr(module, "walk_files", walking)


async def test_a_cancelled_search_says_how_far_it_got_not_no_matches(
    workspace: Workspace, registry: ToolRegistry, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25 §6: a cancelled grep was a completed "No matches", which a later turn's model
    read as fact."""
    for index in range(300):
        workspace.put(f"d{index % 10}/f{index:03d}.txt", "hay\n" * 5)
    signal = CancelSignal()
    cancel_after(monkeypatch, grep_module, signal, 5)
    result = await run(registry, workspace, "grep", {"pattern": "needle"}, signal=signal)
    code, message = failure(result)
    assert code == "CANCELLED"
    found = re.fullmatch(
        r"grep was cancelled after searching (\d+) files? \(no matching line by then\): the "
        r"search is incomplete and says nothing about the files it did not reach\.",
        message,
    )
    assert found is not None, message
    assert int(found.group(1)) < 300


# --- bad input --------------------------------------------------------------------------------


async def test_an_invalid_regex(workspace: Workspace, registry: ToolRegistry) -> None:
    result = await run(registry, workspace, "grep", {"pattern": "def (main"})
    assert failure(result) == (
        "INVALID_REGEX",
        "Invalid regular expression 'def (main': missing ), unterminated subpattern at position 4.",
    )


@pytest.mark.parametrize(
    "pattern", ["[[:alpha:]]+", "[^[:digit:]]", "x[a[:space:]]", "[[:^word:]]"]
)
async def test_a_posix_class_is_refused(
    workspace: Workspace, registry: ToolRegistry, engine: str, pattern: str
) -> None:
    """re reads [[:alpha:]] as the set '[:alph' then ']'; regex as letters: refused, not guessed."""
    workspace.put("a.txt", "abc:]\n5\n")
    code, message = failure(await run(registry, workspace, "grep", {"pattern": pattern}))
    assert code == "INVALID_REGEX"
    assert message.startswith(f"Invalid regular expression {pattern!r}: POSIX classes such as [:")
    assert message.endswith(r"Write the characters instead: [A-Za-z], [0-9] or \d, \s, \w.")


async def test_sets_re_and_the_engines_read_alike_are_not_refused(
    workspace: Workspace, registry: ToolRegistry, engine: str
) -> None:
    workspace.put("a.txt", "[a]\n=\n:\n")
    for pattern, lines in [(r"\[[:alpha:]]", "1: [a]"), ("[[=a=]]", "1: [a]"), ("[:-]+$", "3: :")]:
        result = text(await run(registry, workspace, "grep", {"pattern": pattern}))
        assert result.split("\n")[1:2] == [lines], (pattern, result)


@pytest.mark.parametrize("value", [0, -1, 2001])
async def test_max_results_out_of_range(
    workspace: Workspace, registry: ToolRegistry, value: int
) -> None:
    result = await run(registry, workspace, "grep", {"pattern": "x", "max_results": value})
    assert failure(result) == (
        "INVALID_ARGS",
        f"Invalid arguments:\n- /max_results: must be between 1 and 2000, got {value}",
    )


async def test_a_nonexistent_path(workspace: Workspace, registry: ToolRegistry) -> None:
    result = await run(registry, workspace, "grep", {"pattern": "x", "path": "nope"})
    assert failure(result) == ("NOT_FOUND", "nope does not exist.")


async def test_a_binary_file_given_as_path(project: Workspace, registry: ToolRegistry) -> None:
    result = await run(registry, project, "grep", {"pattern": "main", "path": "image.bin"})
    assert failure(result) == (
        "BINARY_FILE",
        "image.bin is a binary file; grep searches text files.",
    )


# --- cards ------------------------------------------------------------------------------------


async def test_cards(project: Workspace, registry: ToolRegistry) -> None:
    arguments: dict[str, Any] = {"pattern": "def", "path": "src", "glob": "*.py"}
    assert grep_tool.present_call is not None and grep_tool.present_result is not None
    assert grep_tool.present_call(arguments) == GenericCallView(
        card="generic",
        title="Grep 'def' in src (*.py)",
        kind="search",
        raw_input={"pattern": "def", "path": "src", "glob": "*.py", "case_insensitive": False},
    )
    result = await run(registry, project, "grep", arguments)
    view = grep_tool.present_result(arguments, outcome(result))
    assert view == grep_tool.present_result(arguments, outcome(result))
    assert view == GenericResultView(
        card="generic", title="Grep 'def' in src (*.py): 2 matching lines in 2 files"
    )


# --- the two engines agree ---------------------------------------------------------------------


def _varied_tree(workspace: Workspace) -> None:
    rng = random.Random(5)
    words = ["foo", "bar", "baz", "Hello", "end", "x|y", "a.c", "abc", "café", "  ", "\t", "123"]
    # where re's classes and case folding differ from Unicode's (which both engines follow)
    words += ["cafe\u0301", "x²", "\x1c", "ı", "ǅ"]
    for index in range(60):
        lines = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 6))) for _ in range(30)]
        newline = "\r\n" if index % 7 == 0 else "\n"
        body = newline.join(lines) + ("" if index % 5 == 0 else newline)
        workspace.put(f"d{index % 4}/f{index:02}.txt", body)
    workspace.put("bom.txt", codecs.BOM_UTF8 + b"foo at the start\nbar\n")
    workspace.put("u16.txt", codecs.BOM_UTF16_LE + "foo in utf16\nbaz end\n".encode("utf-16-le"))
    workspace.put("late_nul.txt", b"foo\n" + b"." * 9000 + b"\x00 foo\n")
    workspace.put("binary.dat", b"foo\x00bar\n")
    workspace.put("lone_cr.txt", b"foo\rbar end\nabc\r\n")
    workspace.put("latin1.txt", b"caf\xe9 au lait foo\n")
    workspace.put("empty.txt", b"")
    big = "".join(f"row {i} {'foo' if i % 997 == 0 else 'bar'}\n" for i in range(100_000))
    workspace.put("big/big.txt", big + "foo without newline")
    workspace.put("big/long_line.txt", "a" * (3 << 19) + "foo\nfoo\n")
    workspace.put(".gitignore", "d3/\n*.skip\n")
    workspace.put("d1/x.skip", "foo\n")


PATTERNS = [
    "foo",
    "^foo",
    "foo$",
    "end$",
    r"o\s",
    r"\bbar\b",
    "[0-9]{3}",
    "",
    "a.c",
    r"x\|y",
    "x|y",
    "(?i)hello",
    "café",
    r"\d+$",
    r"^\s*$",
    r"\t",
    "Hello",
    r"\w+\b",
    r"\s\S",
    r"\d",
    "(?i)i",
    "(?i)ǆ",
]


@needs_rg
@pytest.mark.parametrize(
    ("case_insensitive", "max_results", "batch"),
    [(False, 2000, None), (True, 2000, None), (False, 7, 3), (True, 7, None)],
)
async def test_ripgrep_and_python_give_the_same_results(
    workspace: Workspace,
    case_insensitive: bool,
    max_results: int,
    batch: int | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if batch is not None:  # many small ripgrep runs: the pipelined, early-stopping path
        monkeypatch.setattr(ripgrep_module, "_RG_FIRST_BATCH", batch)
        monkeypatch.setattr(ripgrep_module, "_RG_MAX_BATCH", batch * 4)
    _varied_tree(workspace)
    execution = ToolExecution(
        call_id="c",
        name="grep",
        arguments=None,
        agent=None,
        context=workspace,
        parent=None,
        signal=None,
    )
    for pattern in PATTERNS:
        for path in (None, "d1", "big/big.txt"):
            args = GrepArgs(
                pattern=pattern,
                path=path,
                case_insensitive=case_insensitive,
                max_results=max_results,
            )
            by_rg, _ = await search(args, execution, engine="rg")
            by_python, _ = await search(args, execution, engine="python")
            assert by_rg.engine == "rg"
            assert (by_rg.files, by_rg.truncated) == (by_python.files, by_python.truncated), (
                pattern,
                path,
            )


# --- the Python engine's limits ----------------------------------------------------------------


async def test_a_line_the_pattern_is_too_slow_on_is_skipped_and_named(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_module, "ripgrep", lambda: None)
    workspace.put("bad.txt", "aa\n" + "a" * 30 + "!\naaa\n")
    result = await run(registry, workspace, "grep", {"pattern": "(a|a)+$"})
    assert text(result) == (
        "bad.txt\n1: aa\n3: aaa\n\n[2 matching lines in 1 file.]\n"
        "[Not searched, the pattern took over 0.5 s on each (it backtracks catastrophically; "
        "simplify it): bad.txt:2.]"
    )


async def test_a_cancel_stops_a_slow_search_at_the_next_line(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search thread itself stops (not only the turn): the cancel, arriving while the
    first bad line is given up on, leaves the other three untried."""
    monkeypatch.setattr(grep_module, "ripgrep", lambda: None)
    workspace.put("bad.txt", ("a" * 30 + "!\n") * 4)
    signal = CancelSignal()
    seen = threading.Event()
    signal.add_callback(lambda _reason: seen.set())
    loop = asyncio.get_running_loop()
    slow = search_module._Scan._slow
    given_up: list[int] = []

    def cancelled_on_the_first(scan: Any, line: int) -> None:
        given_up.append(line)
        if len(given_up) == 1:  # cancel on the loop, as session/cancel does, and wait for it
            loop.call_soon_threadsafe(signal.cancel, "session/cancel")
            assert seen.wait(30), "the cancel never arrived"
        slow(scan, line)

    monkeypatch.setattr(search_module._Scan, "_slow", cancelled_on_the_first)
    result = await run(registry, workspace, "grep", {"pattern": "(a|a)+$"}, signal=signal)
    assert failure(result)[0] == "CANCELLED"
    assert given_up == [1]


async def test_a_line_over_the_cap_is_searched_in_its_start_and_counted(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_module, "ripgrep", lambda: None)
    monkeypatch.setattr(search_module, "MAX_LINE_BYTES", 64)
    monkeypatch.setattr(search_module, "BLOCK_BYTES", 16)  # at most the cap, as in real use
    monkeypatch.setattr(grep_module, "MAX_LINE_BYTES", 64)
    workspace.put("long.txt", "x" * 60 + "hit" + "y" * 100 + "hit\nhit\n" + "z" * 70 + "hit\n")
    result = await run(registry, workspace, "grep", {"pattern": "hit"})
    assert text(result) == (
        "long.txt\n1: " + "x" * 60 + "hity … [line cut: longer than 64 bytes, only its "
        "start was searched]\n2: hit\n\n[2 matching lines in 1 file.]\n"
        "[2 lines longer than 64 bytes: only the first 64 bytes of each were searched.]"
    )
