"""``read``: the window the model sees, its limits, its errors, the editor path, its cards."""

from __future__ import annotations

import asyncio
import codecs
import threading
from typing import Any

import pytest

from acp_sidecar.tools import (
    CancelSignal,
    FileLocation,
    GenericCallView,
    GenericResultView,
    ToolRegistry,
)
from acp_sidecar.tools.builtin import read as read_module
from acp_sidecar.tools.builtin.files import line_window
from acp_sidecar.tools.builtin.files.line_window import MAX_BYTES
from acp_sidecar.tools.builtin.files.paths import WorkspacePath
from acp_sidecar.tools.builtin.read import present_read_call, read_tool
from acp_sidecar.tools.errors import ToolCancelledError
from tests.fakes import FakeEditorFiles
from tests.results import failure, meta, outcome, text

from .helpers import Workspace, deny_access, run


async def test_lines_come_numbered(workspace: Workspace, registry: ToolRegistry) -> None:
    workspace.put("a.py", "import os\n\nprint(os.sep)\n")
    result = await run(registry, workspace, "read", {"path": "a.py"})
    assert text(result) == "     1\timport os\n     2\t\n     3\tprint(os.sep)"
    assert result.meta == {
        "path": workspace.path("a.py"),
        "start_line": 1,
        "end_line": 3,
        "total_lines": 3,
        "source": "disk",
    }


async def test_offset_and_limit_page_through_the_file(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("n.txt", "".join(f"line {i}\n" for i in range(1, 11)))
    result = await run(registry, workspace, "read", {"path": "n.txt", "offset": 4, "limit": 3})
    assert text(result) == (
        "     4\tline 4\n     5\tline 5\n     6\tline 6\n[Lines 4–6 of 10. Continue with offset=7.]"
    )
    result = await run(registry, workspace, "read", {"path": "n.txt", "offset": 9})
    assert text(result) == "     9\tline 9\n    10\tline 10\n[Lines 9–10 of 10; end of file.]"


async def test_at_most_2000_lines_per_call(workspace: Workspace, registry: ToolRegistry) -> None:
    workspace.put("big.txt", "x\n" * 5000)
    result = await run(registry, workspace, "read", {"path": "big.txt", "limit": 9000})
    body = text(result).split("\n")
    assert len(body) == 2001
    assert body[-1] == "[Lines 1–2000 of 5000. Continue with offset=2001.]"


async def test_at_most_256_kib_per_call(workspace: Workspace, registry: ToolRegistry) -> None:
    workspace.put("wide.txt", ("y" * 1000 + "\n") * 1000)
    result = await run(registry, workspace, "read", {"path": "wide.txt"})
    shown = text(result)
    assert len(shown.encode()) <= MAX_BYTES + 200  # 260 numbered lines of 1,008 bytes
    assert shown.endswith(
        "[Lines 1–260 of 1000 (the 256 KiB per-call limit was reached). Continue with offset=261.]"
    )


async def test_long_lines_are_cut_with_a_marker(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("min.js", "a" * 5000 + "\nshort\n")
    result = await run(registry, workspace, "read", {"path": "min.js"})
    assert text(result) == (
        f"     1\t{'a' * 2000} … [line cut: 5,000 characters]\n     2\tshort\n"
        "[1 line(s) longer than 2,000 characters were cut.]"
    )


async def test_crlf_and_a_utf8_bom_are_not_shown(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("w.txt", codecs.BOM_UTF8 + b"one\r\ntwo\r\n")
    result = await run(registry, workspace, "read", {"path": "w.txt"})
    assert text(result) == "     1\tone\n     2\ttwo"


async def test_utf16_with_a_bom_is_decoded_and_says_so(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("u.txt", codecs.BOM_UTF16_LE + "héllo\nwörld\n".encode("utf-16-le"))
    result = await run(registry, workspace, "read", {"path": "u.txt"})
    assert text(result) == "     1\théllo\n     2\twörld\n[Decoded from utf-16-le with BOM.]"


async def test_a_file_that_is_not_valid_utf8_as_a_whole_is_read_as_latin1(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    """Mixed bytes are shown as Latin-1, never as U+FFFD: what the model reads is exactly
    what a write of it stores (a write of U+FFFD would destroy the bytes)."""
    workspace.put("mixed.txt", "naïve\n".encode() + "café\n".encode("latin-1"))
    result = await run(registry, workspace, "read", {"path": "mixed.txt"})
    assert text(result) == "     1\tna\u00c3\u00afve\n     2\tcafé\n[Decoded from latin-1.]"


async def test_the_whole_file_decides_not_its_head(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    """As found: read decided on the first 8 KiB, write and edit on the whole file."""
    late = b"ascii\n" * 1500 + "café\n".encode("latin-1")  # ASCII head, Latin-1 after it
    workspace.put("late.txt", late)
    result = await run(registry, workspace, "read", {"path": "late.txt", "offset": 1501})
    assert text(result) == (
        "  1501\tcafé\n[Lines 1501–1501 of 1501; end of file.]\n[Decoded from latin-1.]"
    )
    # Latin-1 in the head, one accidental valid UTF-8 pair (É + NBSP = C9 A0) after it.
    pair = ("Grüße aus Köln\n" * 600).encode("latin-1") + "CAFÉ\u00a0!\n".encode("latin-1")
    workspace.put("pair.txt", pair)
    result = await run(registry, workspace, "read", {"path": "pair.txt", "offset": 601})
    assert text(result) == (
        "   601\tCAFÉ\u00a0!\n[Lines 601–601 of 601; end of file.]\n[Decoded from latin-1.]"
    )


async def test_a_latin1_file_is_decoded_as_latin1_and_says_so(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("latin1.txt", "café\n".encode("latin-1"))
    result = await run(registry, workspace, "read", {"path": "latin1.txt"})
    assert text(result) == "     1\tcafé\n[Decoded from latin-1.]"


async def test_an_empty_file_says_so(workspace: Workspace, registry: ToolRegistry) -> None:
    workspace.put("empty.txt", "")
    result = await run(registry, workspace, "read", {"path": "empty.txt"})
    assert text(result) == "[empty.txt is empty.]"
    assert meta(result)["total_lines"] == 0


async def test_a_huge_file_is_counted_without_being_shown(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("huge.log", b"entry\n" * 300_000 + b"no newline at the end")
    result = await run(registry, workspace, "read", {"path": "huge.log", "limit": 1})
    assert text(result) == "     1\tentry\n[Lines 1–1 of 300001. Continue with offset=2.]"


# --- bad input --------------------------------------------------------------------------------


async def test_a_nonexistent_path(workspace: Workspace, registry: ToolRegistry) -> None:
    result = await run(registry, workspace, "read", {"path": "src/missing.py"})
    assert failure(result) == ("NOT_FOUND", "src/missing.py does not exist.")


async def test_a_directory(workspace: Workspace, registry: ToolRegistry) -> None:
    workspace.put("src/a.py", "")
    result = await run(registry, workspace, "read", {"path": "src"})
    assert failure(result) == (
        "IS_DIRECTORY",
        "src is a directory, not a file. Use glob to list its files.",
    )


async def test_a_binary_file(workspace: Workspace, registry: ToolRegistry) -> None:
    workspace.put("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    result = await run(registry, workspace, "read", {"path": "logo.png"})
    assert failure(result) == (
        "BINARY_FILE",
        "logo.png is a binary file; only text files can be read.",
    )


async def test_permission_denied(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    deny_access(monkeypatch, workspace.put("secret.txt", "s\n"))
    result = await run(registry, workspace, "read", {"path": "secret.txt"})
    assert failure(result) == ("PERMISSION_DENIED", "Permission denied: cannot read secret.txt.")


@pytest.mark.parametrize(
    ("arguments", "violation"),
    [
        ({"offset": 0}, "/offset: must be 1 or more (lines are numbered from 1), got 0"),
        ({"offset": -3}, "/offset: must be 1 or more (lines are numbered from 1), got -3"),
        ({"limit": 0}, "/limit: must be 1 or more, got 0"),
        ({"offset": 5}, "/offset: 5 is past the end of two.txt, which has 2 lines"),
    ],
)
async def test_a_window_outside_the_file(
    workspace: Workspace, registry: ToolRegistry, arguments: dict[str, int], violation: str
) -> None:
    workspace.put("two.txt", "a\nb\n")
    result = await run(registry, workspace, "read", {"path": "two.txt", **arguments})
    assert failure(result) == ("INVALID_ARGS", f"Invalid arguments:\n- {violation}")


# --- the editor -------------------------------------------------------------------------------


async def test_the_editors_unsaved_buffer_is_what_is_read(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    path = workspace.put("a.py", "on disk\n")
    editor = FakeEditorFiles({path: "unsaved\nedit\n"})
    workspace.files = editor
    result = await run(registry, workspace, "read", {"path": "a.py"})
    assert text(result) == "     1\tunsaved\n     2\tedit"
    assert editor.reads == [path]
    assert meta(result)["source"] == "editor"


async def test_an_editor_that_cannot_read_is_not_asked(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("a.py", "on disk\n")
    editor = FakeEditorFiles(can_read=False)
    workspace.files = editor
    result = await run(registry, workspace, "read", {"path": "a.py"})
    assert text(result) == "     1\ton disk"
    assert editor.reads == []


async def test_a_binary_file_is_refused_before_asking_the_editor(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("blob.bin", b"\x00\x01")
    editor = FakeEditorFiles()
    workspace.files = editor
    result = await run(registry, workspace, "read", {"path": "blob.bin"})
    assert failure(result)[0] == "BINARY_FILE"
    assert editor.reads == []


async def test_an_editor_failure_is_reported(workspace: Workspace, registry: ToolRegistry) -> None:
    workspace.put("a.py", "x\n")
    editor = FakeEditorFiles()
    editor.fail = RuntimeError("buffer is locked")
    workspace.files = editor
    result = await run(registry, workspace, "read", {"path": "a.py"})
    assert failure(result) == (
        "EDITOR_FS_FAILED",
        "The editor could not read a.py: buffer is locked",
    )


# --- cards ------------------------------------------------------------------------------------


def test_the_call_card_is_a_read_with_a_location_at_the_first_line() -> None:
    assert read_tool.present_call is not None
    view = read_tool.present_call({"path": "src/a.py", "offset": 40, "limit": 10})
    assert view == GenericCallView(
        card="generic",
        title="Read src/a.py",
        kind="read",
        raw_input={"path": "src/a.py", "offset": 40, "limit": 10},
        locations=[FileLocation(path="src/a.py", line=40)],
    )


async def test_the_result_card_is_rebuilt_from_meta_alone(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("a.py", "1\n2\n3\n")
    arguments = {"path": "a.py", "offset": 2}
    result = await run(registry, workspace, "read", arguments)
    assert read_tool.present_result is not None
    first = read_tool.present_result(arguments, outcome(result))
    again = read_tool.present_result(arguments, outcome(result))
    assert first == again == GenericResultView(card="generic", title="Read a.py (lines 2–3 of 3)")


async def test_an_error_keeps_the_raw_result(workspace: Workspace, registry: ToolRegistry) -> None:
    result = await run(registry, workspace, "read", {"path": "missing"})
    assert read_tool.present_result is not None
    assert read_tool.present_result({"path": "missing"}, outcome(result)) is None


def test_the_call_presenter_defaults_to_line_1() -> None:
    from acp_sidecar.tools.builtin.read import ReadArgs

    assert present_read_call(ReadArgs(path="a")).locations == (FileLocation("a", 1),)


def test_the_disk_reader_checks_cancellation_inside_its_loop(workspace: Workspace) -> None:
    # A gigantic line is read a chunk at a time; cancellation is seen at the next chunk.
    path = workspace.put("huge.txt", b"a" * (8 * line_window.CHUNK_BYTES) + b"\n")
    target = WorkspacePath(path, path, "huge.txt", workspace.cwd, workspace.cwd)
    polls: list[int] = []

    def cancelled() -> bool:
        polls.append(1)
        return len(polls) > 3

    with pytest.raises(ToolCancelledError):
        line_window.read_disk(target, 1, 10, cancelled)
    assert len(polls) == 4


async def test_a_cancel_stops_the_reading_thread_at_its_next_chunk(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's cancel reaches the thread (not only the turn): the read ends cancelled
    at the poll after it, with the other chunks of many short lines unread."""
    workspace.put("many.txt", b"x\n" * (4 * line_window.CHUNK_BYTES))
    signal = CancelSignal()
    seen = threading.Event()
    signal.add_callback(lambda _reason: seen.set())
    loop = asyncio.get_running_loop()
    real = read_module.read_disk
    polls: list[bool] = []

    def reading(target: WorkspacePath, start: int, limit: int, cancelled: Any) -> Any:
        def polled() -> bool:
            if not polls:  # cancel on the loop, as session/cancel does, and wait for it
                loop.call_soon_threadsafe(signal.cancel, "session/cancel")
                assert seen.wait(30), "the cancel never arrived"
            polls.append(cancelled())
            return polls[-1]

        return real(target, start, limit, polled)

    monkeypatch.setattr(read_module, "read_disk", reading)
    result = await run(registry, workspace, "read", {"path": "many.txt"}, signal=signal)
    assert failure(result)[0] == "CANCELLED"
    assert polls == [True]
