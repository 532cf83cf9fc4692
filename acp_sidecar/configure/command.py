"""``acp-sidecar configure``: read the file, get the answers (asked or from flags), check, write.

Whatever the exit status other than 0, the file is as it was; a file that cannot be read as a
config file is never overwritten. The key is never printed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Final, TextIO

from rich.console import Console
from rich.markup import escape

from acp_sidecar.configure.answers import Answers, KeyFromEnv, file_changes, key_value
from acp_sidecar.configure.checking import check_endpoint, show_checks
from acp_sidecar.configure.flags import (
    ConfigureOptions,
    UsageError,
    read_stdin_key,
    scripted_answers,
)
from acp_sidecar.configure.interactive import Flow
from acp_sidecar.console import output_console
from acp_sidecar.settings import (
    ConfigError,
    ConfigLocation,
    FileSettings,
    config_path,
    read_settings,
)
from acp_sidecar.settings.writing import save_settings
from acp_sidecar.text import shown_url

INTERRUPTED: Final = 130

PICKED_UP = "A running acp-sidecar reads it when the editor authenticates or opens a new session."


def run_configure(
    args: argparse.Namespace,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run ``configure`` with the parsed command line; returns the exit status."""
    stdin = sys.stdin if stdin is None else stdin
    console = output_console(stdout, highlight=False)
    errors = sys.stderr if stderr is None else stderr

    def fail(message: str, status: int = 1) -> int:
        errors.write(f"acp-sidecar configure: {message}\n")
        return status

    try:
        options = ConfigureOptions.from_args(args)
    except UsageError as exc:
        return fail(str(exc), 2)
    location = config_path(getattr(args, "config", None))
    try:
        # Not ``explicit``: a file named by --config that does not exist yet is created.
        file = read_settings(ConfigLocation(location.path, explicit=False))
    except ConfigError as exc:
        return fail(
            f"the config file cannot be used, so it was left as it is:\n{exc}\nFix the lines "
            "named above (or move the file away), or write another file with --config PATH."
        )
    try:
        current = location.path.read_text(encoding="utf-8") if file.exists else ""
    except (OSError, UnicodeDecodeError) as exc:
        return fail(f"{location.path} cannot be read: {exc}")
    terminal = stdin.isatty()
    if options.api_key_stdin and terminal:
        # Read from a terminal, the key would echo as it is typed.
        return fail(
            "--api-key-stdin reads the key from a pipe; in a terminal, leave it out and "
            "choose to store the key when asked (it is read without echo)",
            2,
        )
    scripted = options.non_interactive or options.api_key_stdin or not terminal
    try:
        if scripted:
            stdin_key = read_stdin_key(stdin.read()) if options.api_key_stdin else None
            answers = scripted_answers(options, file, stdin_key)
            if options.check and not _checked(console, answers):
                return fail(
                    "the endpoint check failed, so nothing was written. Fix what the checks "
                    "above say, or pass --no-check to write without checking."
                )
        else:
            flow = Flow(console, options, file, current)
            found = flow.run()
            if found is None:
                console.print("Nothing was written.")
                return 1
            answers = found
    except UsageError as exc:
        hint = "" if options.non_interactive else " (or run it in a terminal to be asked)"
        return fail(f"{exc}{hint}", 2)
    except KeyboardInterrupt:
        console.print()
        return fail("interrupted; nothing was written.", INTERRUPTED)
    except EOFError:
        console.print()
        return fail("input ended; nothing was written.")
    problem = _write(location.path, answers, file)
    if problem is not None:
        return fail(problem)
    console.print(f"Wrote {escape(str(location.path))}. {PICKED_UP}")
    if isinstance(answers.key, KeyFromEnv) and key_value(answers.key) is None:
        console.print(
            f"${answers.key.variable} is not set now: set it where your editor starts acp-sidecar."
        )
    for line in next_steps(location.path, named=location.explicit):
        console.print(line, markup=False)
    return 0


def next_steps(path: Path, *, named: bool) -> list[str]:
    """What to run after the file is written: ``doctor``, then the editor's entry (Zed's
    snippet, with ``--config`` when the file is not where the sidecar looks by itself)."""
    import json
    import shlex
    import shutil

    beside = Path(sys.executable).with_name("acp-sidecar")  # the installation running now
    command = str(beside) if beside.exists() else shutil.which("acp-sidecar") or "acp-sidecar"
    flags = ["--config", str(path)] if named else []
    doctor = shlex.join(["acp-sidecar", "doctor", *flags])
    entry = {"ACP Sidecar": {"type": "custom", "command": command, "args": flags}}
    return [
        f"Next: `{doctor}` checks what acp-sidecar will use; then add it to your editor. For "
        "Zed, in settings.json:",
        "  " + json.dumps({"agent_servers": entry}),
        'Other editors: see "Use it from an editor" in the README.',
    ]


def _checked(console: Console, answers: Answers) -> bool:
    shown = escape(shown_url(answers.base_url))
    console.print(f"Checking {escape(answers.model)} on {shown} …")
    report = check_endpoint(answers.base_url, answers.key, answers.model)
    show_checks(console, report)
    return bool(report.ok)


def _write(path: Path, answers: Answers, file: FileSettings) -> str | None:
    """Write the answers into the file; what went wrong, if anything (then it is as it was)."""
    changes, tables = file_changes(answers, file)
    try:
        save_settings(path, changes, tables)
    except ConfigError as exc:
        return f"the file would not be valid, so it was not written:\n{exc}"
    except OSError as exc:
        return f"{path} cannot be written: {exc.strerror or exc}"
    return None
