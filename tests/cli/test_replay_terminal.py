"""``acp-sidecar replay`` in a terminal: a heading (title, models, times), every event the
log holds (a model switch, a compaction), no lone mode line at the end; what it says when it
is named a directory or a missing file; and a reader that goes away (``| head``) ends it
quietly.

In process (``main`` with captured output) but for the closed pipe, a property of the process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from acp_sidecar.cli import main
from acp_sidecar.store import CompactionRecord, SessionStore
from tests.export.sessions import write_sample_session

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "tests" / "fixtures" / "export" / "recorded.jsonl"


def replay(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["replay", *args, "--tools", "tests.tooling:TOOLS"])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(autouse=True)
def narrow_plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")


def test_the_transcript_opens_with_a_heading(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = replay(capsys, str(RECORDED), "--store", str(tmp_path))
    assert status == 0, err
    head = out.split("❯", 1)[0]
    assert head.lstrip().startswith("Add a greeting")
    for shown in (
        "Session",
        "f52802f0d5f54d399df156e60b510f5c",
        "test-model, big-model",
        "Started",
        "2026-12-01 13:14:22 UTC",
        "4 prompts · 11 tool calls (3 failed)",
    ):
        assert shown in head, shown


def test_a_model_switch_shows_and_no_mode_line_ends_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = replay(capsys, str(RECORDED), "--store", str(tmp_path))
    assert status == 0, err
    assert "Model switched to big-model" in out
    assert "Mode switched to auto" in out
    last = [line for line in out.splitlines() if line.strip()][-1]
    assert not last.startswith("mode:"), last
    assert "mode: ask" not in out


def test_a_compaction_shows_as_earlier_turns_summarised(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = SessionStore(tmp_path, fsync="never")
    with store.create("compacted", "/work") as writer:
        writer.user_message([{"type": "text", "text": "first"}])
        writer.agent_text("first answer")
        writer.end_turn("end_turn")
        writer.user_message([{"type": "text", "text": "second"}])
        writer.append(CompactionRecord(summary="The user said first.", turns=1))
        writer.end_turn("end_turn")
    status, out, err = replay(capsys, "compacted", "--store", str(tmp_path))
    assert status == 0, err
    assert "Earlier turns summarised" in out and "The user said first." in out
    assert out.index("❯ second") < out.index("Earlier turns summarised")


def test_prompts_are_shown_as_typed(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_sample_session(tmp_path)
    status, out, err = replay(capsys, str(path), "--store", str(tmp_path))
    assert status == 0, err
    assert "❯ Fix the failing test in `app.py`." in out


def test_a_directory_is_not_a_session_log(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = replay(capsys, str(tmp_path), "--store", str(tmp_path / "store"))
    assert status == 1 and out == ""
    assert err == (
        f"acp-sidecar: {tmp_path} is a directory, not a session log: name a log file "
        "(SESSION_ID.jsonl) or a stored session's id (acp-sidecar sessions lists them)\n"
    )


def test_a_missing_file_is_named_as_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "gone.jsonl"
    status, out, err = replay(capsys, str(missing), "--store", str(tmp_path / "store"))
    assert status == 1 and out == ""
    assert err == f"acp-sidecar: no such file: {missing}\n"


def test_an_unknown_id_says_where_it_was_looked_for(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    store = tmp_path / "store"
    status, out, err = replay(capsys, "no-such-session", "--store", str(store))
    assert status == 1 and out == ""
    assert err == (
        f"acp-sidecar: no stored session 'no-such-session' in {store} "
        "(acp-sidecar sessions lists them), nor a file of that name\n"
    )


def test_a_file_that_is_not_regular_is_named_as_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, out, err = replay(capsys, os.devnull, "--store", str(tmp_path / "store"))
    assert status == 1 and out == ""
    assert err == f"acp-sidecar: {os.devnull} is not a regular file, not a session log\n"


@pytest.mark.process
@pytest.mark.parametrize("form", [["--json"], []], ids=["json", "terminal"])
def test_a_reader_that_goes_away_ends_the_replay_quietly(tmp_path: Path, form: list[str]) -> None:
    """``replay … | head -1``: the first line read, the pipe closed. Status 1 (not all of it
    was read), as Python's documentation has it and rich ends the terminal form. The session
    is far longer than a pipe holds, so the replay is still writing when the reader goes."""
    store = SessionStore(tmp_path, fsync="never")
    with store.create("long", "/work") as writer:
        for n in range(2000):
            writer.user_message([{"type": "text", "text": f"prompt {n} " + "x" * 200}])
            writer.end_turn("end_turn")
    process = subprocess.Popen(
        [sys.executable, "-m", "acp_sidecar", "replay", "long", *form],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "ACP_SIDECAR_STORE": str(tmp_path), "COLUMNS": "100"},
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline()
    process.stdout.close()
    status = process.wait(timeout=60)
    err = process.stderr.read().decode()
    process.stderr.close()
    assert (err, status) == ("", 1)
