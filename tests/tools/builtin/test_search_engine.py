"""The Python engine: what it finds, and that it finds it over whole blocks when it can."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_sidecar.tools.builtin.search import grep_engine as search_module
from acp_sidecar.tools.builtin.search.grep_engine import python_search
from acp_sidecar.tools.builtin.search.grep_match import Candidate, SearchResult, compile_pattern
from acp_sidecar.tools.builtin.search.walk import walk_files

# Anchors, \r before the line end, empty lines, patterns that cross lines in a block, and the
# few the block search must leave to line-by-line matching.
PATTERNS = [
    "^foo",
    "foo$",
    "^$",
    "^",
    "$",
    r"o\r$",
    r"^\s*$",
    r"^\w+ \w+$",
    r"o\s+b",
    r"\Afoo",
    r"bar\Z",
    r"(?<=\n)foo",
    r"(?-m:^foo)",
    "(?m)^bar",
    r"\Bo\b",
    r"[$^]",
]
LINE_PARTS = ["foo", "bar", " ", "\r", "o", "$", "^", ""]


def reference(pattern: str, data: str) -> list[int]:
    """The documented meaning: ``re`` on each line, the text between ``\\n``s, ``\\r`` kept."""
    lines = data.split("\n")
    if lines[-1] == "":
        lines.pop()
    compiled = re.compile(pattern)
    return [number for number, line in enumerate(lines, 1) if compiled.search(line)]


def found_lines(path: Path, pattern: str) -> list[int]:
    result = python_search(
        [Candidate(str(path), path.name, path.name)],
        compile_pattern(pattern, case_insensitive=False),
        10_000,
    )
    return [line.line for found in result.files for line in found.lines]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(st.lists(st.sampled_from(LINE_PARTS), max_size=5).map("".join), max_size=12),
    final_newline=st.booleans(),
)
def test_the_engine_finds_what_re_finds_line_by_line(
    tmp_path: Path, lines: list[str], final_newline: bool
) -> None:
    data = "\n".join(lines) + ("\n" if final_newline and lines else "")
    path = tmp_path / "f.txt"
    path.write_bytes(data.encode())
    for pattern in PATTERNS:
        assert found_lines(path, pattern) == reference(pattern, data), (pattern, data)


@pytest.mark.parametrize("pattern", ["^def zz", r"zz\(\):$", r"^\s*def zz\(\):$"])
def test_an_anchored_pattern_is_searched_over_whole_blocks(
    tmp_path: Path, pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Matching line by line is some ten times slower: each call pays for the timeout."""
    line_by_line: list[int] = []
    each_line = search_module._Scan._each_line

    def spy(scan: search_module._Scan, text: str, first_line: int, cut: bool) -> None:
        line_by_line.append(first_line)
        each_line(scan, text, first_line, cut)

    monkeypatch.setattr(search_module._Scan, "_each_line", spy)
    path = tmp_path / "m.py"
    path.write_text("".join(f"    value_{i} = compute()\n" for i in range(2000)) + "def zz():\n")
    assert found_lines(path, pattern) == [2001]
    assert line_by_line == []


def _walked(root: Path) -> list[Candidate]:
    return [
        Candidate(entry.path, entry.rel, entry.rel, entry.inode) for entry in walk_files(str(root))
    ]


def test_a_file_swapped_for_a_symlink_after_the_walk_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("token=hunter2\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("token=public\n")
    (root / "b.txt").write_text("token=public\n")
    candidates = _walked(root)
    # Between the walk and the read: one file becomes a symlink out, one another file.
    (root / "a.txt").unlink()
    (root / "a.txt").symlink_to(outside / "secret.txt")
    (root / "new.txt").write_text("token=swapped\n")
    (root / "new.txt").replace(root / "b.txt")
    result = python_search(candidates, compile_pattern("token", case_insensitive=False), 10)
    assert result.files == ()


def test_a_file_swapped_for_a_fifo_after_the_walk_does_not_block(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("token\n")
    candidates = _walked(tmp_path)
    (tmp_path / "a.txt").unlink()
    os.mkfifo(tmp_path / "a.txt")  # opened for reading, it would wait for a writer forever
    done = threading.Event()
    found: list[SearchResult] = []

    def search() -> None:
        found.append(python_search(candidates, compile_pattern("t", case_insensitive=False), 1))
        done.set()

    threading.Thread(target=search, daemon=True).start()
    if not done.wait(10):
        with open(tmp_path / "a.txt", "wb"):  # release the blocked reader
            pass
        pytest.fail("grep blocked on a FIFO swapped in after the walk")
    assert found[0].files == ()


def test_files_the_walk_listed_are_read(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("token\n")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "b.txt").write_text("x\ntoken\n")
    result = python_search(_walked(tmp_path), compile_pattern("token", case_insensitive=False), 10)
    assert [(f.shown, [line.line for line in f.lines]) for f in result.files] == [
        ("a.txt", [1]),
        ("d/b.txt", [2]),
    ]
