"""``write``: atomic creation and replacement, what it keeps, its errors, the editor, its cards."""

from __future__ import annotations

import codecs
import errno
import os
import stat
from typing import Any

import pytest

from acp_sidecar.tools import DiffCallView, DiffResultView, FileDiff, ToolRegistry
from acp_sidecar.tools.builtin.files import atomic
from acp_sidecar.tools.builtin.write import write_tool
from tests.fakes import FakeEditorFiles
from tests.results import failure, meta, outcome, text

from .helpers import Workspace, deny_access, run, tree_bytes


async def test_creates_the_file_and_its_parents(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    result = await run(registry, workspace, "write", {"path": "a/b/c.txt", "content": "x\ny"})
    assert text(result) == "Created a/b/c.txt (2 lines)."
    assert workspace.get("a/b/c.txt") == b"x\ny"
    assert result.meta == {
        "path": workspace.path("a/b/c.txt"),
        "created": True,
        "hunks": ({"old_line": 1, "new_line": 1, "old_text": "", "new_text": "x\ny"},),
        "omitted_hunks": 0,
        "cut": False,
    }


async def test_a_new_file_gets_the_umask_mode(workspace: Workspace, registry: ToolRegistry) -> None:
    old = os.umask(0o022)
    try:
        await run(registry, workspace, "write", {"path": "n.txt", "content": ""})
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(workspace.path("n.txt")).st_mode) == 0o644


async def test_overwriting_keeps_mode_encoding_and_bom(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    path = workspace.put("run.sh", codecs.BOM_UTF8 + b"echo old\n")
    os.chmod(path, 0o751)
    result = await run(registry, workspace, "write", {"path": "run.sh", "content": "echo new\n"})
    assert text(result) == "Wrote run.sh (1 lines; it had 1)."
    assert workspace.get("run.sh") == codecs.BOM_UTF8 + b"echo new\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o751
    utf16 = workspace.put("u.txt", codecs.BOM_UTF16_BE + "old".encode("utf-16-be"))
    await run(registry, workspace, "write", {"path": "u.txt", "content": "nëw"})
    assert workspace.get("u.txt") == codecs.BOM_UTF16_BE + "nëw".encode("utf-16-be")
    assert sorted(os.listdir(os.path.dirname(utf16))) == ["run.sh", "u.txt"]  # no temporaries


async def test_writing_through_a_symlink_keeps_the_link(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("real.txt", "old")
    os.symlink("real.txt", workspace.path("link.txt"))
    await run(registry, workspace, "write", {"path": "link.txt", "content": "new"})
    assert os.path.islink(workspace.path("link.txt"))
    assert workspace.get("real.txt") == b"new"


async def test_the_same_content_changes_nothing(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    path = workspace.put("same.txt", "keep\n")
    os.utime(path, (1_000_000, 1_000_000))
    result = await run(registry, workspace, "write", {"path": "same.txt", "content": "keep\n"})
    assert text(result) == "same.txt already has this content (1 lines); nothing was changed."
    assert os.stat(path).st_mtime == 1_000_000


# --- bad input: and nothing lost -------------------------------------------------------------


async def test_a_directory(workspace: Workspace, registry: ToolRegistry) -> None:
    os.mkdir(workspace.path("src"))
    result = await run(registry, workspace, "write", {"path": "src", "content": "x"})
    assert failure(result) == (
        "IS_DIRECTORY",
        "src is a directory, not a file. Use glob to list its files.",
    )
    assert os.path.isdir(workspace.path("src"))


async def test_a_binary_file_is_not_overwritten(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("blob.bin", b"\x00\x01\x02")
    result = await run(registry, workspace, "write", {"path": "blob.bin", "content": "text"})
    assert failure(result) == (
        "BINARY_FILE",
        "blob.bin is a binary file; only text files can be overwritten.",
    )
    assert workspace.get("blob.bin") == b"\x00\x01\x02"


async def test_a_parent_that_is_a_file(workspace: Workspace, registry: ToolRegistry) -> None:
    workspace.put("notes", "a file\n")
    result = await run(registry, workspace, "write", {"path": "notes/today.md", "content": "x"})
    assert failure(result) == (
        "NOT_A_DIRECTORY",
        "Cannot create notes/today.md: part of its parent path is a file, not a directory.",
    )
    assert workspace.get("notes") == b"a file\n"


async def test_permission_denied_leaves_the_file(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = workspace.put("locked/a.txt", "original\n")
    deny_access(monkeypatch, path, write=True)
    result = await run(registry, workspace, "write", {"path": "locked/a.txt", "content": "new"})
    assert failure(result) == (
        "PERMISSION_DENIED",
        "Permission denied: cannot write in the directory of locked/a.txt.",
    )
    monkeypatch.undo()
    os.chmod(os.path.dirname(path), 0o755)
    assert workspace.get("locked/a.txt") == b"original\n"
    assert os.listdir(os.path.dirname(path)) == ["a.txt"]


async def test_a_read_only_file_is_not_replaced(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = workspace.put("ro.txt", "original\n")
    os.chmod(path, 0o444)
    real_access = os.access
    # root passes every access check; answer as the OS would for anyone else

    def access(p: str, mode: int, **kwargs: Any) -> bool:
        dir_fd = kwargs.get("dir_fd")  # the tools check relative to the directory's descriptor
        full = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), p) if dir_fd else p
        return False if full == path and mode == os.W_OK else real_access(p, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)
    result = await run(registry, workspace, "write", {"path": "ro.txt", "content": "new"})
    assert failure(result) == ("PERMISSION_DENIED", "Permission denied: ro.txt is read-only.")
    assert workspace.get("ro.txt") == b"original\n"


async def test_a_write_that_fails_midway_leaves_the_original_byte_for_byte(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = bytes(range(1, 256)).replace(b"\x00", b"") * 1000 + b"\xff\xfe trailing\r\n"
    workspace.put("data.txt", original)
    before = tree_bytes(workspace.cwd)
    real_write_all = atomic._write_all

    def half_then_full_disk(fd: int, chunks: atomic.Chunks) -> None:
        data = b"".join(chunks)
        real_write_all(fd, [data[: len(data) // 2]])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic, "_write_all", half_then_full_disk)
    result = await run(
        registry, workspace, "write", {"path": "data.txt", "content": "new\n" * 9999}
    )
    assert failure(result) == (
        "IO_ERROR",
        "Cannot write data.txt: no space left on device. The file was left unchanged.",
    )
    assert tree_bytes(workspace.cwd) == before  # the original, and no temporary left behind


# --- the editor -------------------------------------------------------------------------------


async def test_the_editor_writes_and_its_buffer_is_the_before_image(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    path = workspace.put("a.txt", "on disk\n")
    editor = FakeEditorFiles({path: "unsaved\n"})
    workspace.files = editor
    result = await run(registry, workspace, "write", {"path": "a.txt", "content": "new\n"})
    assert not result.is_error
    assert editor.writes == [(path, "new\n")]
    assert workspace.get("a.txt") == b"on disk\n"  # the editor saves, not us
    assert meta(result)["hunks"][0]["old_text"] == "unsaved\n"


async def test_an_editor_that_only_writes_gets_the_disk_before_image(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    path = workspace.put("a.txt", "on disk\n")
    editor = FakeEditorFiles(can_read=False)
    workspace.files = editor
    result = await run(registry, workspace, "write", {"path": "n/new.txt", "content": "x"})
    assert editor.writes == [(workspace.path("n/new.txt"), "x")]
    assert os.path.isdir(workspace.path("n"))  # parents exist for the editor to save into
    result = await run(registry, workspace, "write", {"path": "a.txt", "content": "y"})
    assert meta(result)["hunks"][0]["old_text"] == "on disk\n"
    assert editor.reads == [] and path


async def test_an_editor_write_failure_is_reported(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    workspace.put("a.txt", "keep\n")
    editor = FakeEditorFiles(can_read=False)
    editor.fail = ConnectionError("client went away")
    workspace.files = editor
    result = await run(registry, workspace, "write", {"path": "a.txt", "content": "x"})
    assert failure(result) == (
        "EDITOR_FS_FAILED",
        "The editor could not write a.txt: client went away",
    )
    assert workspace.get("a.txt") == b"keep\n"


# --- cards ------------------------------------------------------------------------------------


def test_the_call_card_is_a_new_file_diff() -> None:
    assert write_tool.present_call is not None
    view = write_tool.present_call({"path": "a.txt", "content": "hi\n"})
    assert view == DiffCallView(
        card="diff",
        title="Write a.txt",
        diffs=[FileDiff(path="a.txt", old_text=None, new_text="hi\n")],
    )


async def test_the_result_card_shows_the_real_before_image(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    path = workspace.put("a.txt", "old\n")
    arguments = {"path": "a.txt", "content": "new\n"}
    result = await run(registry, workspace, "write", arguments)
    assert write_tool.present_result is not None
    view = write_tool.present_result(arguments, outcome(result))
    assert view == write_tool.present_result(arguments, outcome(result))
    assert view == DiffResultView(
        card="diff", diffs=[FileDiff(path=path, old_text="old\n", new_text="new\n")]
    )
    created = await run(registry, workspace, "write", {"path": "b.txt", "content": "b"})
    assert write_tool.present_result({"path": "b.txt", "content": "b"}, outcome(created)) == (
        DiffResultView(
            card="diff", diffs=[FileDiff(path=workspace.path("b.txt"), old_text=None, new_text="b")]
        )
    )


async def test_a_large_rewrite_keeps_only_the_changed_regions_in_meta(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    lines = [f"line {i}\n" for i in range(40_000)]
    workspace.put("big.txt", "".join(lines))
    lines[20_000] = "changed\n"
    arguments = {"path": "big.txt", "content": "".join(lines)}
    result = await run(registry, workspace, "write", arguments)
    assert meta(result)["hunks"] == (
        {
            "old_line": 19_998,
            "new_line": 19_998,
            "old_text": "line 19997\nline 19998\nline 19999\nline 20000\nline 20001\n"
            "line 20002\nline 20003\n",
            "new_text": "line 19997\nline 19998\nline 19999\nchanged\nline 20001\n"
            "line 20002\nline 20003\n",
        },
    )


async def test_a_private_files_new_content_never_sits_in_a_wider_temporary(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As found: a 0600 file's new content was written to a 0644 temporary (umask 022)."""
    path = workspace.put(".env", "API_KEY=old\n")
    os.chmod(path, 0o600)
    modes: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:  # the content is complete; the rename has not happened yet
        modes.append(stat.S_IMODE(os.fstat(fd).st_mode))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    previous = os.umask(0o022)
    try:
        result = await run(
            registry, workspace, "write", {"path": ".env", "content": "API_KEY=secret\n"}
        )
    finally:
        os.umask(previous)
    assert not result.is_error, result
    assert modes == [0o600]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


async def test_what_read_showed_of_a_latin1_file_writes_back_byte_for_byte(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    """As found: one accidental valid UTF-8 pair (É + NBSP) made the file UTF-8 with U+FFFD
    for every other accent, and writing that back stored EF BF BD for each."""
    original = "Le café est prêt.\nCAFÉ\u00a0!\nÀ bientôt, élève.\n".encode("latin-1")
    workspace.put("menu.txt", original)
    shown = await run(registry, workspace, "read", {"path": "menu.txt"})
    lines = [line.split("\t", 1)[1] for line in text(shown).splitlines() if "\t" in line]
    content = "".join(f"{line}\n" for line in lines).replace("prêt", "prête")
    result = await run(registry, workspace, "write", {"path": "menu.txt", "content": content})
    assert not result.is_error, result
    assert workspace.get("menu.txt") == original.replace(b"pr\xeat", b"pr\xeate")
