"""``bash``: output, exit status, live streaming, limits, timeouts, cancellation, no leftovers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal as signal_module

import pytest

from acp_sidecar.tools import (
    CancelSignal,
    TerminalCallView,
    TerminalResultView,
    ToolRegistry,
)
from acp_sidecar.tools.builtin.bash import (
    CARD_HEAD_CHARS,
    CARD_TAIL_CHARS,
    MODEL_OUTPUT_CHARS,
    bash_tool,
)
from acp_sidecar.tools.builtin.shell import process
from acp_sidecar.tools.builtin.shell.process import HeadTail
from tests.fakes import RecordingSink
from tests.results import failure, meta, outcome, text

from .helpers import Workspace, run


def gone(pid: int) -> bool:
    """The process no longer runs (a zombie waiting for a reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


async def test_stdout_and_stderr_are_combined_with_the_exit_code(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    result = await run(registry, workspace, "bash", {"command": "echo out; echo err >&2; exit 3"})
    assert text(result) == "out\nerr\n[Exit code 3]"
    assert result.meta == {
        "cwd": workspace.cwd,
        "exit_code": 3,
        "signal": None,
        "timed_out": False,
        "cancelled": False,
        "output": "out\nerr\n",
        "output_chars": 8,
    }


async def test_a_command_does_not_see_the_sidecars_api_key(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-for-commands")
    monkeypatch.setenv("ACP_SIDECAR_TEST_VISIBLE", "yes")
    result = await run(registry, workspace, "bash", {"command": "env"})
    assert "ACP_SIDECAR_TEST_VISIBLE=yes" in text(result)
    assert "sk-test-not-for-commands" not in text(result)


async def test_a_command_that_does_not_exist_is_a_result(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    result = await run(registry, workspace, "bash", {"command": "no-such-command-xyz --help"})
    assert not result.is_error
    assert text(result).endswith(
        "no-such-command-xyz: command not found\n[Exit code 127: command not found]"
    )
    assert meta(result)["exit_code"] == 127


async def test_stdin_is_closed_and_no_output_says_so(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    result = await run(registry, workspace, "bash", {"command": "cat", "timeout_ms": 10_000})
    assert text(result) == "(no output)\n[Exit code 0]"


async def test_it_runs_in_the_workspace_or_in_cwd(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    os.makedirs(workspace.path("sub", "dir"))
    result = await run(registry, workspace, "bash", {"command": "pwd"})
    assert text(result) == f"{workspace.cwd}\n[Exit code 0]"
    result = await run(registry, workspace, "bash", {"command": "pwd", "cwd": "sub/dir"})
    assert text(result) == f"{workspace.path('sub', 'dir')}\n[Exit code 0]"


async def test_it_leads_its_own_process_group(workspace: Workspace, registry: ToolRegistry) -> None:
    result = await run(
        registry, workspace, "bash", {"command": "echo $$; cut -d' ' -f5 /proc/$$/stat"}
    )
    pid, pgid = text(result).split("\n")[:2]
    assert pid == pgid
    assert int(pgid) != os.getpgid(0)


async def test_output_streams_live_while_it_runs(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    sink = RecordingSink()
    seen_while_running: list[str] = []

    async def watch() -> None:
        while not sink.chunks:
            await asyncio.sleep(0.01)
        seen_while_running.append(sink.streamed)

    watcher = asyncio.ensure_future(watch())
    result = await run(
        registry,
        workspace,
        "bash",
        {"command": "echo first; sleep 0.5; echo second"},
        progress=sink,
    )
    await watcher
    assert seen_while_running == ["first\n"]
    assert sink.streamed == "first\nsecond\n"
    assert text(result) == "first\nsecond\n[Exit code 0]"


async def test_multibyte_characters_split_across_reads_are_decoded(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    command = "printf '\\xc3'; sleep 0.2; printf '\\xa9\\xe2\\x82'; sleep 0.2; printf '\\xac\\n'"
    result = await run(registry, workspace, "bash", {"command": command})
    assert text(result) == "é€\n[Exit code 0]"


async def test_huge_output_is_capped_head_and_tail_and_the_card_starts_with_the_stream(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    sink = RecordingSink()
    command = "head -c 1500000 /dev/zero | tr '\\0' 'a'; printf 'THE END'"
    arguments = {"command": command}
    result = await run(registry, workspace, "bash", arguments, progress=sink)
    half = MODEL_OUTPUT_CHARS // 2
    cut = 1_500_007 - MODEL_OUTPUT_CHARS
    assert text(result) == (
        "a"
        * half
        + f"\n\n[… {cut:,} characters of output cut here: the first {half:,} and the last "
        f"{half:,} are shown …]\n\n" + "a" * (half - 7) + "THE END\n[Exit code 0]"
    )
    assert sink.streamed == "a" * CARD_HEAD_CHARS
    assert sink.texts == [
        "Output past the first 192 KiB is not shown live; its end will show when the command "
        "finishes."
    ]
    assert bash_tool.present_result is not None
    view = bash_tool.present_result(arguments, outcome(result))
    assert isinstance(view, TerminalResultView) and view.output is not None
    assert view.output.startswith(sink.streamed)
    card_cut = 1_500_007 - CARD_HEAD_CHARS - CARD_TAIL_CHARS
    assert view.output == (
        "a" * CARD_HEAD_CHARS
        + f"\n[… {card_cut:,} characters not shown …]\n"
        + "a" * (CARD_TAIL_CHARS - 7)
        + "THE END"
    )
    assert meta(result)["output_chars"] == 1_500_007


def test_head_tail_keeps_everything_below_its_bounds() -> None:
    kept = HeadTail(4, 4)
    assert [kept.feed(chunk) for chunk in ("ab", "cdef", "gh")] == ["ab", "cd", ""]
    assert kept.text(lambda cut: f"[{cut}]") == "abcdefgh"
    kept.feed("ijk")
    assert kept.text(lambda cut: f"[{cut}]") == "abcd[3]hijk"


# --- timeouts, cancellation, leftovers ---------------------------------------------------------


async def test_a_timeout_stops_the_command_and_says_so(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    arguments = {"command": "echo started; sleep 30", "timeout_ms": 300}
    result = await run(registry, workspace, "bash", arguments)
    assert text(result) == (
        "started\n[Timed out after 0.3 s: the command was stopped (signal SIGTERM).]"
    )
    assert (meta(result)["signal"], meta(result)["timed_out"]) == ("SIGTERM", True)
    assert bash_tool.present_result is not None
    assert bash_tool.present_result(arguments, outcome(result)) == TerminalResultView(
        card="terminal",
        output="started\n[Timed out after 0.3 s: the command was stopped (signal SIGTERM).]\n",
        signal="SIGTERM",
    )


async def test_a_command_that_ignores_sigterm_gets_sigkill(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    result = await run(
        registry, workspace, "bash", {"command": "trap '' TERM; sleep 30", "timeout_ms": 200}
    )
    assert (
        text(result)
        == "(no output)\n[Timed out after 0.2 s: the command was stopped (signal SIGKILL).]"
    )


async def test_cancellation_stops_the_command_and_returns_what_it_printed(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    signal = CancelSignal()
    asyncio.get_running_loop().call_later(0.4, signal.cancel, "session/cancel")
    # Had the cancel not stopped it, the command would end after 30 s with "[Exit code 0]".
    result = await run(
        registry, workspace, "bash", {"command": "echo working; sleep 30"}, signal=signal
    )
    assert text(result) == "working\n[Cancelled: the command was stopped (signal SIGTERM).]"
    assert meta(result)["cancelled"] is True


async def test_no_background_process_outlives_the_call(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    # The grandchild keeps the output pipe open and would otherwise run for a minute.
    command = "sleep 60 & echo $! > child.pid; (sleep 60; echo late) & echo spawned"
    async with asyncio.timeout(30):  # a hang guard: the grandchild holds the pipe for 60 s
        result = await run(registry, workspace, "bash", {"command": command})
    assert text(result) == "spawned\n[Exit code 0]"
    pid = int(workspace.get("child.pid"))
    for _ in range(100):
        if gone(pid):
            break
        await asyncio.sleep(0.02)
    assert gone(pid)


async def test_a_timed_out_command_leaves_no_grandchild(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    command = "bash -c 'trap \"\" TERM; sleep 60' & echo $! > child.pid; wait"
    await run(registry, workspace, "bash", {"command": command, "timeout_ms": 300})
    pid = int(workspace.get("child.pid"))
    await asyncio.sleep(0.05)
    assert gone(pid)


# --- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize("timeout_ms", [-5, 0, 3_600_001, 10**12])
async def test_a_negative_zero_or_absurd_timeout(
    workspace: Workspace, registry: ToolRegistry, timeout_ms: int
) -> None:
    result = await run(
        registry, workspace, "bash", {"command": "echo hi", "timeout_ms": timeout_ms}
    )
    assert failure(result) == (
        "INVALID_ARGS",
        "Invalid arguments:\n- /timeout_ms: must be between 1 and 3600000 (one hour), "
        f"got {timeout_ms}",
    )


async def test_an_empty_command(workspace: Workspace, registry: ToolRegistry) -> None:
    result = await run(registry, workspace, "bash", {"command": "  "})
    assert failure(result) == ("INVALID_ARGS", "Invalid arguments:\n- /command: must not be empty")


async def test_a_cwd_that_does_not_exist_or_is_a_file(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    result = await run(registry, workspace, "bash", {"command": "pwd", "cwd": "nope"})
    assert failure(result) == ("NOT_FOUND", "nope does not exist.")
    workspace.put("f.txt", "")
    result = await run(registry, workspace, "bash", {"command": "pwd", "cwd": "f.txt"})
    assert failure(result) == ("NOT_A_DIRECTORY", "f.txt is not a directory.")


# --- cards ------------------------------------------------------------------------------------


def test_the_call_card_is_a_terminal() -> None:
    assert bash_tool.present_call is not None
    arguments = {"command": "make test", "cwd": "sub", "description": "Run the tests"}
    assert bash_tool.present_call(arguments) == TerminalCallView(
        card="terminal",
        title="make test",
        description="Run the tests",
        cwd="sub",
        command="make test",
    )


async def test_the_result_card_is_rebuilt_from_meta(
    workspace: Workspace, registry: ToolRegistry
) -> None:
    arguments = {"command": "echo hi; exit 2"}
    result = await run(registry, workspace, "bash", arguments)
    assert bash_tool.present_result is not None
    view = bash_tool.present_result(arguments, outcome(result))
    assert view == bash_tool.present_result(arguments, outcome(result))
    assert view == TerminalResultView(card="terminal", output="hi\n", exit_code=2)
    error = await run(registry, workspace, "bash", {"command": "x", "timeout_ms": 0})
    assert bash_tool.present_result({"command": "x", "timeout_ms": 0}, outcome(error)) is None


async def test_a_process_that_left_the_group_cannot_hold_the_call(
    workspace: Workspace, registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    # setsid escapes the process group (as it would escape a terminal's job control); the
    # call still ends once the pipe has been silent, or read for long enough.
    monkeypatch.setattr(process, "DRAIN_MAX_S", 1.0)
    command = "setsid sh -c 'while :; do echo tick; sleep 0.1; done' & echo $! > escaped.pid"
    try:
        async with asyncio.timeout(30):  # a hang guard: the escaped loop never ends
            result = await run(registry, workspace, "bash", {"command": command})
        assert text(result).endswith("[Exit code 0]")
    finally:
        with contextlib.suppress(ProcessLookupError, ValueError, FileNotFoundError):
            os.kill(int(workspace.get("escaped.pid")), signal_module.SIGKILL)
