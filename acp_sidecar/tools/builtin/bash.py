"""``bash``: run a shell command in the workspace, streaming its output to a terminal card.

The live stream is exactly the head of the card's bounded copy, so the result's ``output``
always *starts with* what was streamed (the bridge sends only the rest). A non-zero exit is
a result, not an error.
"""

from __future__ import annotations

import contextlib
from typing import Annotated

import attrs

from acp_sidecar.tools.builtin.files.paths import resolve_path, workspace_root
from acp_sidecar.tools.builtin.files.textfile import require_directory
from acp_sidecar.tools.builtin.shell.jobs import JobTable, KeepRequest, jobs_of
from acp_sidecar.tools.builtin.shell.process import CommandOutcome, HeadTail, run_command
from acp_sidecar.tools.content import ToolOutput
from acp_sidecar.tools.context import tool_context
from acp_sidecar.tools.definition import define_tool
from acp_sidecar.tools.errors import ToolArgsError
from acp_sidecar.tools.execution import ToolExecution
from acp_sidecar.tools.json_values import JsonValue
from acp_sidecar.tools.presentation import TerminalCallView, TerminalResultView, ToolResult

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 3_600_000
MODEL_OUTPUT_CHARS = 1024 * 1024
"""The model-facing copy: half from the start, half from the end."""
CARD_HEAD_CHARS = 192 * 1024
"""The card copy's head, which is also all that is streamed live."""
CARD_TAIL_CHARS = 64 * 1024
"""The card copy's tail, sent with the result."""

START_WINDOW_S = 1.0
"""How long a ``background`` call shows the command's output before it returns (sooner when
the shell exits): an error at start (a typo, a port in use) reaches the model in the call."""

_HINTS = {126: "the command is not executable", 127: "command not found"}


@attrs.frozen
class BashArgs:
    """The parameters of ``bash``."""

    command: Annotated[
        str,
        "The command line, run with bash -c in a fresh non-interactive shell: stdin is "
        "closed, and no state (cd, variables) carries over to the next call.",
    ]
    cwd: Annotated[
        str | None,
        "The directory to run in, relative to the workspace root (default: the root).",
    ] = None
    timeout_ms: Annotated[
        int | None,
        f"Stop the command after this many milliseconds (default {DEFAULT_TIMEOUT_MS}, "
        f"maximum {MAX_TIMEOUT_MS}).",
    ] = None
    description: Annotated[
        str | None,
        "What the command does, in a few words, for the person watching (shown on the card).",
    ] = None
    background: Annotated[
        bool,
        "Keep the command running after the call returns, as a job of the session (a dev "
        "server, a watcher): the call returns after about a second with the output so far "
        "and the job's number; the timeout does not apply. The user sees the session's jobs "
        "and can stop them; they are stopped when the session closes.",
    ] = False


def _timeout_s(args: BashArgs) -> float:
    timeout_ms = DEFAULT_TIMEOUT_MS if args.timeout_ms is None else args.timeout_ms
    if not 1 <= timeout_ms <= MAX_TIMEOUT_MS:
        raise ToolArgsError(
            [f"/timeout_ms: must be between 1 and {MAX_TIMEOUT_MS} (one hour), got {timeout_ms}"]
        )
    return timeout_ms / 1000


def _seconds(timeout_s: float) -> str:
    return f"{timeout_s:g} s"


def _kept_line(number: int, jobs: JobTable) -> str:
    job = jobs.get(number)
    pid = f" (pid {job.running.pid})" if job is not None else ""
    return (
        f"[Still running as job {number}{pid}: it keeps running after this call, until the "
        f"user stops it (/kill {number}) or the session closes.]"
    )


def _ending(outcome: CommandOutcome, timeout_s: float) -> str:
    """How the command ended, for the model (one bracketed line)."""
    if outcome.timed_out:
        how = f"[Timed out after {_seconds(timeout_s)}: the command was stopped"
    elif outcome.cancelled:
        how = "[Cancelled: the command was stopped"
    elif outcome.signal is not None:
        return f"[Terminated by signal {outcome.signal}]"
    else:
        code = outcome.exit_code
        hint = _HINTS.get(code) if code is not None else None
        return f"[Exit code {code}{f': {hint}' if hint else ''}]"
    if outcome.signal is not None:
        return f"{how} (signal {outcome.signal}).]"
    return f"{how}; it exited with code {outcome.exit_code}.]"


def _model_note(cut: int) -> str:
    half = MODEL_OUTPUT_CHARS // 2
    return (
        f"\n\n[… {cut:,} characters of output cut here: the first {half:,} and the last "
        f"{half:,} are shown …]\n\n"
    )


def _card_note(cut: int) -> str:
    return f"\n[… {cut:,} characters not shown …]\n"


async def execute_bash(args: BashArgs, execution: ToolExecution) -> ToolOutput:
    """Run one ``bash`` call."""
    if not args.command.strip():
        raise ToolArgsError(["/command: must not be empty"])
    timeout_s = _timeout_s(args)
    ctx = tool_context(execution)
    if args.cwd is None:
        cwd = workspace_root(ctx)
    else:
        directory = resolve_path(ctx, args.cwd, param="cwd")
        require_directory(directory)
        cwd = directory.path
    model = HeadTail(MODEL_OUTPUT_CHARS // 2, MODEL_OUTPUT_CHARS // 2)
    card = HeadTail(CARD_HEAD_CHARS, CARD_TAIL_CHARS)
    told: list[bool] = []

    async def on_output(text: str) -> None:
        model.feed(text)
        live = card.feed(text)
        if live:
            await execution.write_output(live)
        elif not told:
            told.append(True)
            await execution.report_progress(
                f"Output past the first {CARD_HEAD_CHARS // 1024} KiB is not shown live; "
                "its end will show when the command finishes."
            )

    jobs = jobs_of(ctx)
    if args.background and jobs is None:
        raise ToolArgsError(["/background: this call runs outside a session: no job can be kept"])
    keeping: contextlib.AbstractContextManager[KeepRequest | None] = (
        contextlib.nullcontext()
        if jobs is None
        else jobs.call(
            args.command,
            background=args.background,
            window=START_WINDOW_S,
            call_id=execution.call_id,
        )
    )
    with keeping as keeper:
        outcome = await run_command(
            args.command,
            cwd=cwd,
            timeout_s=MAX_TIMEOUT_MS / 1000 if args.background else timeout_s,
            signal=execution.signal,
            on_output=on_output,
            keeper=keeper,
        )
    if outcome.kept is not None and jobs is not None:
        ending = _kept_line(outcome.kept, jobs)
    else:
        ending = _ending(outcome, timeout_s)
    output = model.text(_model_note)
    text = f"{output}{'' if output.endswith(chr(10)) or not output else chr(10)}{ending}"
    if not output:
        text = f"(no output)\n{ending}"
    card_output = card.text(_card_note)
    if outcome.timed_out or outcome.cancelled or outcome.kept is not None:
        separator = "" if card_output.endswith("\n") or not card_output else "\n"
        card_output += f"{separator}{ending}\n"
    meta: dict[str, JsonValue] = {
        "cwd": cwd,
        "exit_code": outcome.exit_code,
        "signal": outcome.signal,
        "timed_out": outcome.timed_out,
        "cancelled": outcome.cancelled,
        "output": card_output,
        "output_chars": card.total,
    }
    if outcome.kept is not None:
        meta["job"] = outcome.kept
    return ToolOutput(text, meta=meta)


def present_bash_call(args: BashArgs) -> TerminalCallView:
    """The pending card: a terminal titled with the command, which it shows whole too."""
    return TerminalCallView(
        title=args.command, description=args.description, cwd=args.cwd, command=args.command
    )


def present_bash_result(args: BashArgs, result: ToolResult) -> TerminalResultView | None:
    """The completed card: the stored output and the exit code or signal, from meta."""
    meta = result.meta
    if result.is_error or not isinstance(meta, dict):
        return None
    output, exit_code, signal = meta.get("output"), meta.get("exit_code"), meta.get("signal")
    if not isinstance(output, str):
        return None
    job = meta.get("job")
    return TerminalResultView(
        title=f"{args.command} (kept running as job {job})" if type(job) is int else None,
        output=output,
        exit_code=exit_code if type(exit_code) is int else None,
        signal=signal if isinstance(signal, str) else None,
    )


bash_tool = define_tool(
    name="bash",
    description=(
        "Run a shell command (bash -c) in the workspace. It returns the combined stdout and "
        "stderr with the exit code. Each call is a fresh non-interactive shell with stdin "
        "closed: use non-interactive flags, and chain steps with && (cd does not persist; "
        "use cwd). The command and everything it starts is stopped at the timeout "
        f"(default {DEFAULT_TIMEOUT_MS // 1000} s) and when the user cancels, unless it runs "
        "with background: true (for servers and watchers only). Output beyond "
        f"{MODEL_OUTPUT_CHARS // (1024 * 1024)} MiB is cut in the middle. Prefer read, grep "
        "and glob to cat, grep and find."
    ),
    parameters=BashArgs,
    execute=execute_bash,
    present_call=present_bash_call,
    present_result=present_bash_result,
)
