"""``edit``: exact replacement, what it keeps, every bad match, the editor, its cards."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import errno
import os
import stat
import tracemalloc
from typing import Any

import pytest

from acp_sidecar.tools import DiffCallView, DiffResultView, FileDiff, ToolRegistry
from acp_sidecar.tools.builtin import edit as edit_module
from acp_sidecar.tools.builtin.edit import edit_tool
from acp_sidecar.tools.builtin.files import atomic
from tests.fakes import FakeEditorFiles
from tests.results import failure, meta, outcome, text

from .helpers import Workspace, deny_access, run, tree_bytes

SOURCE = "".join(f"line {i}\n" for i in range(1, 21))


async def test_replaces_one_occurrence(workspace: Workspace, registry: ToolRegistry) -> None:
    workspace.put("a.txt", SOURCE)
    result = await run(
        registry,
        workspace,
        "edit",
        {"path": "a.txt", "old_string": "line 10\n", "new_string": "ten\nTEN\n"},
    )
    assert text(result) == "Edited a.txt: replaced 1 occurrence (line 10)."
    assert workspace.get("a.txt").decode() == SOURCE.replace("line 10\n", "ten\nTEN\n")
    assert result.meta == {
        "path": workspace.path("a.txt"),
        "replacements": 1,
        "encoding": "utf-8",
        "line_endings": "lf",
        "hunks": (
            {
                "old_line": 7,
                "new_line": 7,
                "old_text": "line 7\nline 8\nline 9\nline 10\nline 11\nline 12\nline 13\n",
                "new_text": "line 7\nline 8\nline 9\nten\nTEN\nline 11\nline 12\nline 13\n",
            },
        ),
        "omitted_hunks": 0,
        "cut": False,
    }


async def test_replace_all_replaces_every_occurrence(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("a.txt", "x = 1\n" + "pad\n" * 10 + "x = 1\n")
    result = await run(
        registry,
        workspace,
        "edit",
        {"path": "a.txt", "old_string": "x = 1", "new_string": "x = 2", "replace_all": True},
    )
    assert text(result) == "Edited a.txt: replaced 2 occurrences (lines 1, 12)."
    assert workspace.get("a.txt") == ("x = 2\n" + "pad\n" * 10 + "x = 2\n").encode()
    assert [h["old_line"] for h in meta(result)["hunks"]] == [1, 9]


async def test_replace_all_costs_memory_in_proportion_to_the_file_not_to_its_occurrences(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    """Issue 25 §6: replacing 3.3 million occurrences in 50 MB took 48 s and 1.1 GB: every
    occurrence cost a slice object for the write and spans for the diff. (Measured, not timed:
    benchmarks/bench_edit.py --replace-all has the figures.)"""
    content = "".join(f"{n:08d} foo ;\n" for n in range(50_000))  # 750 KB, 50,000 of them
    workspace.put("many.txt", content)
    arguments = {"path": "many.txt", "old_string": "foo", "new_string": "quux"}
    tracemalloc.start()
    try:
        result = await run(registry, workspace, "edit", {**arguments, "replace_all": True})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert text(result).startswith("Edited many.txt: replaced 50000 occurrences (lines 1, 2,")
    assert workspace.get("many.txt") == content.replace("foo", "quux").encode()
    assert meta(result)["omitted_hunks"] == 0 and meta(result)["cut"] is True  # one region
    assert peak < 8 * len(content), f"{peak / len(content):.1f} times the file"


async def test_crlf_stays_crlf(workspace: Workspace, registry: ToolRegistry) -> None:
    workspace.put("w.txt", b"one\r\ntwo\r\nthree\r\n")
    result = await run(
        registry,
        workspace,
        "edit",
        {"path": "w.txt", "old_string": "one\ntwo\n", "new_string": "1\n2\n2.5\n"},
    )
    assert not result.is_error, text(result)
    assert workspace.get("w.txt") == b"1\r\n2\r\n2.5\r\nthree\r\n"
    assert meta(result)["line_endings"] == "crlf"


async def test_encoding_bom_and_undecodable_bytes_survive(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    original = codecs.BOM_UTF8 + b"caf\xe9 = 1\nname = 'x'\n"  # latin-1 byte in a UTF-8 file
    workspace.put("mixed.py", original)
    await run(
        registry,
        workspace,
        "edit",
        {"path": "mixed.py", "old_string": "'x'", "new_string": "'y'"},
    )
    assert workspace.get("mixed.py") == original.replace(b"'x'", b"'y'")
    workspace.put("u16.txt", codecs.BOM_UTF16_LE + "grüß dich\n".encode("utf-16-le"))
    await run(
        registry, workspace, "edit", {"path": "u16.txt", "old_string": "dich", "new_string": "Sie"}
    )
    assert workspace.get("u16.txt") == codecs.BOM_UTF16_LE + "grüß Sie\n".encode("utf-16-le")


async def test_the_mode_is_kept(workspace: Workspace, registry: ToolRegistry) -> None:
    path = workspace.put("run.sh", "echo a\n")
    os.chmod(path, 0o700)
    await run(registry, workspace, "edit", {"path": "run.sh", "old_string": "a", "new_string": "b"})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700


# --- bad input: and nothing lost -------------------------------------------------------------


@pytest.fixture
def source(workspace: Workspace) -> bytes:
    workspace.put("a.txt", SOURCE)
    return workspace.get("a.txt")


async def test_old_string_not_found(
    workspace: Workspace, registry: ToolRegistry, source: bytes
) -> None:
    result = await run(
        registry, workspace, "edit", {"path": "a.txt", "old_string": "line 99", "new_string": "x"}
    )
    assert failure(result) == (
        "NO_MATCH",
        "old_string was not found in a.txt. It must match the file exactly, including "
        "whitespace and indentation; read the file again to copy the current text.",
    )
    assert workspace.get("a.txt") == source


async def test_old_string_with_read_line_numbers_gets_a_hint(
    workspace: Workspace, registry: ToolRegistry, source: bytes
) -> None:
    result = await run(
        registry,
        workspace,
        "edit",
        {"path": "a.txt", "old_string": "     3\tline 3", "new_string": "x"},
    )
    code, message = failure(result)
    assert code == "NO_MATCH"
    assert message.endswith(" It seems to include read's line-number prefixes; leave them out.")
    assert workspace.get("a.txt") == source


async def test_old_string_found_more_than_once(
    workspace: Workspace, registry: ToolRegistry, source: bytes
) -> None:
    result = await run(
        registry, workspace, "edit", {"path": "a.txt", "old_string": "line 1", "new_string": "x"}
    )
    assert failure(result) == (
        "AMBIGUOUS_MATCH",
        "old_string occurs 11 times in a.txt (lines 1, 10, 11, 12, 13, 14, 15, 16, 17, 18, "
        "… (1 more)). Include more surrounding text to make it unique, or set replace_all to "
        "true to replace every occurrence.",
    )
    assert workspace.get("a.txt") == source


async def test_old_string_equal_to_new_string(
    workspace: Workspace, registry: ToolRegistry, source: bytes
) -> None:
    result = await run(
        registry,
        workspace,
        "edit",
        {"path": "a.txt", "old_string": "line 2", "new_string": "line 2"},
    )
    assert failure(result) == (
        "NO_CHANGE",
        "old_string and new_string are identical; there is nothing to change.",
    )
    assert workspace.get("a.txt") == source


async def test_an_empty_old_string(
    workspace: Workspace, registry: ToolRegistry, source: bytes
) -> None:
    result = await run(
        registry, workspace, "edit", {"path": "a.txt", "old_string": "", "new_string": "x"}
    )
    assert failure(result) == (
        "INVALID_ARGS",
        "Invalid arguments:\n- /old_string: must not be empty; use write to create or "
        "overwrite a file",
    )
    assert workspace.get("a.txt") == source


@pytest.mark.parametrize(
    ("setup", "path", "expected"),
    [
        (None, "missing.txt", ("NOT_FOUND", "missing.txt does not exist.")),
        ("dir", "d", ("IS_DIRECTORY", "d is a directory, not a file. Use glob to list its files.")),
        ("bin", "b.bin", ("BINARY_FILE", "b.bin is a binary file; only text files can be edited.")),
    ],
)
async def test_a_path_that_is_not_an_editable_file(
    workspace: Workspace,
    registry: ToolRegistry,
    setup: str | None,
    path: str,
    expected: tuple[str, str],
) -> None:
    if setup == "dir":
        os.mkdir(workspace.path("d"))
    elif setup == "bin":
        workspace.put("b.bin", b"ab\x00cd")
    before = tree_bytes(workspace.cwd)
    result = await run(
        registry, workspace, "edit", {"path": path, "old_string": "ab", "new_string": "x"}
    )
    assert failure(result) == expected
    assert tree_bytes(workspace.cwd) == before


async def test_permission_denied(
    workspace: Workspace, registry: ToolRegistry, source: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    deny_access(monkeypatch, workspace.path("a.txt"))
    result = await run(
        registry, workspace, "edit", {"path": "a.txt", "old_string": "line 2", "new_string": "x"}
    )
    assert failure(result) == ("PERMISSION_DENIED", "Permission denied: cannot read a.txt.")
    monkeypatch.undo()
    os.chmod(workspace.path("a.txt"), 0o644)
    assert workspace.get("a.txt") == source


async def test_a_write_that_fails_midway_leaves_the_original(
    workspace: Workspace, registry: ToolRegistry, source: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail_midway(fd: int, chunks: atomic.Chunks) -> None:
        os.write(fd, bytes(chunks[0])[:10])
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(atomic, "_write_all", fail_midway)
    before = tree_bytes(workspace.cwd)
    result = await run(
        registry, workspace, "edit", {"path": "a.txt", "old_string": "line 2\n", "new_string": ""}
    )
    assert failure(result) == (
        "IO_ERROR",
        "Cannot write a.txt: Input/output error. The file was left unchanged.",
    )
    assert tree_bytes(workspace.cwd) == before


# --- the editor -------------------------------------------------------------------------------


async def test_the_edit_applies_to_the_editors_buffer_and_goes_back_through_it(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    path = workspace.put("a.py", "x = 1\n")
    editor = FakeEditorFiles({path: "x = 1\ny = 2  # unsaved\n"})
    workspace.files = editor
    result = await run(
        registry, workspace, "edit", {"path": "a.py", "old_string": "y = 2", "new_string": "y = 3"}
    )
    assert text(result) == "Edited a.py: replaced 1 occurrence (line 2)."
    assert editor.writes == [(path, "x = 1\ny = 3  # unsaved\n")]
    assert workspace.get("a.py") == b"x = 1\n"


async def test_a_read_only_editor_gets_a_local_atomic_write_in_the_files_encoding(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    path = workspace.put("a.txt", codecs.BOM_UTF8 + b"old\n")
    editor = FakeEditorFiles({path: "old\n"}, can_write=False)
    workspace.files = editor
    await run(
        registry, workspace, "edit", {"path": "a.txt", "old_string": "old", "new_string": "new"}
    )
    assert workspace.get("a.txt") == codecs.BOM_UTF8 + b"new\n"
    assert editor.writes == []


# --- cards ------------------------------------------------------------------------------------


def test_the_call_card_is_old_string_to_new_string() -> None:
    assert edit_tool.present_call is not None
    arguments = {"path": "a.py", "old_string": "a", "new_string": "b", "replace_all": True}
    assert edit_tool.present_call(arguments) == DiffCallView(
        card="diff",
        title="Edit a.py (every occurrence)",
        diffs=[FileDiff(path="a.py", old_text="a", new_text="b")],
    )


async def test_the_result_card_shows_each_changed_region_with_context(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    path = workspace.put("a.txt", "\n".join(f"{i}" for i in range(1, 31)) + "\n")
    arguments = {"path": "a.txt", "old_string": "5\n", "new_string": "five\n", "replace_all": True}
    result = await run(registry, workspace, "edit", arguments)
    assert text(result) == "Edited a.txt: replaced 3 occurrences (lines 5, 15, 25)."
    assert edit_tool.present_result is not None
    view = edit_tool.present_result(arguments, outcome(result))
    assert view == edit_tool.present_result(arguments, outcome(result))
    assert view == DiffResultView(
        card="diff",
        diffs=[
            FileDiff(
                path=path, old_text="2\n3\n4\n5\n6\n7\n8\n", new_text="2\n3\n4\nfive\n6\n7\n8\n"
            ),
            FileDiff(
                path=path,
                old_text="12\n13\n14\n15\n16\n17\n18\n",
                new_text="12\n13\n14\n1five\n16\n17\n18\n",
            ),
            FileDiff(
                path=path,
                old_text="22\n23\n24\n25\n26\n27\n28\n",
                new_text="22\n23\n24\n2five\n26\n27\n28\n",
            ),
        ],
    )


async def test_an_editor_that_only_writes_gets_the_text_without_the_bom(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    path = workspace.put("a.txt", codecs.BOM_UTF8 + b"old\r\n")
    editor = FakeEditorFiles(can_read=False)
    workspace.files = editor
    await run(
        registry, workspace, "edit", {"path": "a.txt", "old_string": "old", "new_string": "new"}
    )
    assert editor.writes == [(path, "new\r\n")]
    assert workspace.get("a.txt") == codecs.BOM_UTF8 + b"old\r\n"


async def test_a_change_between_reading_and_replacing_fails_and_is_kept(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace.put("log.txt", "counter 0\n")
    real_plan = edit_module._plan

    def plan_while_another_program_appends(*args: Any, **kwargs: Any) -> Any:
        with open(workspace.path("log.txt"), "a") as appender:  # after the read, before the write
            appender.write("appended\n")
        return real_plan(*args, **kwargs)

    monkeypatch.setattr(edit_module, "_plan", plan_while_another_program_appends)
    result = await run(
        registry, workspace, "edit", {"path": "log.txt", "old_string": "0", "new_string": "1"}
    )
    code, message = failure(result)
    assert code == "FILE_CHANGED"
    assert "the file changed; read it again" in message
    assert workspace.get("log.txt") == b"counter 0\nappended\n"


async def test_a_latin1_file_is_edited_in_latin1(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("l.txt", "déjà vu\n".encode("latin-1"))
    result = await run(
        registry, workspace, "edit", {"path": "l.txt", "old_string": "déjà", "new_string": "là"}
    )
    assert meta(result)["encoding"] == "latin-1"
    assert workspace.get("l.txt") == "là vu\n".encode("latin-1")
    refused = await run(
        registry, workspace, "edit", {"path": "l.txt", "old_string": "là", "new_string": "→"}
    )
    assert failure(refused)[0] == "INVALID_ARGS"
    assert workspace.get("l.txt") == "là vu\n".encode("latin-1")


async def test_an_append_in_the_instant_of_the_replace_is_carried_over(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = workspace.put("log.txt", "counter 0\n")
    real_replace = os.replace

    def replace_while_another_program_appends(*args: Any, **kwargs: Any) -> None:
        with open(path, "a") as appender:  # after the last check: it lands in the old file
            appender.write("appended\n")
        real_replace(*args, **kwargs)

    monkeypatch.setattr(os, "replace", replace_while_another_program_appends)
    result = await run(
        registry, workspace, "edit", {"path": "log.txt", "old_string": "0", "new_string": "1"}
    )
    assert not result.is_error, result
    assert workspace.get("log.txt") == b"counter 1\nappended\n"


async def test_an_append_racing_an_atomic_save_does_not_land_in_the_other_programs_file(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As found: the tail was appended by opening the name again, after another program's
    atomic save had put its own file there."""
    path = workspace.put("notes.txt", "old\n")
    real_replace = os.replace

    def replace_then_another_program_saves(*args: Any, **kwargs: Any) -> None:
        with open(path, "ab") as appender:  # after the last check: it lands in the old file
            appender.write(b"LOGLINE\n")
        real_replace(*args, **kwargs)
        other = workspace.put("other.tmp", "EDITOR SAVE\n")
        real_replace(other, path)

    monkeypatch.setattr(os, "replace", replace_then_another_program_saves)
    result = await run(
        registry, workspace, "edit", {"path": "notes.txt", "old_string": "old", "new_string": "new"}
    )
    assert not result.is_error, result
    assert workspace.get("notes.txt") == b"EDITOR SAVE\n"


async def test_a_rewrite_in_place_racing_the_replace_is_not_taken_for_an_append(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As found: any growth of the replaced file was appended, so a tool that truncated and
    rewrote it in place got its new content's tail glued to the edit's."""
    path = workspace.put("m.py", "x = 1\n")
    held = os.open(path, os.O_WRONLY)  # a formatter that opened the file to rewrite it in place
    real_replace = os.replace

    def replace_while_a_tool_rewrites(*args: Any, **kwargs: Any) -> None:
        real_replace(*args, **kwargs)
        os.ftruncate(held, 0)
        os.pwrite(held, b"x = 1  # reformatted by tool\n", 0)

    monkeypatch.setattr(os, "replace", replace_while_a_tool_rewrites)
    try:
        result = await run(
            registry, workspace, "edit", {"path": "m.py", "old_string": "1", "new_string": "2"}
        )
    finally:
        os.close(held)
    assert not result.is_error, result
    assert workspace.get("m.py") == b"x = 2\n"


async def test_a_fifo_put_in_the_files_place_does_not_block_the_carry_over(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As found: the carry-over opened the name for writing; a FIFO there blocked forever."""
    path = workspace.put("log.txt", "counter 0\n")
    fifo = workspace.path("fifo")
    real_replace = os.replace

    def replace_then_a_fifo_takes_the_name(*args: Any, **kwargs: Any) -> None:
        with open(path, "a") as appender:
            appender.write("appended\n")
        real_replace(*args, **kwargs)
        os.mkfifo(fifo)
        real_replace(fifo, path)

    monkeypatch.setattr(os, "replace", replace_then_a_fifo_takes_the_name)
    try:
        result = await asyncio.wait_for(
            run(
                registry,
                workspace,
                "edit",
                {"path": "log.txt", "old_string": "0", "new_string": "1"},
            ),
            timeout=10,
        )
    finally:
        with contextlib.suppress(OSError):  # release a writer blocked on the FIFO, if any
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    assert not result.is_error, result
    assert stat.S_ISFIFO(os.lstat(path).st_mode)
