"""The file tools' own disk I/O over the wire: hard links, huge lines, cancel, concurrent
writers, killed and failed writes, Latin-1 files, and the boundary on the editor's route.

Each test drives a sidecar in auto mode with slash commands: a subprocess where the test is
about the process (its peak memory, a SIGKILL, a file-size limit), else in process.
"""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from acp_sidecar.tools.builtin.files import leftovers
from tests.procfs import peak_rss

from .sidecar import auto_served, auto_sidecar, call, card_title, command

MiB = 1024 * 1024


def temporaries(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.endswith(".tmp"))


# --- hard links (issue 11, item 3) ------------------------------------------------------------


async def test_a_hard_linked_file_is_read_with_a_note_in_the_result_and_the_card(
    tmp_path: Path,
) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("outside content\n")
    os.link(outside / "secret.txt", workspace / "linked.txt")
    (workspace / "plain.txt").write_text("plain\n")
    async with auto_served(workspace) as sidecar:
        status, text = await call(sidecar, "/read linked.txt")
        assert status == "completed"
        assert "outside content" in text  # not refused: stores hard-link whole trees in
        assert "note: this file has 1 other link (hard links)" in text
        assert card_title(sidecar) == "Read linked.txt (lines 1–1 of 1; 1 other hard link)"
        status, text = await call(sidecar, "/read plain.txt")
        assert "note:" not in text
        assert card_title(sidecar) == "Read plain.txt (lines 1–1 of 1)"


async def test_writing_or_editing_a_hard_link_replaces_only_that_name(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "a.txt").write_text("outside a\n")
    (outside / "b.txt").write_text("outside b\n")
    os.link(outside / "a.txt", workspace / "a.txt")
    os.link(outside / "b.txt", workspace / "b.txt")
    async with auto_served(workspace) as sidecar:
        assert (await call(sidecar, command("write", path="a.txt", content="new a\n")))[
            0
        ] == "completed"
        edited = command("edit", path="b.txt", old_string="outside", new_string="edited")
        assert (await call(sidecar, edited))[0] == "completed"
    assert (workspace / "a.txt").read_text() == "new a\n"
    assert (workspace / "b.txt").read_text() == "edited b\n"
    assert (outside / "a.txt").read_text() == "outside a\n"
    assert (outside / "b.txt").read_text() == "outside b\n"
    assert os.stat(outside / "a.txt").st_nlink == os.stat(outside / "b.txt").st_nlink == 1


# --- memory per line and cancel in read (item 7) ----------------------------------------------


@pytest.mark.process
async def test_a_64_mib_line_is_read_with_bounded_memory(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with open(workspace / "long.txt", "wb") as f:
        f.write(b"first\n")
        for _ in range(64):
            f.write(b"a" * MiB)
        f.write(b"\nlast\n")
    async with auto_sidecar(workspace) as sidecar:
        before = peak_rss(sidecar.process.pid)
        status, text = await call(sidecar, "/read long.txt")
        grown = peak_rss(sidecar.process.pid) - before
    assert status == "completed"
    assert text.startswith("     1\tfirst\n     2\taaaa")
    assert "[line cut: 67,108,864 characters]\n     3\tlast" in text
    # The whole line would be 64 MiB as bytes and again as text; a chunk and a window are ~1.
    assert grown < 32 * MiB, f"peak RSS grew by {grown / MiB:.0f} MiB"


async def test_a_cancelled_read_stops_working_at_once(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with open(workspace / "many.txt", "wb") as f:
        for _ in range(128):
            f.write(b"x\n" * (MiB // 2))  # 64 Mi short lines
    async with auto_served(workspace) as sidecar:
        client = sidecar.client
        msg_id = await client.start_prompt(
            sidecar.session, command("read", path="many.txt", offset=10**9)
        )
        await asyncio.sleep(0.3)
        await client.notify("session/cancel", {"sessionId": sidecar.session})
        response = await client.next_response(msg_id, 60)
        assert response["result"]["stopReason"] in ("cancelled", "end_turn")
    # That the reading thread stops at its next chunk is pinned in process (test_read.py,
    # test_a_cancel_stops_the_reading_thread_at_its_next_chunk).


# --- concurrent writers and edit (item 18) ----------------------------------------------------


# Like ``echo ... >> log.txt`` in a loop: each line opens the file anew. (A writer that
# holds the file open across a replace writes to the old file; no atomic replace keeps that.)
_APPENDER = """
import os, sys, time
for i in range(int(sys.argv[2])):
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"appended %d\\n" % i)
    os.close(fd)
    time.sleep(0.003)
"""


@pytest.mark.process
async def test_edits_never_lose_lines_another_process_appends(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = workspace / "log.txt"
    # A big file widens the window between an edit's read and its replace, as on a slow disk.
    log.write_bytes(b"counter 0\n" + b"filler line\n" * (2 * MiB // 12))
    appended = 300
    async with auto_served(workspace) as sidecar:
        appender = subprocess.Popen([sys.executable, "-c", _APPENDER, str(log), str(appended)])
        counter, edits = 0, 0
        try:
            while True:
                running = appender.poll() is None
                status, text = await call(
                    sidecar,
                    command(
                        "edit",
                        path="log.txt",
                        old_string=f"counter {counter}\n",
                        new_string=f"counter {counter + 1}\n",
                    ),
                )
                edits += 1
                if status == "completed":
                    counter += 1
                else:
                    assert "the file changed; read it again" in text, text
                if not running:  # one more edit once the appender is done: it must succeed
                    assert status == "completed", text
                    break
        finally:
            appender.wait(30)
    content = log.read_text()
    lost = [i for i in range(appended) if f"appended {i}\n" not in content]
    assert lost == [], f"{len(lost)} appended lines lost in {edits} edits"
    assert content.startswith(f"counter {counter}\n")


# --- killed and failed writes (item 19) -------------------------------------------------------


async def _kill_mid_write(workspace: Path) -> bool:
    """Start a large write, SIGKILL the sidecar while its temporary exists; was one left?"""
    content = "x" * (48 * MiB - 1) + "\n"
    async with auto_sidecar(workspace) as sidecar:
        await sidecar.client.start_prompt(
            sidecar.session, command("write", path="big.txt", content=content)
        )
        deadline = time.monotonic() + 20
        while not temporaries(workspace) and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        sidecar.process.send_signal(signal.SIGKILL)
        await sidecar.process.wait()
    return bool(temporaries(workspace)) and not (workspace / "big.txt").exists()


@pytest.mark.process
async def test_a_killed_write_leaves_a_temporary_that_the_next_write_removes(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for _attempt in range(5):
        if await _kill_mid_write(workspace):
            break
        for name in temporaries(workspace):
            os.unlink(workspace / name)
        (workspace / "big.txt").unlink(missing_ok=True)
    else:
        raise AssertionError("the write always finished before the kill")
    killed = temporaries(workspace)
    # The killed write's pid is gone, but a gone pid alone proves nothing (the writer may be
    # on another machine or in a container): its temporary is stale once left for a while.
    untouched = time.time() - leftovers.DEAD_PID_SECONDS - 60
    for name in killed:
        os.utime(workspace / name, (untouched, untouched))
    # Beside it: a live writer's temporary (this process's pid, fresh), one of a pid gone
    # here but fresh (another machine's, filling now), an old pid-less one of an earlier
    # version (two hours old), a file that only looks similar, and a pid no system has.
    live = f".other.txt.{os.getpid()}-0123456789ab.tmp"
    remote = f".remote.txt.{_gone_pid()}-0123456789ab.tmp"
    old = ".older.txt.0123456789ab.tmp"
    huge = ".x.99999999999-abcdef012345.tmp"
    (workspace / live).write_text("in progress")
    (workspace / remote).write_text("in progress elsewhere")
    (workspace / old).write_text("left by an older version")
    (workspace / huge).write_text("")
    two_hours_ago = time.time() - 2 * leftovers.STALE_SECONDS
    os.utime(workspace / old, (two_hours_ago, two_hours_ago))
    (workspace / ".notes.tmp").write_text("not ours")
    async with auto_sidecar(workspace) as sidecar:
        status, text = await call(sidecar, command("write", path="small.txt", content="hi\n"))
    assert status == "completed", text
    assert temporaries(workspace) == sorted([live, remote, huge, ".notes.tmp"]), killed


def _gone_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


async def test_odd_and_long_names_break_no_write(tmp_path: Path) -> None:
    """As found: a name with an 11-digit pid failed every write in its directory
    (OverflowError), and a legal 240-byte name (120 × é) could not be written at all."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".x.99999999999-abcdef012345.tmp").write_text("")
    long = "é" * 120
    async with auto_served(workspace) as sidecar:
        for path in ("a.txt", long):
            status, text = await call(sidecar, command("write", path=path, content="hi\n"))
            assert status == "completed", text
            status, text = await call(
                sidecar, command("edit", path=path, old_string="hi", new_string="ho")
            )
            assert status == "completed", text
    assert (workspace / "a.txt").read_text() == "ho\n"
    assert (workspace / long).read_text() == "ho\n"


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (MiB, MiB))


@pytest.mark.process
async def test_a_failed_write_into_new_directories_removes_them(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "kept").mkdir()
    async with auto_sidecar(workspace, preexec_fn=_limit_file_size) as sidecar:
        big = "y" * (2 * MiB)
        status, text = await call(sidecar, command("write", path="new/deeper/big.txt", content=big))
        assert status == "failed"
        assert "File too large" in text
        status, text = await call(sidecar, command("write", path="kept/sub/big.txt", content=big))
        assert status == "failed"
    assert sorted(os.listdir(workspace)) == ["kept"]
    assert os.listdir(workspace / "kept") == []


# --- Latin-1 files (item 20) ------------------------------------------------------------------


async def test_a_latin1_file_stays_latin1_through_edit_and_write(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    menu = workspace / "menu.txt"
    menu.write_bytes("café crème\n".encode("latin-1"))
    async with auto_served(workspace) as sidecar:
        status, text = await call(sidecar, "/read menu.txt")
        assert text == "     1\tcafé crème\n[Decoded from latin-1.]"
        edit = command("edit", path="menu.txt", old_string="café", new_string="thé")
        assert (await call(sidecar, edit))[0] == "completed"
        assert menu.read_bytes() == "thé crème\n".encode("latin-1")
        write = command("write", path="menu.txt", content="crème brûlée\n")
        assert (await call(sidecar, write))[0] == "completed"
        assert menu.read_bytes() == "crème brûlée\n".encode("latin-1")
        euro = command("write", path="menu.txt", content="5 €\n")
        status, text = await call(sidecar, euro)
        assert status == "failed"
        assert "cannot be encoded as latin-1 (the file's encoding)" in text
        euro = command("edit", path="menu.txt", old_string="brûlée", new_string="€")
        status, text = await call(sidecar, euro)
        assert status == "failed"
        assert "cannot be encoded as latin-1 (the file's encoding)" in text
    assert menu.read_bytes() == "crème brûlée\n".encode("latin-1")


async def test_a_latin1_file_with_an_accidental_utf8_pair_round_trips(tmp_path: Path) -> None:
    """As found: "CAFÉ\u00a0!" is C9 A0, a valid UTF-8 pair, so the file counted as UTF-8;
    read showed U+FFFD for every other accent and a write of it stored EF BF BD for each. And
    read judged the first 8 KiB, write the whole file: a read-then-write converted it."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    menu = workspace / "menu.txt"
    head = "Grüße aus Köln\n" * 600  # over 8 KiB of Latin-1 before the pair
    original = (head + "Le café est prêt.\nCAFÉ\u00a0!\n").encode("latin-1")
    menu.write_bytes(original)
    async with auto_served(workspace) as sidecar:
        status, text = await call(sidecar, command("read", path="menu.txt", offset=601))
        assert text == (
            "   601\tLe café est prêt.\n   602\tCAFÉ\u00a0!\n"
            "[Lines 601–602 of 602; end of file.]\n[Decoded from latin-1.]"
        )
        edit = command("edit", path="menu.txt", old_string="prêt", new_string="prête")
        status, text = await call(sidecar, edit)
        assert status == "completed", text
        expected = original.replace("prêt".encode("latin-1"), "prête".encode("latin-1"))
        assert menu.read_bytes() == expected
        content = head + "Le café est prête.\nCAFÉ\u00a0!\nÀ bientôt.\n"
        status, text = await call(sidecar, command("write", path="menu.txt", content=content))
        assert status == "completed", text
    assert menu.read_bytes() == content.encode("latin-1")


# --- the editor's fs/* route ------------------------------------------------------------------


async def test_the_editors_route_still_checks_the_workspace_boundary(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    (workspace / "out").symlink_to(outside)
    fs = {"fs": {"readTextFile": True, "writeTextFile": True}}
    async with auto_served(workspace, capabilities=fs) as sidecar:
        for text in (
            "/read ../outside/secret.txt",
            "/read out/secret.txt",
            command("write", path="../outside/new.txt", content="x\n"),
            command("write", path="out/new.txt", content="x\n"),
            command("edit", path="out/secret.txt", old_string="secret", new_string="x"),
        ):
            status, result = await call(sidecar, text, timeout=10)
            assert status == "failed" and "outside the workspace" in result, result
        assert sidecar.client.agent_requests == []  # the editor was never asked
    assert sorted(os.listdir(outside)) == ["secret.txt"]
